"""The spec's 2.10 worked example as bytes written by hand (`hx`: an annotated hex dump whose offset
labels are checked), for the golden-bytes tests and for the CLI tests that need a file our writer
did not make."""

from __future__ import annotations

import re

_LABEL = re.compile(r"^\s*([0-9a-fA-F]{4}):")


def hx(text: str) -> bytes:
    """Hex dump -> bytes.  `# ...` is a comment; an optional `oooo:` label must equal the offset."""
    out = bytearray()
    for n, line in enumerate(text.splitlines(), 1):
        line = line.split("#", 1)[0]
        m = _LABEL.match(line)
        if m:
            assert int(m.group(1), 16) == len(out), f"line {n}: label {m.group(1)} but offset is {len(out):04x}"
            line = line[m.end():]
        out += bytes.fromhex("".join(line.split()))
    return bytes(out)


SPEC_2_10 = hx("""
0000: 34 33 30 20 34 0a  31 20 31 20 30 0a  33 20 33 0a   # "430 4\\n" "1 1 0\\n" "3 3\\n"
0010: 00                              # normalizer: none
0011: 00                              # pre_tokenizer: none
0012: 00 04000000 00 00 01000000      # BPE, vocab_size 4, byte_fallback 0, byte_level 0, 1 merge
001d: 0300 3c733e 03000000            # "<s>" -> 3 (0x3c sorts before 'a')
0026: 0100 61     00000000            # "a"   -> 0
002d: 0200 6162   02000000            # "ab"  -> 2
0035: 0100 62     01000000            # "b"   -> 1
003c: 00000000 01000000 00000000      # merge (0, 1) rank 0
0048: 00                              # decoder 0 = ByteLevel
0049: 01000000 03000000 01 00 00 0300 3c733e   # 1 added token: id 3, special, "<s>"
0059: 05000000 7b7b787d7d             # chat template "{{x}}"
0062: 0400 3c2f733e                   # eos "</s>"
0068: 01                              # flags: clean_up_tokenization_spaces
0069: 0300 3c733e                     # bos "<s>"
006e: 0200 01 03000000 00             # post program [SPECIAL 3, SEQUENCE_A]
0076:
""")
