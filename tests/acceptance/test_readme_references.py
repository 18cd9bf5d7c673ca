"""The README's table of references (which library each input format is verified against) is the
format registry's own: a row per listed format, its label and its `Reference.what`, in the registry's
order.  It was a hand-kept copy (issue 42); a new format, or a reference changed in its module, now
fails here until the README says it (print the table with `python -m tests.acceptance.test_readme_references`)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from mtok_export.formats import FORMATS

README = Path(__file__).resolve().parents[2] / "README.md"
INDENT = "  "  # the table sits in a list item


def table(formats=FORMATS) -> str:
    rows = ["| input | reference |", "|---|---|"]
    rows += [f"| {f.label} | {f.reference.what} |" for f in formats if f.label and f.reference is not None]
    return "\n".join(INDENT + r for r in rows)


def test_the_readme_table_is_the_registrys():
    assert table() in README.read_text(encoding="utf-8"), "README's reference table is stale; print it with " \
        "python -m tests.acceptance.test_readme_references"


def test_every_listed_format_has_a_row():
    listed = [f for f in FORMATS if f.label]
    assert all(f.reference is not None for f in listed)  # a listed format without a reference would have no row
    assert table().count("\n") == len(listed) + 1


def test_a_stale_table_is_caught():
    """The mutants: a reference reworded in its module, and a new format, are not in the README."""
    text = README.read_text(encoding="utf-8")
    reworded = [replace(f, reference=replace(f.reference, what=f.reference.what + " (v2)")) if f.name == "gguf" else f
                for f in FORMATS]
    added = list(FORMATS) + [replace(FORMATS[0], name="toy", label="toy vocab")]
    assert table(reworded) not in text and table(added) not in text


if __name__ == "__main__":
    print(table())
