"""Strip (`lower.normalizers`): MNN 3.6.1 reads strip_left only (tests/test_targets.py shows the runtime
keeping trailing whitespace).  strip_right is a `strip-right` loss, projected by the runtime's
normalizer model (`verify.emulate`), which keeps trailing whitespace; the generated zoo's Strip shapes
ended in exit 1 on every text ending in a newline before."""

from __future__ import annotations

import pytest

from mtok_export import losses as L
from mtok_export.ir import Tokenizer
from mtok_export.ir import models as M
from mtok_export.ir import normalizers as N
from mtok_export.lower import lower
from mtok_export.targets import DEFAULT, TARGETS
from mtok_export.verify import emulate


@pytest.mark.parametrize("left, right", [(True, True), (False, True), (True, False), (False, False)])
def test_strip_right_is_a_loss_and_the_model_keeps_trailing_whitespace(left, right):
    tok = Tokenizer(model=M.WordPiece({"[UNK]": 0, "a": 1}), normalizer=N.Strip(left, right))
    low, lw = lower(tok, TARGETS[DEFAULT])
    assert (L.STRIP_RIGHT in {x.kind for x in lw.losses}) == right
    assert low.normalizer == N.Strip(left, right)  # written as it is
    assert emulate.normalize(low.normalizer, "  a \n") == ("a \n" if left else "  a \n")
