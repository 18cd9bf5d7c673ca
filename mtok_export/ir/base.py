"""Shared building blocks of the IR: the `component` decorator and the `Pattern` value.

Every component is a frozen, slotted dataclass whose `kind` is the HF JSON `"type"` it mirrors
(or an `Mnn*` name for the few things only MNN's runtime has).  Field names are the HF JSON keys,
so the `tokenizer.json` reader and writer are driven by the dataclass fields themselves."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import ClassVar

REGISTRIES: dict[str, dict[str, type]] = {}


def component(family: str, kind: str | None = None):
    """Class decorator: freeze the class and register it under `family` by its HF `type`."""

    def wrap(cls):
        cls = dataclass(frozen=True)(cls)  # no slots: a second class per component costs start-up time
        cls.kind = kind or cls.__name__
        cls.family = family
        REGISTRIES.setdefault(family, {})[cls.kind] = cls
        return cls

    return wrap


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
