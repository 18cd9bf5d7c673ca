"""`mtok doctor`: diagnose (and, with `--fix`, repair) a tokenizer file already deployed, made by
this tool or another (MNN's own exporter): `diagnosis` finds what is wrong and why, `static` the
checks that need no source, `causes` the words for each layer difference, `repair` the fix."""

from .diagnosis import Diagnosis, diagnose
from .finding import Finding

__all__ = ["Diagnosis", "Finding", "diagnose"]
