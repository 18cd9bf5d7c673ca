"""The generated zoo (issue 39, item 6): tokenizers of random shapes over the component space HF
`tokenizers` serializes (every normalizer, pre-tokenizer, model, decoder and post-processor type, alone
and in Sequences, with their options), each with a small vocabulary trained by tokenizers' own trainers
on multilingual text (the built-in verification corpus and `samples/text.txt`), saved as a
tokenizer.json folder and exported as a new user would, with no flags, then classified as the real zoo
classifies (`tests/support/zoo.py`: ok / hint / crash / dead-end / input-error / other; a time-out or a
kill is counted apart as `stall`).

A shape is drawn through `Draw`: `RandomDraw` (a seeded `random.Random`: the same seed gives the same
shapes, what the command line and `make zoo` use) or `HypothesisDraw` (a hypothesis `data` object: the
tests' property, which shrinks a failing shape).  A shape is plain JSON: its components are written in
tokenizer.json's own form (the `normalizer`, `pre_tokenizer`, `decoder`, `post_processor` values; the
model's type and options), so a report's shape reads as the file it makes.

    python -m tests.support.gen_zoo --count 80 --seed 1 --jobs 2 --output out/genzoo

writes genzoo.json and genzoo.md (and genzoo.partial.jsonl while it runs) and each shape's folder under
OUTPUT/shapes/NNN (kept: a dead end is re-run from it with `mtok-export --path`)."""

from __future__ import annotations

import argparse
import copy
import json
import random
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, Sequence

from .corpus_dirs import REPO, SAMPLES
from . import zoo

STALL = "stall"
CLASSES = zoo.CLASSES + (STALL,)
CPU_SECONDS = 180  # per attempt: a few-thousand-token vocabulary exports in seconds; past this it stalls
MEMORY = 4 * 2**30


# ------------------------------------------------------------------ drawing


class Draw(Protocol):
    def choice(self, options: Sequence[Any]) -> Any: ...

    def integer(self, lo: int, hi: int) -> int: ...

    def boolean(self, p: float = 0.5) -> bool: ...


class RandomDraw:
    """Draws from a seeded `random.Random`: deterministic given the seed."""

    def __init__(self, seed: int):
        self.rng = random.Random(seed)

    def choice(self, options):
        return options[self.rng.randrange(len(options))]

    def integer(self, lo, hi):
        return self.rng.randint(lo, hi)

    def boolean(self, p=0.5):
        return self.rng.random() < p


class HypothesisDraw:
    """Draws through hypothesis' `data.draw`, so a failing shape shrinks (to the first options)."""

    def __init__(self, data):
        from hypothesis import strategies as st

        self.data, self.st = data, st

    def choice(self, options):
        return self.data.draw(self.st.sampled_from(list(options)))

    def integer(self, lo, hi):
        return self.data.draw(self.st.integers(lo, hi))

    def boolean(self, p=0.5):
        return self.data.draw(self.st.booleans())


# ------------------------------------------------------------------ the component space
# Each family below is tokenizer.json's own JSON for that type, with its options drawn.  Where a
# component needs a token (a post-processor's ids, a decoder's prefix), the shape names it and
# `build` fills the id the trainer gave it.

