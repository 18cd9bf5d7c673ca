"""The services several layers share: the IR walker (`ir.walk`), the post-processor split
(`lower.processors.single_parts`), the readers' stop ids and provenance (`readers.finish`) and the
runtime-vs-reference compare loop (`verify.check.compare` / `compare_texts`)."""

from __future__ import annotations

import dataclasses
from types import SimpleNamespace

import pytest

from mtok_export import losses as L
from mtok_export.corpus import Sample
from mtok_export.errors import UnsupportedError
from mtok_export.ir import REGISTRIES
from mtok_export.ir import decoders as D
from mtok_export.ir import normalizers as N
from mtok_export.ir import pre_tokenizers as P
from mtok_export.ir import processors as R
from mtok_export.ir.walk import CHILDREN, child_field, children, members, walk
from mtok_export.lower import Lowering
from mtok_export.lower.processors import single_parts, single_prefix, split_single
from mtok_export.readers.finish import provenance, stop_ids
from mtok_export.targets import DEFAULT, TARGETS
from mtok_export.verify.check import TEXT_CHECKS, Check, compare, compare_texts

# ------------------------------------------------------------------ ir.walk


def test_children_field_is_each_families_sequence_field():
    """CHILDREN names the one tuple field of every family's Sequence (what the tokenizer.json reader
    and writer recurse into); a renamed field would break both."""
    for family, name in CHILDREN.items():
        seq = REGISTRIES[family]["Sequence"]
        assert [f.name for f in dataclasses.fields(seq)] == [name], family


def test_walk_members_children_on_nested_sequences():
    inner = N.Sequence((N.NFC(), N.Lowercase()))
    outer = N.Sequence((N.Strip(), inner))
    assert list(walk(outer)) == [outer, N.Strip(), inner, N.NFC(), N.Lowercase()]
    assert children(outer) == (N.Strip(), inner) and members(outer) == (N.Strip(), inner)
    assert child_field(outer) == "normalizers" and child_field(N.NFC()) is None
    assert children(N.NFC()) == () and members(N.NFC()) == (N.NFC(),)
    assert list(walk(None)) == [] and members(None) == () and children(None) == ()
    empty = P.Sequence(())
    assert members(empty) == () and list(walk(empty)) == [empty]
    assert [type(c) for c in walk(D.Sequence((D.ByteLevel(), D.Fuse())))] == [D.Sequence, D.ByteLevel, D.Fuse]


# ------------------------------------------------------------------ lower.processors


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


# ------------------------------------------------------------------ readers.finish


def test_stop_ids_first_source_wins_in_order(tmp_path):
    ids = {"<eos>": 2, "<|im_end|>": 7, "<|eot_id|>": 9, "<stop>": 5}
    got = stop_ids(ids, (2, "eos_token"), tmp_path, {"eos_token_id": [2, 3]}, {"eos_token_id": 3},
                   extra=(("<stop>", "tekken stop"), ("<absent>", "x")))
    assert list(got.items()) == [(2, "eos_token"), (3, "generation_config.json eos_token_id"),
                                 (5, "tekken stop"), (7, "end-of-turn token <|im_end|>"),
                                 (9, "end-of-turn token <|eot_id|>")]
    assert stop_ids({}, None, tmp_path, {}, {}) == {}


def test_stop_ids_refuses_a_non_integer_eos_id(tmp_path):
    with pytest.raises(UnsupportedError, match="eos_token_id must be an integer"):
        stop_ids({}, None, tmp_path, {"eos_token_id": "2"}, {})


def test_provenance_lists_each_file_once_with_its_hash(tmp_path):
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_bytes(b"{}")
    b.write_bytes(b"")
    p = provenance([a, b, a])
    assert [f.path for f in p.inputs] == [str(a), str(b)]
    assert p.inputs[1].sha256 == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"  # empty


# ------------------------------------------------------------------ verify.check


def _sample(i, text="x"):
    return Sample(f"s{i}", text)


def test_compare_counts_and_records_losses_or_codes():
    c = Check("raw ids")
    assert compare(c, _sample(0), [1], [1], lambda: pytest.fail("explained a match")) is None
    loss = L.Loss(L.POST_DROPPED, "post_processor X", "$.post_processor", "why")
    assert compare(c, _sample(1), [1], [2], lambda: [loss]) == [loss]
    compare(c, _sample(2), "a", "b", lambda: ("type0-decode", "type0-decode"), slice="edge")
    compare(c, _sample(3), 0, 1)
    assert (c.ok, c.total) == (1, 4)
    got = [(m.sample, m.explanation, m.where, m.slice) for m in c.mismatches]
    assert got == [("s1", ("post-dropped",), ("$.post_processor",), "everyday"),
                   ("s2", ("type0-decode",), (), "edge"), ("s3", (), (), "everyday")]


def test_compare_texts_strips_only_the_prefix_the_runtime_added():
    samples = [_sample(0, "ab"), _sample(1, "ab"), _sample(2, "ab")]
    ref = SimpleNamespace(engine=[[1, 5, 6]] * 3, raw=[[5, 6]] * 3, decoded=["ab"] * 3)
    rt = SimpleNamespace(encodes=[[1, 5, 6], [5, 6], [1, 1, 5, 6]], decodes={5: b"a", 6: b"c"})
    seen = []

    def why(name):
        return lambda j, *args: seen.append((name, j)) or (f"{name}-{j}",)

    checks = {n: Check(n) for n in TEXT_CHECKS}
    compare_texts(checks, samples, rt, ref, [1], explain_raw=why("raw"), explain_engine=why("engine"),
                  explain_stream=why("stream"))
    raw, eng, stream = (checks[n] for n in TEXT_CHECKS)
    # sample 0 is exact; 1 lacks the prefix (raw equal, engine not); 2 has it twice (both differ)
    assert (raw.ok, eng.ok) == (2, 1) and [m.sample for m in raw.mismatches] == ["s2"]
    assert [m.got for m in raw.mismatches] == [[1, 5, 6]]
    assert [m.sample for m in eng.mismatches] == ["s1", "s2"]
    # the stream check joins the runtime's single-id decodes of the reference's raw ids: "ac" != "ab"
    assert stream.ok == 0 and stream.total == 3 and stream.mismatches[0].got == "ac"
    assert ("raw", 0) not in seen and ("raw", 2) in seen and ("engine", 1) in seen
