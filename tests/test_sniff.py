"""`sniff.looks_like`: what a file that is no tokenizer looks like, for the error that names it."""

from __future__ import annotations

import pytest

from mtok_export.sniff import looks_like


@pytest.mark.parametrize("head,want", [(b"", "an empty file"), (b"GGUF\x03\x00\x00\x00", "a GGUF file"),
                                       (b"\x1f\x8b\x08\x00", "gzip-compressed data"),
                                       (b'{"version": "1.0", "model": {}}', "a tokenizer.json"),
                                       (b'{"a": ["[", "x"], "b": 1}', "JSON with the keys a, b"),
                                       (b"hello world\nsecond", "text starting 'hello world'"),
                                       (bytes(range(256)), "binary data")])
def test_looks_like(head, want):
    assert looks_like(head).startswith(want)
