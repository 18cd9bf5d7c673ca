"""Normalizers (HF `tokenizers` normalizers), plus the code-point map MNN's code 6 carries."""

from __future__ import annotations

from .base import Pattern, component

_n = component("normalizer")


@_n
class BertNormalizer:
    clean_text: bool = True
    handle_chinese_chars: bool = True
    strip_accents: bool | None = None  # None: follows `lowercase`, as in HF
    lowercase: bool = True


@_n
class Strip:
    strip_left: bool = True
    strip_right: bool = True


@_n
class StripAccents:
    pass


@_n
class NFC:
    pass


@_n
class NFD:
    pass


@_n
class NFKC:
    pass


@_n
class NFKD:
    pass


@_n
class Lowercase:
    pass


@_n
class Nmt:
    pass


@_n
class Precompiled:
    precompiled_charsmap: bytes = b""


@_n
class Replace:
    pattern: Pattern = Pattern("")
    content: str = ""


@_n
class Prepend:
    prepend: str = "\u2581"


@_n
class ByteLevel:
    pass


@_n
class Sequence:
    normalizers: tuple = ()



# --- MNN-only forms: what lowering produces for the runtime (spec 2.3) ---


@component("normalizer", "MnnCodepointMap")
class CodepointMap:
    """Code 6: a per-code-point replacement table; the runtime also maps control and zero-width
    characters to spaces whenever the table is non-empty (spec 2.3.2)."""

    entries: tuple[tuple[int, str], ...] = ()


@component("normalizer", "MnnBertNormalizer")
class MnnBertNormalizer:
    """Codes 5 and 7: BertNormalizer whose accent stripping uses `nfd_table` (code 7) or, without
    a table (code 5), never happens."""

    clean_text: bool = True
    handle_chinese_chars: bool = True
    strip_accents: bool = False
    lowercase: bool = True
    nfd_table: tuple[tuple[int, str], ...] | None = None
