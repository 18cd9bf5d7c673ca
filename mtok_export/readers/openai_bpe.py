"""OpenAI's original BPE files.

* GPT-2's `encoder.json` + `vocab.bpe` are the same content as HF's `vocab.json` + `merges.txt` and
  are read by `gpt2_files.read_gpt2_files` (`formats.py` pairs them by content).
* CLIP's `bpe_simple_vocab_16e6.txt.gz` holds only merges.  CLIP's `SimpleTokenizer` builds the
  vocabulary from them: the 256 GPT-2 byte characters (in `bytes_to_unicode` order: printable
  bytes first), the same with `</w>` appended, the concatenation of each of the first 48,894
  merges, then `<|startoftext|>` and `<|endoftext|>` (49,408 tokens).  The IR is what HF's
  CLIPTokenizerFast runs: NFC, whitespace runs -> one space, lowercase; CLIP's regex (special
  tokens, contractions, letter runs, single digits, other non-space runs) keeping only the matches;
  byte-level BPE with the end-of-word suffix `</w>`; `<|startoftext|> $A <|endoftext|>`.  CLIP's
  `ftfy.fix_text` and HTML unescaping have no tokenizer form (noted)."""

from __future__ import annotations

import gzip
import zlib
from pathlib import Path

from .. import losses as L
from ..errors import InputError
from ..ir import AddedToken, Pattern, Tokenizer
from ..ir import decoders as D
from ..ir import models as M
from ..ir import normalizers as N
from ..ir import pre_tokenizers as P
from ..ir import processors as R
from ..losses import Loss
from ..ir.byte_level import BYTE_CHARS
from .finish import Parsed, finish, read_side_files

CLIP_MERGES = 49152 - 256 - 2  # the merges CLIP's SimpleTokenizer keeps (vocabulary 49,408)
CLIP_PATTERN = r"""<\|startoftext\|>|<\|endoftext\|>|'s|'t|'re|'ve|'m|'ll|'d|[\p{L}]+|[\p{N}]|[^\s\p{L}\p{N}]+"""
START, END = "<|startoftext|>", "<|endoftext|>"


def _printable_first() -> list[str]:
    """GPT-2's byte characters in `bytes_to_unicode` order: the bytes that print as themselves, then the rest."""
    same = [c for b, c in enumerate(BYTE_CHARS) if ord(c) == b]
    return same + [c for b, c in enumerate(BYTE_CHARS) if ord(c) != b]


def read_clip_merges(path: Path, *, chat_template: str | None = None) -> Tokenizer:
    """`parse_clip_merges`, finished; `chat_template` picks a named template or a file."""
    return finish(parse_clip_merges(path), chat_template)


def parse_clip_merges(path: Path) -> Parsed:
    path = Path(path)
    try:
        with gzip.open(path, "rb") as f:
            raw = f.read()
    except OSError as e:
        raise InputError(f"{path}: not a readable gzip file ({e.strerror or e})") from None
    except (EOFError, zlib.error) as e:
        raise InputError(f"{path}: truncated or corrupt gzip data ({e})") from None
    try:
        lines = raw.decode("utf-8").split("\n")
    except UnicodeDecodeError as e:
        raise InputError(f"{path}: not UTF-8 at byte {e.start} of the decompressed data") from None
    if "#version" not in lines[0]:
        raise InputError(f"{path} line 1: expected the '#version' header of a CLIP merges file, got {lines[0][:60]!r}")
    body = lines[1:1 + CLIP_MERGES]
    if len(body) < CLIP_MERGES or not body[-1]:
        raise InputError(f"{path}: CLIP needs {CLIP_MERGES} merges after the header, the file has fewer")
    base = _printable_first()
    tokens = base + [c + "</w>" for c in base]
    merges = []
    for lineno, line in enumerate(body, 2):
        parts = line.split()
        if len(parts) != 2:
            raise InputError(f"{path} line {lineno}: expected 'left right', got {line[:60]!r}")
        merges.append((parts[0], parts[1]))
        tokens.append(parts[0] + parts[1])
    tokens += [START, END]
    vocab = {}
    for i, t in enumerate(tokens):
        if t in vocab:
            raise InputError(f"{path}: merge result {t!r} (id {i}) repeats id {vocab[t]}")
        vocab[t] = i
    known = set(vocab)
    for lineno, (a, b) in enumerate(merges, 2):
        if a not in known or b not in known:
            raise InputError(f"{path} line {lineno}: merge '{a} {b}' names a token no line makes")
    notes = [f"CLIP merges: vocabulary of {len(vocab):,} built from the first {CLIP_MERGES:,} merges as CLIP's "
             "SimpleTokenizer does", "CLIP's ftfy.fix_text and HTML unescaping before tokenizing are not applied"]
    parsed = clip_tokenizer(vocab, tuple(merges), side=read_side_files(path.parent), inputs=[path], notes=notes)
    parsed.differences += (Loss(L.CLIP_FTFY, "reader", "$.normalizer", "CLIP's SimpleTokenizer runs ftfy.fix_text and "
                  "html.unescape first (curly quotes, full-width forms, ligatures, &amp;...); the IR starts at NFC",
                  trigger=("\u2019", "&amp;", "\uff0c")),
             Loss(L.CLIP_SPECIAL_TEXT, "reader", "$.added_tokens", "open_clip's SimpleTokenizer encodes "
                  "<|startoftext|>/<|endoftext|> text as ordinary text; HF and the runtime split it out as the "
                  "special token", trigger=(START, END)),
             Loss(L.CLIP_FINAL_SIGMA, "reader", "$.normalizer", "SimpleTokenizer lowercases with Python's str.lower: "
                  "a word-final capital sigma becomes ς, where HF's Lowercase (and the runtime) give σ",
                  example="ΟΔΟΣ", trigger=("\u03a3",)))
    return parsed


def clip_tokenizer(vocab: dict[str, int], merges: tuple, *, side, inputs, notes) -> Parsed:
    """CLIP's pipeline (as transformers' CLIPTokenizer builds it) around a vocabulary and its merges:
    the `.gz` here, and a vocab.json + merges.txt pair whose tokens end in `</w>` (`gpt2_files`)."""
    for t in (START, END):
        if t not in vocab:
            raise InputError(f"{inputs[0]}: a CLIP vocabulary needs {t}, which it does not hold")
    start, end = vocab[START], vocab[END]
    added = (AddedToken(start, START, normalized=False, special=True), AddedToken(end, END, normalized=False, special=True))
    model = M.BPE(vocab=vocab, merges=merges, unk_token=END, continuing_subword_prefix="", end_of_word_suffix="</w>")
    normalizer = N.Sequence((N.NFC(), N.Replace(Pattern(r"\s+", regex=True), " "), N.Lowercase()))
    pre = P.Sequence((P.Split(Pattern(CLIP_PATTERN, regex=True), "Removed", invert=True),
                      P.ByteLevel(add_prefix_space=False, trim_offsets=True, use_regex=False)))
    post = R.RobertaProcessing(sep=(END, end), cls=(START, start), trim_offsets=False, add_prefix_space=False)
    decode = Loss(L.CLIP_DECODE, "decoder ByteLevel", "$.decoder", "CLIP's decode (SimpleTokenizer's, and transformers' "
                  "CLIPTokenizer.decode) replaces each </w> with a space; the runtime's decode keeps </w> in the text",
                  example="a photo")
    return Parsed(model=model, side=side, inputs=inputs, added=added, notes=notes, normalizer=normalizer,
                  pre_tokenizer=pre, decoder=D.ByteLevel(), post_processor=post, bos=START, eos=END,
                  differences=(decode,))
