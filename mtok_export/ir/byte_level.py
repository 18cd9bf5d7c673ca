"""The GPT-2 byte <-> character map of byte-level vocabularies (HF `ByteLevel`): every byte value
has one printable character, so a token's raw bytes are spelled as text.  Readers (vocab.json,
tiktoken, OpenAI BPE), the legacy `.txt` codecs and the runtime emulation all use it."""

from __future__ import annotations

from itertools import accumulate, chain


def _byte_chars() -> tuple[str, ...]:
    printable = [*range(0x21, 0x7F), *range(0xA1, 0xAD), *range(0xAE, 0x100)]
    out = {b: chr(b) for b in printable}
    extra = 0
    for b in range(256):
        if b not in out:
            out[b] = chr(0x100 + extra)
            extra += 1
    return tuple(out[b] for b in range(256))


BYTE_CHARS: tuple[str, ...] = _byte_chars()  # byte value -> GPT-2 character
CHAR_BYTES: dict[str, int] = {c: b for b, c in enumerate(BYTE_CHARS)}
_TO_CHARS = {b: c for b, c in enumerate(BYTE_CHARS)}  # str.translate table over latin-1 text
_LOW_BYTES = bytes(ord(c) & 0xFF for c in BYTE_CHARS)  # bytes.translate tables: each character's
_HIGH_BYTES = bytes(ord(c) >> 8 for c in BYTE_CHARS)  # UTF-16 code unit, low and high byte
# The inverse; characters below U+0100 that are no GPT-2 character become U+0100 so that the
# final latin-1 encode rejects them (translate does not re-map its own output).
_FROM_CHARS = {**{cp: "\u0100" for cp in range(256)}, **{ord(c): chr(b) for b, c in enumerate(BYTE_CHARS)}}


def bytes_to_token(b: bytes) -> str:
    """Raw bytes -> the GPT-2 byte-level vocabulary string."""
    return b.decode("latin-1").translate(_TO_CHARS)


def bytes_to_tokens(tokens: list[bytes]) -> list[str]:
    """`bytes_to_token` of each, all at once: the joined bytes become UTF-16 code units through two
    byte tables (a dict translate costs 40 ns a character), and as every byte is one character,
    each token is the slice of the whole at its byte offsets."""
    joined = b"".join(tokens)
    units = bytearray(2 * len(joined))
    units[0::2], units[1::2] = joined.translate(_LOW_BYTES), joined.translate(_HIGH_BYTES)
    text = units.decode("utf-16-le")
    ends = list(accumulate(map(len, tokens)))
    return list(map(text.__getitem__, map(slice, chain((0,), ends), ends)))


def token_to_bytes(token: str) -> bytes | None:
    """GPT-2 byte-level vocabulary string -> raw bytes, or None if it is not byte-level."""
    try:
        return token.translate(_FROM_CHARS).encode("latin-1")
    except UnicodeEncodeError:
        return None
