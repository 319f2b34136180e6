# The two commands a fresh machine needs: `make demo` and `make test`.
# `make demo DESK=1` then opens the audit desk on the same examples.
.PHONY: setup demo test

setup:
	@bash scripts/setup.sh

demo: setup
	.venv/bin/citeaudit examples $(if $(DESK),--desk)

test:
	@bash scripts/setup.sh --browser
	.venv/bin/python -m pytest -n 2 --dist loadgroup -q
