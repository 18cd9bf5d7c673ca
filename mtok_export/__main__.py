"""`python -m mtok_export` is `mtok`."""

from .cli import main

main()
