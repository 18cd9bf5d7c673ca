"""The Unicode data the normalization tables are built from: the reference's version, not the
running Python's (DESIGN section 6; Python 3.11 ships Unicode 14.0, 3.13 15.1).

HF `tokenizers` 0.23 normalizes (NFC, NFD, NFKC, NFKD) with the crate `unicode-normalization-alignments`
0.1.12, whose tables are Unicode 9.0.0 (its `UNICODE_VERSION`).  The data comes from the
`unicodedataplus` package (pinned in pyproject.toml, its own Unicode version whatever Python runs); the
Unicode 9.0 forms are its forms for the code points assigned by 9.0 (its `age`), every later one left
as it is, which the reference does (its NFKC leaves U+1F16C, new in 12.0, where Python 3.11 writes
"MR").  By the Normalization Stability Policy a string of 9.0 characters normalizes the same in every
later version, so nothing else differs: `tests/unicode/test_tables.py` compares every code point
with `tokenizers`.

BertNormalizer's `strip_accents` drops nonspacing marks by the crate `unicode_categories` 0.1.1, whose
categories measure as Unicode 8.0: marks are taken as Mn in the data package and assigned by 8.0.  Six
code points changed category since (U+1734, U+1885, U+1886, U+A9BD, U+111C9, U+1171E) and differ from
the reference; the test lists them."""

from __future__ import annotations

from functools import lru_cache, partial
from itertools import repeat

VERSION = "9.0.0"  # Keep in sync with the crate tokenizers normalizes with (see above)
MARKS_VERSION = (8, 0)  # unicode_categories' nonspacing marks, as measured (see above)
_ASSIGNED_BY = tuple(int(x) for x in VERSION.split(".")[:2])


def _data():
    # unicodedataplus (~1 ms): only when a code point is looked up; `export --help` and a SentencePiece
    # export load this module without that
    import unicodedataplus

    return unicodedataplus


def data_version() -> str:
    """The data package and its Unicode version, e.g. "unicodedataplus 16.0.0"."""
    return f"unicodedataplus {_data().unidata_version}"


def tables_id() -> str:
    """What the tables depend on, for cache keys: the reference's version and the data's."""
    return f"{VERSION}+{_data().unidata_version}"


@lru_cache(maxsize=None)
def _age(age: str) -> tuple[int, int]:
    return (99, 0) if age == "Unassigned" else tuple(int(x) for x in age.split("."))


def known(c: str, by: tuple[int, int] = _ASSIGNED_BY) -> bool:
    """Whether code point `c` is assigned by Unicode `by` (the reference's version)."""
    return _age(_data().age(c)) <= by


def normalize_each(form: str, chars: list[str]) -> list[str]:
    """`form` ("NFC", "NFKC", "NFD", "NFKD" or "NFD-Mn") of each single code point of `chars` as the
    reference has it.  Whole lists through the data package's C functions: a table build walks
    1.1M code points."""
    u = _data()
    ages = list(map(u.age, chars))
    assigned = {a for a in set(ages) if _age(a) <= _ASSIGNED_BY}
    out = list(map(partial(u.normalize, "NFD" if form == "NFD-Mn" else form), chars))
    if form == "NFD-Mn":
        out = list(map(str.translate, out, repeat(_mark_deleter())))
    return [n if a in assigned else c for c, a, n in zip(chars, ages, out)]


@lru_cache(maxsize=1)
def _mark_deleter() -> dict[int, None]:
    """A `str.translate` table deleting strip_accents' nonspacing marks."""
    u = _data()
    cps = [cp for cp in range(0x110000) if not 0xD800 <= cp <= 0xDFFF]
    return {cp: None for cp, cat, age in zip(cps, map(u.category, map(chr, cps)), map(u.age, map(chr, cps)))
            if cat == "Mn" and _age(age) <= MARKS_VERSION}


def decomposition(c: str) -> str:
    """The UnicodeData decomposition field of `c` ("" for a code point the reference does not know)."""
    return _data().decomposition(c) if known(c) else ""


def nfc(s: str) -> str:
    """NFC of `s`, a string of code points the reference knows."""
    return _data().normalize("NFC", s)
