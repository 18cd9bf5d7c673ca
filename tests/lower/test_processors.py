"""The post-processor split (`lower.processors.single_parts`): the prefix and suffix around the
sequence, and what it drops."""

from __future__ import annotations

import pytest

from mtok_export import losses as L
from mtok_export.ir import processors as R
from mtok_export.lower import Lowering
from mtok_export.lower.processors import single_parts, single_prefix, split_single
from mtok_export.targets import DEFAULT, TARGETS


def _template(*names, ids=None):
    ids = ids or {"<s>": 1, "</s>": 2}
    pieces = tuple(R.Piece(n) if n in ("A", "B") else R.Piece(n, 0, True) for n in names)
    return R.TemplateProcessing(single=pieces, special_tokens=tuple(
        R.SpecialToken(n, (i,), (n,)) for n, i in ids.items()))


def test_single_parts_splits_around_the_sequence():
    assert single_parts(_template("<s>", "A", "</s>")) == (((1,), (2,)), [])
    assert single_prefix(_template("<s>", "A")) == (1,)
    assert single_parts(None) == (((), ()), []) and single_prefix(None) == ()
    assert single_parts(R.BertProcessing(("[SEP]", 102), ("[CLS]", 101)))[0] == ((101,), (102,))
    seq = R.Sequence((R.ByteLevel(), _template("<s>", "A")))
    assert single_parts(seq)[0] == ((1,), ())


@pytest.mark.parametrize("post, where, why", [
    (_template("A", "A"), "$.post_processor.single", "$A exactly once"),
    (R.Sequence((_template("<s>", "A"), _template("A", "</s>"))), "$.post_processor",
     "more than one child adds tokens"),
])
def test_single_parts_reports_what_it_drops(post, where, why):
    parts, dropped = single_parts(post)
    assert parts is None and single_prefix(post) == ()
    assert [(jp, why in reason) for _, jp, reason in dropped] == [(where, True)]
    lw = Lowering(TARGETS[DEFAULT])
    assert split_single(lw, post, "$.post_processor") is None
    assert [(x.kind, x.json_path) for x in lw.losses] == [(L.POST_DROPPED, where)]


def test_split_single_records_nothing_for_a_clean_split():
    lw = Lowering(TARGETS[DEFAULT])
    assert split_single(lw, _template("<s>", "A"), "$.post_processor") == ((1,), ())
    assert lw.losses == []
