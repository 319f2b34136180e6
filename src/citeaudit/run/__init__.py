"""A run: scored through one pipeline, recorded in a run log, and read back (compare, review, agree,
verify)."""
