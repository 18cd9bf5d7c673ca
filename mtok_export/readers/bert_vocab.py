"""BERT `vocab.txt` (one WordPiece token per line, id = line index) plus `tokenizer_config.json`
(`do_lower_case`, `strip_accents`, `tokenize_chinese_chars`, special tokens) -> the WordPiece IR
that transformers' BERT slow->fast conversion builds:

* normalizer BertNormalizer(clean_text=True, handle_chinese_chars=tokenize_chinese_chars (True),
  strip_accents=strip_accents (None: follows lowercase), lowercase=the folder's casing
  (`interpretation.bert_casing`: do_lower_case, else decided from the vocabulary; the reference
  reads the same decision));
* pre-tokenizer BertPreTokenizer; model WordPiece(unk_token, "##", 100); decoder WordPiece("##");
* post-processor TemplateProcessing `[CLS] $A [SEP]` / `[CLS] $A [SEP] $B:1 [SEP]:1`;
* added tokens: the special-token roles (defaults `[UNK] [SEP] [PAD] [CLS] [MASK]`), special and
  not normalized, plus `added_tokens_decoder` / `added_tokens.json` entries.

Lines keep everything but the line break (a trailing CR is dropped too).  As in transformers, a
token listed twice keeps its last line's id (the earlier id is left without a token; noted).  Blank
lines at the end of the file are ignored; a blank line elsewhere, an empty file or non-UTF-8
content is an `InputError` naming the line."""

from __future__ import annotations

from pathlib import Path

from ..errors import InputError, UnsupportedError
from ..ir import decoders as D
from ..ir import models as M
from ..ir import normalizers as N
from ..ir import pre_tokenizers as P
from ..ir import processors as R
from ..ir import Tokenizer
from .finish import Parsed, collect_added, finish, read_side_files
from .interpretation import FolderInterpretation, bert_casing

_DEFAULTS = {"unk_token": "[UNK]", "sep_token": "[SEP]", "pad_token": "[PAD]", "cls_token": "[CLS]",
             "mask_token": "[MASK]"}


def read_vocab_txt(path: Path, notes: list[str] | None = None) -> dict[str, int]:
    notes = notes if notes is not None else []
    try:
        raw = Path(path).read_bytes()
    except OSError as e:
        raise InputError(f"{path}: cannot read ({e.strerror})") from e
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        line = raw[:e.start].count(b"\n") + 1
        raise InputError(f"{path} line {line}: not UTF-8 (byte {e.start})") from None
    if text.startswith("\ufeff"):
        text = text[1:]
    lines = [line[:-1] if line.endswith("\r") else line for line in text.split("\n")]
    while lines and lines[-1] == "":
        lines.pop()
    if not lines:
        raise InputError(f"{path}: vocab.txt is empty")
    vocab: dict[str, int] = {}
    duplicates = []
    for i, token in enumerate(lines):
        if token == "":
            raise InputError(f"{path} line {i + 1}: blank line (a WordPiece token cannot be empty)")
        if token in vocab:
            duplicates.append((token, vocab[token], i))
        vocab[token] = i
    if duplicates:
        t, first, last = duplicates[0]
        notes.append(f"{len(duplicates)} token(s) are listed twice (e.g. {t!r} on lines {first + 1} and {last + 1}): "
                     "the later line's id wins, as in transformers, and the earlier id has no token")
    return vocab


def _flag(side, key: str, default, allowed=(bool,)):
    v = side.tcfg.get(key, default)
    if v is not None and not isinstance(v, allowed):
        raise UnsupportedError("must be a boolean" + (" or null" if default is None else ""),
                               json_path=f"$.{key}", path=str(side.config_path))
    return v


def read_bert_vocab(path: Path, *, chat_template: str | None = None) -> Tokenizer:
    """`parse_bert_vocab`, finished; `chat_template` picks a named template or a file."""
    return finish(parse_bert_vocab(path), chat_template)


def parse_bert_vocab(path: Path) -> Parsed:
    """`path` is a directory holding vocab.txt, or the vocab.txt itself."""
    path = Path(path)
    vocab_path = path / "vocab.txt" if path.is_dir() else path
    if not vocab_path.is_file():
        raise InputError(f"{vocab_path}: no such file")
    notes: list[str] = []
    vocab = read_vocab_txt(vocab_path, notes)
    side = read_side_files(vocab_path.parent)
    _flag(side, "do_lower_case", None)  # checked: a boolean or absent
    casing = bert_casing(vocab, side.tcfg)
    lower = casing.value
    strip = _flag(side, "strip_accents", None)
    chinese = _flag(side, "tokenize_chinese_chars", True)
    if side.tcfg.get("never_split"):
        notes.append("never_split is not applied (the fast tokenizer ignores it too)")
    added = collect_added(side, vocab, _DEFAULTS, notes)
    ids = {**vocab, **{t.content: t.id for t in added}}
    unk = side.role("unk_token") or _DEFAULTS["unk_token"]
    if unk not in vocab:
        notes.append(f"unk token {unk!r} is not in vocab.txt")

    def special(role: str) -> tuple[str, int]:
        text = side.role(role) or _DEFAULTS[role]
        if text not in ids:
            raise UnsupportedError(f"{role} {text!r} is not in the vocabulary", json_path=f"$.{role}",
                                   path=str(side.config_path))
        return text, ids[text]

    (cls, cls_id), (sep, sep_id) = special("cls_token"), special("sep_token")
    post = R.TemplateProcessing(
        single=(R.Piece(cls, 0, True), R.Piece("A"), R.Piece(sep, 0, True)),
        pair=(R.Piece(cls, 0, True), R.Piece("A"), R.Piece(sep, 0, True), R.Piece("B", 1), R.Piece(sep, 1, True)),
        special_tokens=tuple(R.SpecialToken(n, (i,), (n,)) for n, i in sorted({cls: cls_id, sep: sep_id}.items())))
    model = M.WordPiece(vocab=vocab, unk_token=unk, continuing_subword_prefix="##", max_input_chars_per_word=100)
    interpretation = FolderInterpretation(lowercase=casing, added_tokens="the configs' roles and added tokens, as "
                                          "transformers' BertTokenizer adds them")
    return Parsed(model=model, side=side, inputs=[vocab_path], added=added, notes=notes, interpretation=interpretation,
                  normalizer=N.BertNormalizer(clean_text=True, handle_chinese_chars=chinese, strip_accents=strip,
                                              lowercase=lower),
                  pre_tokenizer=P.BertPreTokenizer(), decoder=D.WordPiece(prefix="##", cleanup=True),
                  post_processor=post)
