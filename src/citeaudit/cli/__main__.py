"""`python -m citeaudit.cli`: the command line."""

from citeaudit.cli import main

main()
