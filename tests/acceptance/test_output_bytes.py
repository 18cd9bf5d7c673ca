"""No output byte changes by accident: every writer's bytes for every input of the shared corpus,
its GGUF files and `samples/` equal the table in `tests/golden/output-digests.tsv` (see
`tests/support/output_digests.py`).  A lowering change that alters a file on purpose regenerates the table in
the same commit, and the commit says which rows changed and why."""

from __future__ import annotations

import pytest

from tests.support.marks import sweep_param
from tests.support.output_digests import SHARED, digests, inputs, load_golden

pytestmark = pytest.mark.skipif(not SHARED.is_dir(), reason="shared corpus not present")
GOLDEN = load_golden() if SHARED.is_dir() else {}
INPUTS = dict(inputs()) if SHARED.is_dir() else {}


def test_every_input_has_a_row():
    assert sorted(GOLDEN) == sorted(INPUTS)


@pytest.mark.parametrize("name", [sweep_param(name) for name in sorted(INPUTS)])
def test_output_bytes_unchanged(name):
    assert digests(INPUTS[name]) == GOLDEN[name]
