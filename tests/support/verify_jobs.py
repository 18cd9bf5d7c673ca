"""The options the verification tests give `verify.check.verify` (its `VerifyJob`): the corpus alone,
with no vocabulary sweep, no robustness phase and no time budget, so that a test runs only the
checks it is about (a sweep test asks for the sweep: `replace(CORPUS_ONLY, sweep=True)`).  An
export's defaults are `VerifyOptions()`'s."""

from __future__ import annotations

from mtok_export.job_options import VerifyOptions

CORPUS_ONLY = VerifyOptions(sweep=False, robust=None, seconds=0)