# special tokens per family: (unk, bos/cls, eos/sep, the rest)
SPECIALS = {
    "bert": ("[UNK]", "[CLS]", "[SEP]", ["[PAD]", "[MASK]"]),
    "llama": ("<unk>", "<s>", "</s>", []),
    "gpt": ("<|unk|>", "<|startoftext|>", "<|endoftext|>", []),
}
REPLACE_PATTERNS = [("\u2581", " "), (" ", "\u2581"), ("``", '"'), ("''", '"'), ("\t", " "), ("-", " - ")]
SPLIT_PATTERNS = [
    {"String": " "}, {"String": "-"}, {"Regex": r"\s+"}, {"Regex": r"\d"}, {"Regex": r"\p{P}"},
    {"Regex": r"\w+|[^\w\s]+"},
    {"Regex": r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"},
    {"Regex": r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"},
]
BEHAVIORS = ["Removed", "Isolated", "MergedWithPrevious", "MergedWithNext", "Contiguous"]


def normalizer(d: Draw, depth: int = 0) -> dict | None:
    kind = d.choice(["none", "NFC", "NFD", "NFKC", "NFKD", "Lowercase", "StripAccents", "Nmt", "Strip", "Replace",
                     "Prepend", "BertNormalizer", "ByteLevel"] + (["Sequence"] * 3 if depth == 0 else []))
    if kind == "none":
        return None
    if kind == "Sequence":
        items = [normalizer(d, 1) for _ in range(d.integer(1, 3))]
        return {"type": "Sequence", "normalizers": [n for n in items if n is not None]}
    if kind == "Strip":
        return {"type": "Strip", "strip_left": d.boolean(), "strip_right": d.boolean()}
    if kind == "Replace":
        pattern, content = d.choice(REPLACE_PATTERNS)
        return {"type": "Replace", "pattern": {"String": pattern}, "content": content}
    if kind == "Prepend":
        return {"type": "Prepend", "prepend": d.choice(["\u2581", " "])}
    if kind == "BertNormalizer":
        return {"type": "BertNormalizer", "clean_text": d.boolean(0.8), "handle_chinese_chars": d.boolean(0.8),
                "strip_accents": d.choice([None, True, False]), "lowercase": d.boolean()}
    return {"type": kind}


def pre_tokenizer(d: Draw, depth: int = 0) -> dict | None:
    kind = d.choice(["none", "Whitespace", "WhitespaceSplit", "BertPreTokenizer", "ByteLevel", "Metaspace", "Split",
                     "Punctuation", "Digits", "CharDelimiterSplit", "UnicodeScripts", "FixedLength"]
                    + (["Sequence"] * 3 if depth == 0 else []))
    if kind == "none":
        return None
    if kind == "Sequence":
        items = [pre_tokenizer(d, 1) for _ in range(d.integer(1, 3))]
        return {"type": "Sequence", "pretokenizers": [p for p in items if p is not None]}
    if kind == "ByteLevel":
        return {"type": "ByteLevel", "add_prefix_space": d.boolean(), "trim_offsets": True, "use_regex": d.boolean(0.7)}
    if kind == "Metaspace":
        return {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": d.choice(["always", "first", "never"]),
                "split": d.boolean(0.7)}
    if kind == "Split":
        return {"type": "Split", "pattern": d.choice(SPLIT_PATTERNS), "behavior": d.choice(BEHAVIORS),
                "invert": d.boolean(0.2)}
    if kind == "Punctuation":
        return {"type": "Punctuation", "behavior": d.choice(BEHAVIORS)}
    if kind == "Digits":
        return {"type": "Digits", "individual_digits": d.boolean()}
    if kind == "CharDelimiterSplit":
        return {"type": "CharDelimiterSplit", "delimiter": d.choice([" ", "-", "\n"])}
    if kind == "FixedLength":
        return {"type": "FixedLength", "length": d.integer(2, 8)}
    return {"type": kind}


def model(d: Draw) -> dict:
    kind = d.choice(["BPE", "BPE", "WordPiece", "WordLevel", "Unigram"])
    if kind == "BPE":
        return {"type": "BPE", "limit_alphabet": d.choice([None, None, 150]), "byte_fallback": d.boolean(0.3), "ignore_merges": d.boolean(0.3),
                "fuse_unk": d.boolean(0.3), "unk": d.boolean(0.6),
                "continuing_subword_prefix": d.choice([None, None, None, "##"]),
                "end_of_word_suffix": d.choice([None, None, None, "</w>"])}
    if kind == "WordPiece":
        return {"type": "WordPiece", "limit_alphabet": d.choice([None, None, 150]), "continuing_subword_prefix": d.choice(["##", "##", "@@"]),
                "max_input_chars_per_word": d.choice([100, 100, 20])}
    if kind == "WordLevel":
        return {"type": "WordLevel"}
    return {"type": "Unigram", "byte_fallback": d.boolean(0.3), "unk": d.boolean(0.8)}


def decoder(d: Draw, depth: int = 0) -> dict | None:
    kind = d.choice(["none", "ByteLevel", "Metaspace", "WordPiece", "BPEDecoder", "ByteFallback", "Fuse", "Strip",
                     "Replace", "CTC"] + (["Sequence"] * 3 if depth == 0 else []))
    if kind == "none":
        return None
    if kind == "Sequence":
        items = [decoder(d, 1) for _ in range(d.integer(1, 4))]
        return {"type": "Sequence", "decoders": [x for x in items if x is not None]}
    if kind == "ByteLevel":
        return {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True}
    if kind == "Metaspace":
        return {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": d.choice(["always", "first", "never"]),
                "split": True}
    if kind == "WordPiece":
        return {"type": "WordPiece", "prefix": "##", "cleanup": d.boolean()}
    if kind == "BPEDecoder":
        return {"type": "BPEDecoder", "suffix": "</w>"}
    if kind == "Strip":
        return {"type": "Strip", "content": " ", "start": d.integer(0, 1), "stop": d.integer(0, 1)}
    if kind == "Replace":
        pattern, content = d.choice(REPLACE_PATTERNS[:2])
        return {"type": "Replace", "pattern": {"String": pattern}, "content": content}
    if kind == "CTC":
        return {"type": "CTC", "pad_token": "<pad>", "word_delimiter_token": "|", "cleanup": d.boolean()}
    return {"type": kind}


def post_processor(d: Draw, depth: int = 0) -> dict | None:
    """Token ids are left out: `build` writes the trained ones (`$BOS`/`$EOS` name the family's)."""
    kind = d.choice(["none", "none", "TemplateProcessing", "BertProcessing", "RobertaProcessing", "ByteLevel"]
                    + (["Sequence"] if depth == 0 else []))
    if kind == "none":
        return None
    if kind == "Sequence":
        items = [post_processor(d, 1) for _ in range(d.integer(1, 2))]
        return {"type": "Sequence", "processors": [p for p in items if p is not None]}
    if kind == "TemplateProcessing":
        return {"type": "TemplateProcessing", "single": d.choice(["$BOS $A", "$A $EOS", "$BOS $A $EOS"])}
    if kind in ("BertProcessing", "RobertaProcessing"):
        return {"type": kind}
    return {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True}


def shape(d: Draw) -> dict:
    """One tokenizer's shape: components in tokenizer.json's form, the special-token family and the
    vocabulary size its trainer aims at."""
    m = model(d)
    return {"model": m, "normalizer": normalizer(d), "pre_tokenizer": pre_tokenizer(d), "decoder": decoder(d),
            "post_processor": post_processor(d), "specials": d.choice(sorted(SPECIALS)),
            "vocab_size": d.integer(300, 2000)}


def shapes(seed: int, count: int) -> list[dict]:
    return [shape(RandomDraw(seed * 100_003 + i)) for i in range(count)]


def label(s: dict) -> str:
    """A shape on one line: model[options] | normalizer | pre-tokenizer | decoder | post-processor."""
    def name(c):
        if c is None:
            return "-"
        for key in ("normalizers", "pretokenizers", "decoders", "processors"):
            if key in c:
                return "Seq(" + ",".join(name(x) for x in c[key]) + ")"
        return c["type"]

    m = s["model"]
    opts = [f"limit_alphabet={m['limit_alphabet']}"] if m.get("limit_alphabet") else []
    opts += [k for k in ("byte_fallback", "ignore_merges", "fuse_unk", "unk") if m.get(k)]
    opts += [f"{k}={m[k]}" for k in ("continuing_subword_prefix", "end_of_word_suffix") if m.get(k)
             and m["type"] == "BPE"]
    return " | ".join([m["type"] + (f"[{','.join(opts)}]" if opts else ""), name(s["normalizer"]),
                       name(s["pre_tokenizer"]), name(s["decoder"]), name(s["post_processor"])])


# ------------------------------------------------------------------ the classes found
# Each class of dead end (exit 1) or crash the generated zoo found, as the smallest shape that showed it
# (tests/acceptance/test_gen_zoo.py exports each: exit 0 or a refusal naming its losses, never exit 1).

def _model(kind: str, **options) -> dict:
    base = {"BPE": {"type": "BPE", "limit_alphabet": None, "byte_fallback": False, "ignore_merges": False,
                    "fuse_unk": False, "unk": False, "continuing_subword_prefix": None, "end_of_word_suffix": None},
            "WordPiece": {"type": "WordPiece", "limit_alphabet": None, "continuing_subword_prefix": "##",
                          "max_input_chars_per_word": 100},
            "WordLevel": {"type": "WordLevel"},
            "Unigram": {"type": "Unigram", "byte_fallback": False, "unk": True}}[kind]
    return {**base, **options}


def _shape(model: dict, normalizer=None, pre=None, decoder=None, post=None, specials="llama", size=400) -> dict:
    return {"model": model, "normalizer": normalizer, "pre_tokenizer": pre, "decoder": decoder,
            "post_processor": post, "specials": specials, "vocab_size": size}


_MARK = "\u2581"
FOUND: dict[str, tuple[dict, str]] = {
    # the TTS model's shape: ' ' is not in a vocabulary trained after a Whitespace split
    "unk-table-whitespace": (_shape(_model("BPE", unk=True), pre={"type": "Whitespace"}),
                             "the BPE unk table mapped ' ' (which Whitespace removes) to unk: an unk id at every "
                             "word boundary"),
    "wordpiece-bytes-long-word": (_shape(_model("WordPiece", max_input_chars_per_word=20),
                                         decoder={"type": "WordPiece", "prefix": "##", "cleanup": True}),
                                  "wordpiece-bytes' trigger (21+ non-space characters) ignored the limit and a "
                                  "pre-tokenizer that keeps spaces in a word: 'Zażółć gęślą jaźń.' unexplained"),
    "stream-mark-kept": (_shape(_model("Unigram"), normalizer={"type": "Replace", "pattern": {"String": " "},
                                                                  "content": _MARK}, decoder={"type": "Fuse"}),
                         "decode(int) turns U+2581 into a space whatever the decoder; no loss said so"),
    "stream-byte-text-kept": (_shape(_model("BPE", byte_fallback=True), pre={"type": "Whitespace"},
                                     decoder={"type": "Fuse"}),
                              "decode(int) turns '<0xHH>' into a byte whatever the decoder; no loss said so"),
    "stream-fuse-then-byte-fallback": (_shape(_model("BPE"), pre={"type": "Digits", "individual_digits": True},
                                              decoder={"type": "Sequence", "decoders": [{"type": "Fuse"},
                                                                                        {"type": "ByteFallback"}]}),
                                       "HF's ByteFallback after Fuse decodes '<0x41>' spelled by several tokens"),
    "stream-replace-ignored": (_shape(_model("BPE"),
                                      decoder={"type": "Replace", "pattern": {"String": " "}, "content": _MARK}),
                               "decode(int) ignores a Replace decoder; no loss said so"),
    "metaspace-in-sequence": (_shape(_model("BPE"), pre={"type": "Sequence", "pretokenizers": [
        {"type": "Metaspace", "replacement": _MARK, "prepend_scheme": "always", "split": True}]},
        decoder={"type": "Metaspace", "replacement": _MARK, "prepend_scheme": "always", "split": True}),
        "Sequence[Metaspace] missed the replacement-as-space normalizer: '▁' encoded as two ids"),
    "unigram-no-unk-projection": (_shape(_model("Unigram", unk=False, byte_fallback=True),
                                         normalizer={"type": "ByteLevel"}),
                                  "a projection HF cannot encode (no unk_id) crashed the attribution (TypeError, "
                                  "exit 2 'internal error')"),
    "byte-level-decoder-other-vocab": (_shape(_model("WordLevel"), normalizer={"type": "Prepend", "prepend": _MARK},
                                              pre={"type": "Metaspace", "replacement": _MARK, "prepend_scheme":
                                                   "always", "split": True},
                                              decoder={"type": "ByteLevel", "add_prefix_space": True,
                                                       "trim_offsets": True, "use_regex": True}),
                                       "decode(int) maps each character of '\u2581café' through the byte map "
                                       "('é' a lone byte), HF keeps a token it does not cover whole; the runtime "
                                       "model kept none"),
    "two-dropped-pre-tokenizers": (_shape(_model("WordLevel"), pre={"type": "Sequence", "pretokenizers": [
        {"type": "FixedLength", "length": 7}, {"type": "FixedLength", "length": 6}]}),
        "the projection removed pre_tokenizers[0] then could not find [1] (IndexError, exit 2 'internal error')"),
    "whitespace-class-after-prepend": (_shape(_model("Unigram", byte_fallback=True), normalizer={
        "type": "Prepend", "prepend": _MARK}, pre={"type": "Whitespace"}, decoder={"type": "ByteFallback"}),
        "whitespace-class on 'next\\x85line' unexplained: token spans counted from surfaces drifted past it"),
}


# ------------------------------------------------------------------ training and saving


def training_text() -> list[str]:
    """Multilingual text: the built-in verification corpus (many scripts, edge cases) and the
    samples' English prose, as lines."""
    from mtok_export.corpus import builtin_corpus, slice_of

    # the everyday slice only: Unigram's trainer fails on some edge samples (its likelihood turns NaN
    # after NFD/NFKC on them); the edge cases stay in what verify runs
    lines = [s.text for s in builtin_corpus() if s.text and slice_of(s) == "everyday"]
    lines += [x for x in (SAMPLES / "text.txt").read_text(encoding="utf-8").splitlines() if x.strip()]
    # in pieces of at most 200 characters: Unigram's trainer gives up on a long sentence without
    # a pre-tokenizer (its likelihood underflows), and the long samples teach nothing more
    return [x[i:i + 200] for x in lines for i in range(0, len(x), 200)]


def _uses_byte_level(c: dict | None) -> bool:
    if c is None:
        return False
    if c["type"] == "ByteLevel":
        return True
    return any(_uses_byte_level(x) for k in ("normalizers", "pretokenizers") for x in c.get(k, ()))


def _bytes_pieces() -> list[str]:
    return [f"<0x{b:02X}>" for b in range(256)]


def build(s: dict, lines: list[str] | None = None):
    """The trained `tokenizers.Tokenizer` of shape `s`."""
    from tokenizers import Tokenizer, pre_tokenizers, trainers

    lines = training_text() if lines is None else lines
    unk, bos, eos, rest = SPECIALS[s["specials"]]
    m = s["model"]
    specials = [unk, bos, eos, *rest]
    kind = m["type"]
    empty = {"BPE": {"type": "BPE", "vocab": {}, "merges": []},
             "WordPiece": {"type": "WordPiece", "vocab": {}, "unk_token": unk, "continuing_subword_prefix": "##",
                           "max_input_chars_per_word": 100},
             "WordLevel": {"type": "WordLevel", "vocab": {}, "unk_token": unk},
             "Unigram": {"type": "Unigram", "vocab": [], "unk_id": None}}[kind]
    base = {"version": "1.0", "truncation": None, "padding": None, "added_tokens": [], "normalizer": s["normalizer"],
            "pre_tokenizer": s["pre_tokenizer"], "post_processor": None, "decoder": None, "model": empty}
    tok = Tokenizer.from_str(json.dumps(base))
    size = s["vocab_size"]
    byte_level = _uses_byte_level(s["pre_tokenizer"]) or _uses_byte_level(s["normalizer"])
    alphabet = pre_tokenizers.ByteLevel.alphabet() if byte_level else []
    # BPE and WordPiece keep every character seen (or the `limit_alphabet` most frequent) before any
    # merge: the vocabulary aims at `vocab_size` merges past them
    chars = len(alphabet) if byte_level else m.get("limit_alphabet") or len(set("".join(lines)))
    limit = {"limit_alphabet": m["limit_alphabet"]} if m.get("limit_alphabet") and not byte_level else {}
    if kind == "BPE":
        affixes = {k: m[k] for k in ("continuing_subword_prefix", "end_of_word_suffix") if m.get(k)}
        trainer = trainers.BpeTrainer(vocab_size=size + chars, special_tokens=specials, initial_alphabet=alphabet,
                                      show_progress=False, **affixes, **limit)
    elif kind == "WordPiece":
        trainer = trainers.WordPieceTrainer(vocab_size=size + chars, special_tokens=specials,
                                            initial_alphabet=alphabet, **limit,
                                            continuing_subword_prefix=m["continuing_subword_prefix"],
                                            show_progress=False)
    elif kind == "WordLevel":
        trainer = trainers.WordLevelTrainer(vocab_size=size, special_tokens=specials, show_progress=False)
    else:  # Unigram keeps every character it saw: the vocabulary holds at least those
        chars = len(set("".join(lines))) + len(alphabet) + len(specials)
        trainer = trainers.UnigramTrainer(vocab_size=max(size, chars + 100), special_tokens=specials, unk_token=unk,
                                          initial_alphabet=alphabet, show_progress=False)
    tok.train_from_iterator(lines, trainer)
    data = json.loads(tok.to_str())
    mj = data["model"]
    if kind == "BPE":
        for piece in _bytes_pieces() if m["byte_fallback"] else ():
            mj["vocab"].setdefault(piece, len(mj["vocab"]))
        mj.update(byte_fallback=m["byte_fallback"], ignore_merges=m["ignore_merges"], fuse_unk=m["fuse_unk"],
                  unk_token=unk if m["unk"] else None)
    elif kind == "WordPiece":
        mj["max_input_chars_per_word"] = m["max_input_chars_per_word"]
    elif kind == "Unigram":
        low = min((sc for _, sc in mj["vocab"]), default=0.0) - 1.0
        known = {p for p, _ in mj["vocab"]}
        mj["vocab"] += [[p, low] for p in (_bytes_pieces() if m["byte_fallback"] else ()) if p not in known]
        mj["byte_fallback"] = m["byte_fallback"]
        if not m["unk"]:
            mj["unk_id"] = None
    ids = {t["content"]: t["id"] for t in data["added_tokens"]}
    data["decoder"] = copy.deepcopy(s["decoder"])
    data["post_processor"] = _post_with_ids(s["post_processor"], ids, bos, eos)
    return Tokenizer.from_str(json.dumps(data))


def _post_with_ids(p: dict | None, ids: dict[str, int], bos: str, eos: str) -> dict | None:
    if p is None:
        return None
    if p["type"] == "Sequence":
        return {"type": "Sequence", "processors": [_post_with_ids(x, ids, bos, eos) for x in p["processors"]]}
    if p["type"] in ("BertProcessing", "RobertaProcessing"):
        out = {"type": p["type"], "sep": [eos, ids[eos]], "cls": [bos, ids[bos]]}
        if p["type"] == "RobertaProcessing":
            out.update(trim_offsets=True, add_prefix_space=False)
        return out
    if p["type"] == "TemplateProcessing":
        def seq(template: str, type_id: int) -> list[dict]:
            out = []
            for piece in template.replace("$BOS", bos).replace("$EOS", eos).split():
                out.append({"Sequence": {"id": piece[1:], "type_id": type_id}} if piece in ("$A", "$B")
                           else {"SpecialToken": {"id": piece, "type_id": type_id}})
            return out

        single = seq(p["single"], 0)
        used = [t for t in (bos, eos) if t in p["single"].replace("$BOS", bos).replace("$EOS", eos)]
        return {"type": "TemplateProcessing", "single": single, "pair": single + seq(p["single"].replace("$A", "$B"), 1),
                "special_tokens": {t: {"id": t, "ids": [ids[t]], "tokens": [t]} for t in used}}
    return copy.deepcopy(p)


def save(s: dict, folder: Path, lines: list[str] | None = None) -> Path:
    """Train shape `s` and save it as `folder`/tokenizer.json (with the shape beside it, as shape.json,
    which no reader looks at)."""
    folder.mkdir(parents=True, exist_ok=True)
    build(s, lines).save(str(folder / "tokenizer.json"))
    (folder / "shape.json").write_text(json.dumps(s, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    return folder


# ------------------------------------------------------------------ running


@dataclass(frozen=True)
class Generated:
    index: int
    shape: dict
    folder: Path


def run_shape(g: Generated, base: tuple[str, ...] = ()) -> dict:
    """The zoo's row of one generated folder (its attempts and class), with the shape; a time-out
    or a kill is a stall."""
    row = zoo.run_model(zoo.Model(f"gen-{g.index:03d}", label(g.shape), g.folder), base=list(base),
                        memory=MEMORY, cpu_seconds=CPU_SECONDS)
    if row["class"] == "other" and any(a["exit"] < 0 for a in row["attempts"]):
        row["class"] = STALL
    row["shape"] = g.shape
    return row


def generate(seed: int, count: int, root: Path) -> tuple[list[Generated], dict[int, str]]:
    """(the trained shapes' folders, shape number -> why its trainer failed)."""
    lines = training_text()
    out, failed = [], {}
    for i, s in enumerate(shapes(seed, count)):
        folder = root / f"{i:03d}"
        try:
            save(s, folder, lines)
        except Exception as e:  # noqa: BLE001 (a trainer's panic is a pyo3 PanicException: a BaseException)
            failed[i] = f"{type(e).__name__}: {e}"[:200]
            continue
        except BaseException as e:
            if isinstance(e, (KeyboardInterrupt, SystemExit)):
                raise
            failed[i] = f"{type(e).__name__}: {e}"[:200]
            continue
        out.append(Generated(i, s, folder))
    return out, failed


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--count", type=int, default=80, help="shapes to generate (default 80)")
    ap.add_argument("--seed", type=int, default=1, help="the generator's seed: the same seed, the same shapes")
    ap.add_argument("--jobs", type=int, default=2, help="exports at once (default 2)")
    ap.add_argument("--only", type=int, nargs="*", metavar="N", help="only these shape numbers (a re-run)")
    ap.add_argument("--flags", default="", help="flags every first attempt gets (e.g. --no-chat)")
    ap.add_argument("--output", type=Path, default=REPO / "out" / "genzoo", help="where genzoo.json and genzoo.md go")
    ap.add_argument("--list", action="store_true", help="print the shapes and exit")
    args = ap.parse_args(argv)
    all_shapes = shapes(args.seed, args.count)
    if args.list:
        for i, s in enumerate(all_shapes):
            print(f"{i:03d}\t{label(s)}")
        return 0
    start = time.perf_counter()
    args.output.mkdir(parents=True, exist_ok=True)
    gens, untrained = generate(args.seed, args.count, args.output / "shapes")
    gens = [g for g in gens if args.only is None or g.index in args.only]
    for i, why in untrained.items():
        print(f"shape {i:03d} not trained ({why}): left out", flush=True)
    trained = time.perf_counter() - start
    partial = args.output / "genzoo.partial.jsonl"
    partial.write_text("")
    finished = []
    base = tuple(args.flags.split())

    def one(g: Generated) -> dict:
        try:
            row = run_shape(g, base)
        except Exception as e:  # noqa: BLE001  the harness itself (a launcher killed from outside): the row says so
            row = {"name": f"gen-{g.index:03d}", "source": label(g.shape), "path": str(g.folder), "class": "other",
                   "why": f"harness: {type(e).__name__}: {e}"[:300], "reviewed": False, "seconds": 0.0,
                   "attempts": [], "shape": g.shape}
        finished.append(row)
        with open(partial, "a", encoding="utf-8") as f:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
        print(f"[{len(finished)}/{len(gens)}] {row['name']} {row['source']}: {row['class']} (exit "
              f"{' -> '.join(str(x['exit']) for x in row['attempts'])}, {row['seconds']} s)"
              + (f" {row['why'][:160]}" if row["why"] else ""), flush=True)
        return row

    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:  # each attempt is its own process
        rows = list(pool.map(one, gens))
    seconds = time.perf_counter() - start
    counts = zoo.summary(rows, CLASSES)
    result = {"shapes": len(rows), "seed": args.seed, "seconds": round(seconds, 1), "training_seconds": round(trained, 1),
              "jobs": args.jobs, "flags": list(base), "summary": counts,
              "untrained": {f"{i:03d}": why for i, why in untrained.items()}, "models": rows}
    partial.unlink()
    (args.output / "genzoo.json").write_text(json.dumps(result, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    title = f"The generated zoo: {len(rows)} shapes (seed {args.seed}), {seconds / 60:.1f} min with --jobs {args.jobs}"
    (args.output / "genzoo.md").write_text(zoo.markdown(rows, {}, seconds, args.jobs, title=title, classes=CLASSES),
                                           encoding="utf-8")
    print(f"{len(rows)} shapes in {seconds:.0f} s (training {trained:.0f} s): "
          + ", ".join(f"{c} {n}" for c, n in counts.items()) + f"; {args.output}/genzoo.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
