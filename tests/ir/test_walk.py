"""The IR walker (`ir.walk`): each family's sequence field, and members/children on nested sequences."""

from __future__ import annotations

import dataclasses

from mtok_export.ir import REGISTRIES
from mtok_export.ir import decoders as D
from mtok_export.ir import normalizers as N
from mtok_export.ir import pre_tokenizers as P
from mtok_export.ir.walk import CHILDREN, child_field, children, members, walk


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
