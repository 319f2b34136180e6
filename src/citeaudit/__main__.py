"""`python -m citeaudit`: the command line, as the `citeaudit` script."""

from citeaudit.cli import main

main(prog_name="citeaudit")
