# The two commands a fresh machine needs: `make demo` and `make test`.
.PHONY: setup demo test

setup:
	@bash scripts/setup.sh

demo: setup
	.venv/bin/citeaudit examples

test:
	@bash scripts/setup.sh --browser
	.venv/bin/python -m pytest -n 2 -q
