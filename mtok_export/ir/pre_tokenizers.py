"""Pre-tokenizers (HF `tokenizers` pre_tokenizers)."""

from __future__ import annotations

from .base import Pattern, component

_p = component("pre_tokenizer")

# HF `SplitDelimiterBehavior` values, as serialized.
BEHAVIORS = ("Removed", "Isolated", "MergedWithPrevious", "MergedWithNext", "Contiguous")


@_p
class BertPreTokenizer:
    pass


@_p
class ByteLevel:
    add_prefix_space: bool = True
    trim_offsets: bool = True
    use_regex: bool = True


@_p
class CharDelimiterSplit:
    delimiter: str = " "


@_p
class Digits:
    individual_digits: bool = False


@_p
class FixedLength:
    length: int = 5


@_p
class Metaspace:
    replacement: str = "\u2581"
    prepend_scheme: str = "always"  # always | first | never
    split: bool = True


@_p
class Punctuation:
    behavior: str = "Isolated"


@_p
class Split:
    pattern: Pattern = Pattern("")
    behavior: str = "Isolated"
    invert: bool = False


@_p
class UnicodeScripts:
    pass


@_p
class Whitespace:
    pass


@_p
class WhitespaceSplit:
    pass


@_p
class Sequence:
    pretokenizers: tuple = ()
