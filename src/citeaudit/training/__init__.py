"""Data for building and measuring model judges: readers for public human-labelled attribution sets."""

from .data import (
    DEFAULT_DATA_DIR,
    LABEL_MAPPING,
    export_validation_sets,
    load_all,
    normalise_claim,
    split_of,
    split_rows,
)

__all__ = [
    "DEFAULT_DATA_DIR", "LABEL_MAPPING", "export_validation_sets", "load_all", "normalise_claim",
    "split_of", "split_rows",
]
