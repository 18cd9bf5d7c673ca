"""Legacy `tokenizer.txt` type 1 (TIKTOKEN), spec section 5: reading.

Layout after the three header lines: line 4 `<vocab_len>`, then one line per id holding the
standard base64 of the token's bytes.

What MNN 3.4.1 does with it (`Tiktoken`, tokenizer.cpp/.hpp at tag 3.4.1):

* the header special ids whose token is non-empty are split out of the text first (at each byte
  position the first one in list order that matches);
* every other chunk is encoded by **greedy longest-prefix matching** over a byte trie of all
  lines (no split regex, no BPE merges); a byte no line starts with is skipped with an error
  message;
* `decode(id)` returns the token's bytes; the header prefix ids are prepended to every encode.

Runtime-faithful IR (`read_tiktoken_txt`): WordPiece over the GPT-2 byte characters with an empty
continuation prefix and no word limit (which is exactly greedy longest-prefix matching), behind
ByteLevel(use_regex=False) with a ByteLevel decoder; header special ids become special added
tokens, the prefix ids a TemplateProcessing `prefix... $A`.  A token listed twice keeps its first
id (the trie keeps the first); the later id still decodes to it in the runtime (noted).  Lines are
base64 as MNN 3.4.1 decodes it: characters outside the alphabet (including `=`, spaces, `\\r`) are
skipped and leftover bits dropped; `strict=True` makes a non-canonical line a `FormatError`
instead of a note.  A missing line, an empty token (the runtime's trie would then match the empty
string and loop forever), a count that is not a number or content after the last line is a
`FormatError` naming the line.

Writing: `legacy.text.format_token_lines` of what `lower.legacy.type1` plans (its docstring says
what the projection keeps)."""

from __future__ import annotations

from ..ir import Tokenizer
from ..ir import decoders as D
from ..ir import models as M
from ..ir import pre_tokenizers as P
from ..ir.byte_level import bytes_to_token
from ..mtok.constants import FileType
from ..mtok.header import read_header
from .text import NO_LIMIT, Body, added_from_header, finish, read_b64_lines, token_names

# WordPiece needs an unk name; the runtime skips unmatched bytes instead.  Raw spaces never occur in
# a byte-level vocabulary (a space byte is U+0120 there), so this name cannot shadow a real token.
GREEDY_UNK = " <unk> "
GREEDY_PRE = P.ByteLevel(add_prefix_space=False, trim_offsets=True, use_regex=False)


def read_tiktoken_txt(data: bytes, path=None, strict: bool = False) -> Tokenizer:
    kind, header, offset = read_header(data, path, expect=FileType.TIKTOKEN)
    body = Body(data, offset, path, "type 1")
    (n,) = body.ints("line 4 (vocabulary size)", 1)
    notes: list[str] = []
    tokens = read_b64_lines(body, n, strict, notes, allow_empty=False)
    vocab: dict[str, int] = {}
    dup = []
    for i, b in enumerate(tokens):
        t = bytes_to_token(b)
        if t in vocab:
            dup.append((i, vocab[t]))
        else:
            vocab[t] = i
    if dup:
        notes.append(f"{len(dup)} token(s) repeat an earlier one (e.g. id {dup[0][0]} = id {dup[0][1]}): encode "
                     "uses the first id; the runtime still decodes the later id")
    special, stop, prefix = header
    for i in (*special, *stop, *prefix):
        if i >= n:
            notes.append(f"header id {i} is beyond the {n} tokens: decodes to ''")
    added = added_from_header(special, {i: tokens[i] for i in special if i < n}, notes)
    return finish(model=M.WordPiece(vocab, GREEDY_UNK, "", NO_LIMIT), normalizer=None,
                  pre_tokenizer=GREEDY_PRE,
                  decoder=D.ByteLevel(), header=header, added=added, notes=notes,
                  names=token_names({i: tokens[i] for i in prefix if i < n}), path=path, data=data)
