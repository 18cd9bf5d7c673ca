"""Lines tests want shown after the run (e.g. the conformance parity table): tests append them,
tests/conftest.py prints them once capture ends."""

SUMMARY: list[str] = []
