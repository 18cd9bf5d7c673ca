"""`dump.sanitize.show`: token text shown once escaped, whatever a terminal would make of it."""

from __future__ import annotations

from mtok_export.dump.sanitize import show


def test_show_escapes_text_that_is_not_nfc():
    # Conjoining jamo look like the composed syllable on a terminal; NFC text is left alone.
    assert show("\u1100\u1161") == r"\u1100\u1161"
    assert show("\uac00 e\u0301") == "\uac00 e\\u0301"
    assert show("\uac00 \u00e9 a\\b") == "\uac00 \u00e9 a\\b"
    assert show("a\nb\u200b") == r"a\nb\u200b"
