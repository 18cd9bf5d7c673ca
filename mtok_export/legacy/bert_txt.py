"""Legacy `tokenizer.txt` type 2 (BERT), spec section 5.

Layout after the three header lines: line 4 `<vocab_len>`, then one line per id holding the
standard base64 of the token's UTF-8 (same layout as type 1).

What MNN 3.4.1 does with it (`BertTokenizer`, tokenizer.cpp at tag 3.4.1):

* header special ids are split out first (as for every legacy type);
* the rest is cut into words: runs of ASCII letters and digits (lowercased with `tolower`), every
  other character alone (each non-ASCII UTF-8 character, each ASCII punctuation or control
  character); C-locale whitespace is dropped.  No Unicode lowercasing, no accent stripping, no
  control-character cleanup, no word-length limit;
* each word is looked up whole, else split greedily longest-first with a hard-coded `##` on
  continuation pieces; at a position nothing matches it emits the id of `[UNK]` (100 if the
  vocabulary has no `[UNK]`) after the pieces already found, and drops the rest of the word;
* `decode(id)` returns the raw token, `##` included.

Runtime-faithful IR (`read_bert_txt`): normalizer Sequence of 26 Replace (A-Z -> a-z), pre-tokenizer
Split(/[A-Za-z0-9]+|[^\\t\\n\\x0B\\f\\r ]/, Removed, invert) (each match is a word, the rest is
dropped), WordPiece(vocab, "[UNK]", "##", no limit), decoder Fuse (tokens joined as they are), header
specials as special added tokens, prefix ids as a TemplateProcessing.  One runtime behaviour has
no HF form and stays a note: the pieces found before an unmatchable position are kept (HF emits
only `[UNK]` for such a word).  Duplicate lines keep the first id.  Base64 is decoded as for
type 1 (lenient unless `strict`); missing lines, wrong counts and trailing content are
`FormatError`s naming the line.

Writing: `legacy.text.format_token_lines` of what `lower.legacy.type2` plans."""

from __future__ import annotations

from ..ir import Pattern, Tokenizer
from ..ir import decoders as D
from ..ir import models as M
from ..ir import normalizers as N
from ..ir import pre_tokenizers as P
from ..mtok.constants import FileType
from ..mtok.header import read_header
from .text import NO_LIMIT, Body, added_from_header, finish, read_b64_lines, token_names

UNK = "[UNK]"
UNK_FALLBACK_ID = 100
ASCII_LOWER = N.Sequence(tuple(N.Replace(Pattern(chr(c)), chr(c + 32)) for c in range(ord("A"), ord("Z") + 1)))
WORDS = P.Split(Pattern(r"[A-Za-z0-9]+|[^\t\n\x0B\f\r ]", regex=True), "Removed", invert=True)


def runtime_model(vocab: dict[str, int]):
    return M.WordPiece(vocab, UNK, "##", NO_LIMIT)


def first_ids(tokens: list[bytes], notes: list[str]) -> dict[str, int]:
    out: dict[str, int] = {}
    bad = []
    for i, b in enumerate(tokens):
        try:
            out.setdefault(b.decode("utf-8"), i)
        except UnicodeDecodeError:
            bad.append(i)
    if bad:
        notes.append(f"{len(bad)} token(s) are not UTF-8 (e.g. id {bad[0]}): left out of the vocabulary "
                     "(no UTF-8 input can match them)")
    return out


def read_bert_txt(data: bytes, path=None, strict: bool = False) -> Tokenizer:
    kind, header, offset = read_header(data, path, expect=FileType.BERT)
    body = Body(data, offset, path, "type 2")
    (n,) = body.ints("line 4 (vocabulary size)", 1)
    notes: list[str] = []
    tokens = read_b64_lines(body, n, strict, notes, allow_empty=True)
    vocab = first_ids(tokens, notes)
    if len(vocab) < n:
        notes.append(f"{n - len(vocab)} id(s) repeat an earlier token or are not UTF-8: encode never produces them")
    if UNK not in vocab:
        notes.append(f"no {UNK!r} token: the runtime emits id {UNK_FALLBACK_ID} for unknown words")
    notes.append(f"the runtime keeps the pieces found before an unmatchable position, then {UNK}; "
                 f"this IR (HF WordPiece) gives only {UNK}")
    special, stop, prefix = header
    added = added_from_header(special, {i: tokens[i] for i in special if i < n}, notes)
    return finish(model=runtime_model(vocab), normalizer=ASCII_LOWER, pre_tokenizer=WORDS, decoder=D.Fuse(),
                  header=header, added=added, notes=notes,
                  names=token_names({i: tokens[i] for i in prefix if i < n}), path=path, data=data)
