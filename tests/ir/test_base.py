"""The IR components' equality, hashing, repr and immutability (`ir/base.py` writes eq/hash/repr once
instead of generating them per class) behave exactly as `dataclass(frozen=True)`'s generated ones:
each component class is compared with a twin made by `dataclasses` from the same fields, on the
components of every sample tokenizer plus made-up values."""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import pytest

from mtok_export.formats import read_source
from mtok_export.ir import REGISTRIES, Pattern, params
from mtok_export.ir import decoders as D
from mtok_export.ir import models as M
from mtok_export.ir import normalizers as N
from mtok_export.ir import pre_tokenizers as P
from mtok_export.ir import processors as R
from mtok_export.ir.walk import walk

SAMPLES = Path(__file__).resolve().parents[2] / "samples"
CLASSES = [c for family in REGISTRIES.values() for c in family.values()]


def _twin_class(cls):
    spec = []
    for f in dataclasses.fields(cls):
        default = {"default": f.default} if f.default is not dataclasses.MISSING else \
            {"default_factory": f.default_factory} if f.default_factory is not dataclasses.MISSING else {}
        spec.append((f.name, f.type, dataclasses.field(compare=f.compare, hash=f.hash, repr=f.repr, **default)))
    return dataclasses.make_dataclass(cls.__qualname__, spec, frozen=True)


TWINS = {c: _twin_class(c) for c in CLASSES}


def twin(obj):
    return TWINS[type(obj)](**params(obj))


def _samples() -> list:
    found = []
    for d in sorted(SAMPLES.iterdir()):
        if d.is_dir() and d.name != "accept":
            tok = read_source(d)
            for root in (tok.normalizer, tok.pre_tokenizer, tok.decoder, tok.post_processor, tok.model):
                found.extend(walk(root) if root is not tok.model else [root])
    nan = float("nan")
    found += [N.Replace(Pattern("a"), "b"), N.Replace(Pattern("a", True), "b"), N.Replace(Pattern("a"), "c"),
              N.Sequence((N.NFC(), N.Lowercase())), N.Sequence((N.NFC(),)), N.Sequence(()), N.NFC(), N.NFKC(),
              P.Split(Pattern(r"\s+", True), "isolated"), P.ByteLevel(), P.ByteLevel(add_prefix_space=False),
              D.Strip(" ", 1, 0), D.Strip(" ", 1, 0), D.ByteFallback(), R.PostProgram((None, 1)),
              R.PostProgram((None, 1)), R.PostProgram(), M.Unigram((("a", nan), ("b", -1.0)), 0),
              M.Unigram((("a", nan), ("b", -1.0)), 0), M.WordLevel({"a": 0}, "a"), M.WordLevel({"a": 0}, "a")]
    return found


OBJECTS = _samples()


def _outcome(f):
    try:
        return ("ok", f())
    except Exception as e:  # noqa: BLE001  the same exception, type and message, is the point
        return (type(e).__name__, str(e))


def test_the_objects_cover_many_classes():
    assert len({type(o) for o in OBJECTS}) >= 20 and len(OBJECTS) >= 40


def test_repr_is_the_generated_one():
    for o in OBJECTS:
        assert repr(o) == repr(twin(o))


def test_hash_is_the_generated_one():
    hashable = 0
    for o in OBJECTS:
        mine, theirs = _outcome(lambda: hash(o)), _outcome(lambda: hash(twin(o)))
        assert mine == theirs, o
        hashable += mine[0] == "ok"
    assert 0 < hashable < len(OBJECTS)  # both outcomes are exercised (a dict vocab cannot be hashed)


def test_equality_is_the_generated_one():
    """Every pair of objects (same and different classes, equal and not), both directions, and
    `!=`; a NaN score shows the tuple comparison's identity rule is kept."""
    twins = [twin(o) for o in OBJECTS]
    equal_pairs = 0
    for a, ta in zip(OBJECTS, twins):
        for b, tb in zip(OBJECTS, twins):
            assert (a == b) == (ta == tb) and (a != b) == (ta != tb), (a, b)
            equal_pairs += a is not b and a == b
        assert a.__eq__(1) is NotImplemented and ta.__eq__(1) is NotImplemented
        assert a == a and (a == twin(a)) is False  # another class is never equal
    assert equal_pairs > 0
    u = M.Unigram((("a", float("nan")),))
    assert (u == M.Unigram(u.vocab)) == (twin(u) == TWINS[M.Unigram](u.vocab)) is True  # same NaN object
    assert M.Unigram((("a", math.nan),)) != M.Unigram((("a", float("nan")),))


def test_fields_left_out_of_comparison_stay_out():
    class_with_flags = [c for c in CLASSES if any(not f.compare or not f.repr or f.hash is not None
                                                  for f in dataclasses.fields(c))]
    # no component leaves a field out today; the shared methods read the flags all the same
    from mtok_export.ir.base import component

    @component("test-family", "Flags")
    class Flags:
        a: int = 0
        b: int = dataclasses.field(default=0, compare=False)
        c: int = dataclasses.field(default=0, repr=False)
        d: list = dataclasses.field(default_factory=list, hash=False)

    try:
        twin_cls = _twin_class(Flags)
        for x, y in [(Flags(1, 2, 3, [4]), Flags(1, 5, 3, [4])), (Flags(1, 2, 3, [4]), Flags(1, 2, 9, [4])),
                     (Flags(1), Flags(1, d=[1]))]:
            tx, ty = twin_cls(**params(x)), twin_cls(**params(y))
            assert (x == y) == (tx == ty) and repr(x) == repr(tx) and hash(x) == hash(tx)
        assert class_with_flags == []
    finally:
        from mtok_export.ir.base import REGISTRIES as R_

        del R_["test-family"]


def test_components_stay_frozen():
    for o in OBJECTS:
        for name in [f.name for f in dataclasses.fields(o)][:1] + ["not_a_field"]:
            with pytest.raises(dataclasses.FrozenInstanceError, match=f"cannot assign to field '{name}'"):
                setattr(o, name, 1)
            with pytest.raises(dataclasses.FrozenInstanceError, match=f"cannot delete field '{name}'"):
                delattr(o, name)
    assert dataclasses.replace(N.Strip(), strip_left=False) == N.Strip(False, True)
    assert dataclasses.is_dataclass(N.Strip) and N.Strip.__dataclass_params__.frozen


def test_a_repr_cycle_prints_dots():
    """The guard generated repr has: a (made-up) component holding itself."""
    s = N.Sequence(())
    object.__setattr__(s, "normalizers", (s,))
    t = TWINS[N.Sequence](())
    object.__setattr__(t, "normalizers", (t,))
    assert repr(s) == repr(t) == "Sequence(normalizers=(...,))"
