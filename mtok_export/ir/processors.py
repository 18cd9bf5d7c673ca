"""Post-processors (HF `tokenizers` processors), plus MNN's single-sequence op program."""

from __future__ import annotations

from dataclasses import dataclass

from .base import component

_r = component("post_processor")


@_r
class BertProcessing:
    sep: tuple[str, int] = ("[SEP]", 102)
    cls: tuple[str, int] = ("[CLS]", 101)


@_r
class RobertaProcessing:
    sep: tuple[str, int] = ("</s>", 2)
    cls: tuple[str, int] = ("<s>", 0)
    trim_offsets: bool = True
    add_prefix_space: bool = True


@_r
class ByteLevel:
    add_prefix_space: bool = True
    trim_offsets: bool = True
    use_regex: bool = True


@dataclass(frozen=True, slots=True)
class Piece:
    """One item of a template: `$A`/`$B` (`special=False`) or a special token by name."""

    id: str
    type_id: int = 0
    special: bool = False


@dataclass(frozen=True, slots=True)
class SpecialToken:
    id: str
    ids: tuple[int, ...]
    tokens: tuple[str, ...]


@_r
class TemplateProcessing:
    single: tuple[Piece, ...] = (Piece("A"),)
    pair: tuple[Piece, ...] = (Piece("A"), Piece("B", 1))
    special_tokens: tuple[SpecialToken, ...] = ()  # sorted by id (HF keeps a sorted map)

    def special_ids(self, name: str) -> tuple[int, ...]:
        for tok in self.special_tokens:
            if tok.id == name:
                return tok.ids
        raise KeyError(name)


@_r
class Sequence:
    processors: tuple = ()


SEQUENCE_A = None  # op 0 in an MnnPostProgram


@component("post_processor", "MnnPostProgram")
class PostProgram:
    """Spec 2.9: ops applied by MNN HEAD around the whole id list (prefix ids included).
    `None` is the encoded sequence (op 0), an int is a token id (op 1)."""

    ops: tuple[int | None, ...] = ()
