"""Shared building blocks of the IR: the `component` decorator and the `Pattern` value.

Every component is a frozen dataclass whose `kind` is the HF JSON `"type"` it mirrors
(or an `Mnn*` name for the few things only MNN's runtime has).  Field names are the HF JSON keys,
so the `tokenizer.json` reader and writer are driven by the dataclass fields themselves."""

from __future__ import annotations

import _thread
from dataclasses import dataclass, fields
from operator import attrgetter
from typing import ClassVar

REGISTRIES: dict[str, dict[str, type]] = {}


def component(family: str, kind: str | None = None):
    """Class decorator: freeze the class and register it under `family` by its HF `type`."""

    def wrap(cls):
        # No slots: a second class per component costs start-up time.  eq/hash/repr: the shared ones
        # below, over the field names recorded here (generated per class, an `exec` each, they cost a
        # quarter of the IR's import: 18.8 -> 14.6 ms); `tests/ir/test_base.py` checks them
        # against generated ones.
        cls = dataclass(frozen=True, eq=False, repr=False)(cls)
        fs = fields(cls)
        cls._compared = staticmethod(_values(tuple(f.name for f in fs if f.compare)))
        cls._hashed = staticmethod(_values(tuple(f.name for f in fs if (f.compare if f.hash is None else f.hash))))
        cls._shown = tuple(f.name for f in fs if f.repr)
        cls.__eq__, cls.__hash__, cls.__repr__ = _eq, _hash, _repr
        cls.kind = kind or cls.__name__
        cls.family = family
        REGISTRIES.setdefault(family, {})[cls.kind] = cls
        return cls

    return wrap


# What `dataclass(frozen=True)` generates, written once: equal only to an instance of the same class
# with equal compared fields (a tuple comparison, as generated), hashed as the tuple of the hashed
# fields, shown as `Name(field=value!r, ...)` with "..." for a repr already running in this thread.

def _values(names: tuple[str, ...]):
    """obj -> the tuple of its `names` values (always a tuple, as the generated methods build)."""
    if len(names) > 1:
        return attrgetter(*names)
    if names:
        one = attrgetter(names[0])
        return lambda obj: (one(obj),)
    return lambda obj: ()


def _eq(self, other):
    if other.__class__ is self.__class__:
        return self._compared(self) == other._compared(other)
    return NotImplemented


def _hash(self):
    return hash(self._hashed(self))


_REPR_RUNNING: set[tuple[int, int]] = set()


def _repr(self):
    key = (id(self), _thread.get_ident())
    if key in _REPR_RUNNING:
        return "..."
    _REPR_RUNNING.add(key)
    try:
        return self.__class__.__qualname__ + "(" + ", ".join(f"{n}={getattr(self, n)!r}" for n in self._shown) + ")"
    finally:
        _REPR_RUNNING.discard(key)


def params(obj) -> dict:
    """The component's fields as a dict (children stay components)."""
    return {f.name: getattr(obj, f.name) for f in fields(obj)}


@dataclass(frozen=True, slots=True)
class Pattern:
    """An HF pattern: a literal `String` or an Oniguruma `Regex` (JSON `{"String": ...}`)."""

    value: str
    regex: bool = False

    kind: ClassVar[str] = "Pattern"

    def __str__(self) -> str:
        return f"/{self.value}/" if self.regex else repr(self.value)
