"""The tokenizer of a GGUF file (llama.cpp's container; `tokenizer.ggml.*` keys) -> IR.

The `gguf` PyPI package parses the container (imported lazily); this module maps the keys:

| `tokenizer.ggml.model` | IR |
|---|---|
| `gpt2` (byte-level BPE) | BPE over the tokens (already GPT-2 byte characters) and `merges`; pre-tokenizer from `tokenizer.ggml.pre` (table below) then ByteLevel(use_regex=False); ByteLevel decoder |
| `llama` (SentencePiece BPE) | a SentencePiece `ModelProto` rebuilt from tokens, scores and types, read by `sentencepiece.py` (same IR as the `.model`) |
| `t5` (SentencePiece Unigram, llama.cpp's UGM) | the same `ModelProto` as a Unigram, with `tokenizer.ggml.precompiled_charsmap` as its normalizer |
| `bert` (WordPiece) | WordPiece: llama.cpp stores word-initial tokens as `▁x` and continuations without `##`; both are restored |

Token types (1 normal, 2 unknown, 3 control, 4 user-defined, 5 unused, 6 byte) are SentencePiece's
numbers: control -> special added token, user-defined -> non-special added token.  BOS/EOS/EOT/...
ids come from `tokenizer.ggml.*_token_id`; `add_bos_token`/`add_eos_token` from their keys, else
llama.cpp's defaults (SentencePiece and `llama-bpe`: BOS; T5: EOS; BERT: [CLS] ... [SEP]).

Pre-tokenizer names map to split regexes as llama.cpp's `llm_tokenizer_bpe` does (learnt from its
`src/llama-vocab.cpp`): a list of regexes applied one after the other, each splitting the pieces of
the previous (HF: Split(..., Isolated) in a Sequence).  Where llama.cpp rewrote a tokenizer.json
regex for its own engine (case-insensitive groups spelled out), the original regex is used."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from .. import losses as L
from ..errors import InputError, UnsupportedError
from ..ir import AddedToken, Pattern, Tokenizer
from ..ir import decoders as D
from ..ir import models as M
from ..ir import normalizers as N
from ..ir import pre_tokenizers as P
from ..ir import processors as R
from ..ir.byte_level import token_to_bytes
from ..losses import Loss
from .finish import Parsed, SideFiles, finish
from .gguf_fields import read_fields
from .gguf_layout import check_layout
from .gguf_types import llama_cpp_types, rstrip_ids
from .sentencepiece import parse_proto

_GPT2 = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)"""
_LLAMA3 = r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"""
_QWEN2 = r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"""
_QWEN35 = (r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*"""
           r"""|\s*[\r\n]+|\s+(?!\S)|\s+""")
_CJK = "[一-龥ࠀ-一가-퟿]+"
# Escaped code points are canonical singletons (e.g. U+2126 OHM SIGN) that NFC would turn into other letters.
_DEEPSEEK_LLM = (
    "[\r\n]",
    "\\s?[A-Za-zµÀ-ÖØ-öø-ƺƼ-ƿǄ-ʓʕ-ʯͰ-ͳͶͷͻ-ͽͿΆΈ-ΊΌΎ-ΡΣ-ϵϷ-ҁҊ-ԯԱ-ՖႠ-ჅᎠ-Ᏽᏸ-ᏽᲐ-ᲺᲽ-Ჿᴀ-ᴫᵫ-ᵷᵹ-ᶚḀ-ἕἘ-Ἕἠ-ὅὈ-Ὅὐ-ὗὙὛὝὟ-\u1f7dᾀ-ᾴᾶ-ᾼ\u1fbeῂ-ῄῆ-ῌῐ-\u1fd3ῖ-\u1fdbῠ-Ῥῲ-ῴῶ-ῼℂℇℊ-ℓℕℙ-ℝℤ\u2126ℨ\u212a-ℭℯ-ℴℹℼ-ℿⅅ-ⅉⅎↃↄⰀ-ⱻⱾ-ⳤⳫ-ⳮⳲⳳꙀ-ꙭꚀ-ꚛꜢ-ꝯꝱ-ꞇꞋ-ꞎꭰ-ꮿﬀ-ﬆﬓ-ﬗＡ-Ｚａ-ｚ"
    "\U00010400-\U0001044f𐒰-𐓓𐓘-𐓻𐲀-𐲲𐳀-𐳲𑢠-𑣟𞤀-𞥃]+",
    "\\s?[!-/:-~！-／：-～‘-‟　-。]+",
    "\\s+$",
    _CJK,
    "\\p{N}+",
)
_DEEPSEEK_CODER = ("[\r\n]", r"\s?\p{L}+", r"\s?\p{P}+", _CJK, r"\p{N}")
_FALCON = (r"[\p{P}\$\+<=>\^~\|`]+", _GPT2, "[0-9][0-9][0-9]")
_STARCODER = (r"\p{N}", _GPT2)
_DEFAULT = (r"[\p{P}\$\+<=>\^~\|]+", _GPT2, r"\p{N}+", "[0-9][0-9][0-9]")

# tokenizer.ggml.pre -> (regexes, llama.cpp's flags for it)
PRE: dict[str, tuple[tuple[str, ...], dict]] = {}
for names, regexes, flags in (
        (("default",), _DEFAULT, {}),
        (("llama3", "llama-v3", "llama-bpe", "falcon3", "dbrx", "smaug-bpe", "chatglm-bpe"), (_LLAMA3,),
         {"ignore_merges": True, "add_bos": True}),
        (("deepseek-llm",), _DEEPSEEK_LLM, {}),
        (("deepseek-coder",), _DEEPSEEK_CODER, {}),
        (("falcon",), _FALCON, {}),
        (("mpt", "gpt-2", "phi-2", "olmo", "jais", "roberta-bpe"), (_GPT2,), {}),
        (("starcoder", "refact", "command-r", "smollm", "codeshell", "exaone"), _STARCODER, {}),
        (("qwen2", "stablelm2", "qwen2.5", "deepseek-r1-qwen"), (_QWEN2,), {}),
        (("qwen35",), (_QWEN35,), {}),
):
    for name in names:
        PRE[name] = (regexes, flags)

TYPE_NORMAL, TYPE_UNKNOWN, TYPE_CONTROL, TYPE_USER, TYPE_UNUSED, TYPE_BYTE = 1, 2, 3, 4, 5, 6
_ID_KEYS = ("bos", "eos", "eot", "eom", "unknown", "seperator", "padding", "cls", "mask")


class _Keys:
    """Typed access to the `tokenizer.*` fields of a parsed GGUF, with errors naming the key."""

    def __init__(self, fields, path: Path):
        self.fields, self.path = fields, path  # key -> an object with `contents()` (gguf's ReaderField)

    def get(self, key: str, kind: type, default=None):
        f = self.fields.get(key)
        if f is None:
            return default
        try:
            value = f.contents()
        except Exception as e:  # noqa: BLE001  the gguf package raises many kinds on bad data
            raise InputError(f"{self.path}: {key}: unreadable ({e})") from None
        if kind is list:
            ok = isinstance(value, list)
        elif kind is int:
            ok = isinstance(value, int) and not isinstance(value, bool)
        else:
            ok = isinstance(value, kind)
        if not ok:
            raise InputError(f"{self.path}: {key} must be {kind.__name__}, got {type(value).__name__}")
        return value


def read_gguf(path: Path, *, chat_template: str | None = None) -> Tokenizer:
    """`parse_gguf`, finished; `chat_template` (a file) replaces the template the GGUF carries."""
    return finish(parse_gguf(path), chat_template)


def parse_gguf(path: Path) -> Parsed:
    """A GGUF's tokenizer: self-contained (no configs beside it are read), with its own BOS/EOS, stop
    tokens (eos, eot, eom) and chat template."""
    path = Path(path)
    try:
        import gguf  # ~0.4 s (numpy); here a missing one is an input error, not a traceback
    except ImportError as e:  # a dependency in pyproject; say so if it is missing
        raise InputError(f"{path}: reading GGUF needs the 'gguf' package (pip install gguf)") from e
    check_layout(path)  # every count bounded by the file's size before gguf trusts them
    try:
        # the common layout read straight from the bytes (gguf_fields: GGUFReader's numpy views took
        # a minute on a 262k vocabulary); any other through the package, as before
        fields = read_fields(path)
        if fields is None:
            fields = gguf.GGUFReader(str(path), "r").fields
    except OSError as e:
        raise InputError(f"{path}: cannot read ({e.strerror or e})") from None
    except Exception as e:  # noqa: BLE001  ValueError/struct errors on a truncated or corrupt container
        raise InputError(f"{path}: not a readable GGUF file ({e})") from None
    k = _Keys(fields, path)
    model = k.get("tokenizer.ggml.model", str)
    if model is None:
        raise InputError(f"{path}: no tokenizer.ggml.model key (a GGUF without a tokenizer?)")
    tokens = k.get("tokenizer.ggml.tokens", list)
    if not tokens:
        raise InputError(f"{path}: tokenizer.ggml.tokens is missing or empty")
    if not all(isinstance(t, str) for t in tokens):
        raise InputError(f"{path}: tokenizer.ggml.tokens must be strings")
    n = len(tokens)
    types = k.get("tokenizer.ggml.token_type", list) or [TYPE_NORMAL] * n
    scores = k.get("tokenizer.ggml.scores", list)
    for name, arr in (("token_type", types), ("scores", scores)):
        if arr is not None and len(arr) != n:
            raise InputError(f"{path}: tokenizer.ggml.{name} has {len(arr)} entries for {n} tokens")
    ids = {}
    for key in _ID_KEYS:
        i = k.get(f"tokenizer.ggml.{key}_token_id", int)
        if i is not None:
            if not 0 <= i < n:
                raise InputError(f"{path}: tokenizer.ggml.{key}_token_id = {i} is outside the {n} tokens")
            ids[key] = i
    flags = {"add_bos": k.get("tokenizer.ggml.add_bos_token", bool),
             "add_eos": k.get("tokenizer.ggml.add_eos_token", bool)}
    template = k.get("tokenizer.chat_template", str)
    keyed = {key for key in ("eot", "eom", "fim_pre", "fim_suf", "fim_mid", "fim_pad", "fim_rep", "fim_sep")
             if k.get(f"tokenizer.ggml.{key}_token_id", int) is not None}
    types, type_notes = llama_cpp_types(tokens, types, keyed)
    if model == "gpt2":
        parsed = _bpe(path, k, tokens, types, ids, flags)
    elif model == "gemma4":
        parsed = _gemma4(path, k, tokens, types, ids, flags)
    elif model in ("llama", "t5"):
        parsed = _spm(path, k, tokens, types, scores, ids, flags, unigram=model == "t5")
    elif model == "bert":
        parsed = _wordpiece(path, tokens, types, ids, flags)
    else:
        raise UnsupportedError(f"tokenizer model {model!r} is not supported (gpt2, gemma4, llama, t5 and bert are)",
                               json_path="tokenizer.ggml.model", path=str(path))
    strip = rstrip_ids(k.get("general.name", str) or "", tokens, types)
    if strip:
        type_notes.append(f"{len(strip)} special token(s) strip the whitespace after them, as llama.cpp does for Phi-3")
    # llama.cpp matches every unknown, control and user-defined token whole in the input (its special
    # tokens cache): SentencePiece's reading leaves the unknown piece out ("<unk>" read as pieces)
    have = {t.id for t in parsed.added}
    unknown = tuple(AddedToken(i, t, normalized=False, special=True) for i, (t, ty) in enumerate(zip(tokens, types))
                    if ty == TYPE_UNKNOWN and i not in have)
    parsed.added = tuple(dataclasses.replace(t, rstrip=True) if t.id in strip else t
                         for t in sorted(parsed.added + unknown, key=lambda t: t.id))
    parsed.notes = [*parsed.notes, *type_notes]
    parsed.bos = tokens[ids["bos"]] if "bos" in ids else ""
    parsed.eos = tokens[ids["eos"]] if "eos" in ids else ""
    parsed.eos_source = "tokenizer.ggml.eos_token_id"
    parsed.extra_stops = tuple((tokens[ids[key]], f"tokenizer.ggml.{key}_token_id") for key in ("eos", "eot", "eom")
                               if key in ids)
    parsed.template = (template or "", f"{path.name} tokenizer.chat_template" if template else "")
    return parsed


def _added(tokens, types) -> tuple[AddedToken, ...]:
    return tuple(AddedToken(i, t, normalized=False, special=ty == TYPE_CONTROL)
                 for i, (t, ty) in enumerate(zip(tokens, types)) if ty in (TYPE_CONTROL, TYPE_USER))


def _template(prefix: tuple[tuple[str, int], ...], suffix: tuple[tuple[str, int], ...]):
    if not prefix and not suffix:
        return None
    single = tuple(R.Piece(t, 0, True) for t, _ in prefix) + (R.Piece("A"),) + \
        tuple(R.Piece(t, 0, True) for t, _ in suffix)
    pair = single + (R.Piece("B", 1),) + tuple(R.Piece(t, 1, True) for t, _ in suffix)
    specials = tuple(R.SpecialToken(t, (i,), (t,)) for t, i in sorted(set(prefix) | set(suffix)))
    return R.TemplateProcessing(single=single, pair=pair, special_tokens=specials)


def _vocab_and_merges(path, k: _Keys, tokens, model: str) -> tuple[dict[str, int], list[tuple[str, str]]]:
    merges_raw = k.get("tokenizer.ggml.merges", list)
    if merges_raw is None:
        raise InputError(f"{path}: a {model} tokenizer needs tokenizer.ggml.merges")
    vocab = {}
    for i, t in enumerate(tokens):
        vocab.setdefault(t, i)
    merges = []
    for r, m in enumerate(merges_raw):
        a, sep, b = m.partition(" ") if not m.startswith(" ") else (m[:1], " ", m[2:])
        if not sep or not a or not b or a not in vocab or b not in vocab:
            raise InputError(f"{path}: tokenizer.ggml.merges[{r}] = {m[:60]!r} is not two tokens of the vocabulary")
        merges.append((a, b))
    return vocab, merges


def _gemma4(path, k: _Keys, tokens, types, ids, flags) -> Parsed:
    """Gemma-4's SentencePiece-style BPE as llama.cpp runs it: every space written `▁`, the text
    split only into runs of newlines and runs of the rest, merges by rank over the raw characters,
    a piece with no token as its `<0xXX>` byte tokens; decoded back with `▁` as a space.  llama.cpp
    always adds BOS for it."""
    vocab, merges = _vocab_and_merges(path, k, tokens, "gemma4")
    add_eos = bool(flags["add_eos"])
    bos = ((tokens[ids["bos"]], ids["bos"]),) if "bos" in ids else ()
    eos = ((tokens[ids["eos"]], ids["eos"]),) if add_eos and "eos" in ids else ()
    notes = ["gemma4: spaces as \u2581, split at newline runs, BPE over characters with <0xXX> byte fallback "
             "(llama.cpp's gemma4 pre-tokenizer); BOS always added, as llama.cpp does for it"]
    return Parsed(model=M.BPE(vocab=vocab, merges=tuple(merges), byte_fallback=True), side=SideFiles(None),
                  inputs=[path], normalizer=N.Replace(Pattern(" ", regex=False), "\u2581"),
                  pre_tokenizer=P.Split(Pattern("[^\n]+|[\n]+", regex=True), "Isolated"),
                  decoder=D.Sequence((D.Replace(Pattern("\u2581", regex=False), " "), D.ByteFallback(), D.Fuse())),
                  post_processor=_template(bos, eos), added=_added(tokens, types), notes=notes,
                  add_bos_token=bool(bos), add_eos_token=bool(eos))


def _user_text(tokens, types) -> tuple[Loss, ...]:
    """llama.cpp prints a user-defined token as the text it stores; the byte-level decoder reads
    that text as GPT-2 byte characters.  The two differ for a token stored as plain text (DeepSeek's
    `ö`, whose character is the byte 0xF6 to the decoder): a reader difference, triggered by those
    tokens' texts (where llama.cpp's decode shows them)."""
    plain = tuple(t for t, ty in zip(tokens, types) if ty == TYPE_USER
                  and b"".join(token_to_bytes(c) or c.encode() for c in t) != t.encode())
    if not plain:
        return ()
    return (Loss(L.GGUF_USER_TEXT, "reader", "tokenizer.ggml.token_type",
                 f"{len(plain)} user-defined token(s) stored as plain text decode to other bytes through the "
                 "byte-level decoder than llama.cpp prints", plain[0], trigger=plain),)


def _bpe(path, k: _Keys, tokens, types, ids, flags) -> Parsed:
    vocab, merges = _vocab_and_merges(path, k, tokens, "gpt2")
    pre_name = k.get("tokenizer.ggml.pre", str)
    notes = []
    if pre_name is None:
        notes.append("no tokenizer.ggml.pre: llama.cpp's default split regexes (old conversion; the model's own "
                     "pre-tokenizer may differ)")
        pre_name = "default"
    if pre_name not in PRE:
        raise UnsupportedError(f"pre-tokenizer {pre_name!r} is not in the table of known llama.cpp pre-tokenizers "
                               f"({', '.join(sorted(PRE))})", json_path="tokenizer.ggml.pre", path=str(path))
    regexes, pre_flags = PRE[pre_name]
    notes.append(f"pre-tokenizer {pre_name!r}: {len(regexes)} split regex(es) as llama.cpp applies them")
    pre = P.Sequence(tuple(P.Split(Pattern(r, regex=True), "Isolated") for r in regexes)
                     + (P.ByteLevel(add_prefix_space=False, trim_offsets=True, use_regex=False),))
    add_bos = flags["add_bos"] if flags["add_bos"] is not None else pre_flags.get("add_bos", False)
    add_eos = bool(flags["add_eos"])
    model = M.BPE(vocab=vocab, merges=tuple(merges), ignore_merges=pre_flags.get("ignore_merges", False))
    bos = ((tokens[ids["bos"]], ids["bos"]),) if add_bos and "bos" in ids else ()
    eos = ((tokens[ids["eos"]], ids["eos"]),) if add_eos and "eos" in ids else ()
    post = _template(bos, eos) or R.ByteLevel(add_prefix_space=True, trim_offsets=False, use_regex=True)
    return Parsed(model=model, side=SideFiles(None), inputs=[path], pre_tokenizer=pre, decoder=D.ByteLevel(),
                  post_processor=post, added=_added(tokens, types), notes=notes, add_bos_token=bool(bos),
                  add_eos_token=bool(eos),
                  differences=_user_text(tokens, types))


def _spm(path, k: _Keys, tokens, types, scores, ids, flags, unigram: bool = False) -> Parsed:
    """Rebuild the SentencePiece ModelProto and read it like a `.model` file: BPE for `llama`,
    Unigram with the normalizer's precompiled charsmap for `t5` (llama.cpp's UGM)."""
    from sentencepiece import sentencepiece_model_pb2 as pb  # protobuf (~30 ms): only for a SentencePiece GGUF

    if scores is None:
        kind = "t5 (SentencePiece Unigram)" if unigram else "llama (SentencePiece)"
        raise InputError(f"{path}: a {kind} tokenizer needs tokenizer.ggml.scores")
    unk = ids.get("unknown", 0)
    proto = pb.ModelProto()
    for i, (t, s, ty) in enumerate(zip(tokens, scores, types)):
        p = proto.pieces.add()
        p.piece, p.score = t, float(s)
        # llama.cpp marks padding rows UNKNOWN too and matches them whole in the input (Phi-3's
        # [PAD32011]), as SentencePiece does a user-defined piece; it allows one unknown piece
        p.type = ty if ty in (1, 2, 3, 4, 5, 6) and (ty != TYPE_UNKNOWN or i == unk) else \
            (TYPE_USER if ty == TYPE_UNKNOWN else TYPE_NORMAL)
    ts, ns = proto.trainer_spec, proto.normalizer_spec
    ts.model_type = 1 if unigram else 2  # BPE: llama.cpp's SPM tokenizer merges by piece score
    ts.byte_fallback = any(ty == TYPE_BYTE for ty in types)
    ts.unk_id = unk
    ts.bos_id = ids.get("bos", -1)
    ts.eos_id = ids.get("eos", -1)
    ts.pad_id = ids.get("padding", -1)
    ns.name = "identity"
    charsmap = k.get("tokenizer.ggml.precompiled_charsmap", list) if unigram else None
    if charsmap:
        if not all(isinstance(b, int) and 0 <= b < 256 for b in charsmap):
            raise InputError(f"{path}: tokenizer.ggml.precompiled_charsmap must be bytes")
        ns.name, ns.precompiled_charsmap = "charsmap", bytes(charsmap)
    ns.add_dummy_prefix = k.get("tokenizer.ggml.add_space_prefix", bool, True)
    ns.remove_extra_whitespaces = k.get("tokenizer.ggml.remove_extra_whitespaces", bool, False)
    ns.escape_whitespaces = True
    # llama.cpp's defaults: SentencePiece BPE adds BOS, Unigram (T5) appends EOS
    add_bos = flags["add_bos"] if flags["add_bos"] is not None else not unigram
    add_eos = flags["add_eos"] if flags["add_eos"] is not None else unigram
    return parse_proto(proto, path, SideFiles(None), add_bos, add_eos)


def _wordpiece(path, tokens, types, ids, flags) -> Parsed:
    """llama.cpp's BERT vocab: `▁x` is the word-initial `x`, a bare `x` the continuation `##x`;
    control tokens ([CLS], ...) are kept as they are."""
    vocab = {}
    for i, (t, ty) in enumerate(zip(tokens, types)):
        if ty == TYPE_CONTROL or (t.startswith("[") and t.endswith("]")):
            text = t
        elif t.startswith("\u2581"):
            text = t[1:]
        else:
            text = "##" + t
        vocab.setdefault(text, i)
    cls = ids.get("cls", ids.get("bos"))
    sep = ids.get("seperator", ids.get("eos"))
    unk = tokens[ids["unknown"]] if "unknown" in ids else "[UNK]"
    add_bos = flags["add_bos"] if flags["add_bos"] is not None else True
    add_eos = flags["add_eos"] if flags["add_eos"] is not None else True
    prefix = ((tokens[cls], cls),) if add_bos and cls is not None else ()
    suffix = ((tokens[sep], sep),) if add_eos and sep is not None else ()
    return Parsed(model=M.WordPiece(vocab=vocab, unk_token=unk), side=SideFiles(None), inputs=[path],
                  added=_added(tokens, types),
                  normalizer=N.BertNormalizer(clean_text=True, handle_chinese_chars=True, strip_accents=None,
                                              lowercase=True),
                  pre_tokenizer=P.BertPreTokenizer(), decoder=D.WordPiece(prefix="##", cleanup=True),
                  post_processor=_template(prefix, suffix), add_bos_token=bool(prefix), add_eos_token=bool(suffix),
                  notes=["BERT vocabulary: llama.cpp's ▁-prefixed word starts and bare continuations restored to "
                         "WordPiece ##-continuations; lowercased as llama.cpp does"],
                  differences=(WPM_DEPARTURE,))


# Where llama.cpp's WordPiece preprocessing departs from BERT's (measured with llama-cpp-python 0.3.36
# on ggml-vocab-bert-bge.gguf, every mark, format and control character probed): it drops every
# mark (Mc and Me too, and marks newer than the Unicode tables HF and the runtime use) where BERT
# drops the Mn it knows (Devanagari `ा` gives no id), and format characters newer than those
# tables; a composed Hangul syllable keeps only its leading jamo (`가` gives `ᄀ` alone);
# VT/FF/FS..US/NEL split words where BERT deletes them; a word of more than BERT's 100 characters
# is still split into pieces.  The IR keeps BERT's semantics (the model's
# tokenizer, which HF and the runtime run): a reader difference, triggered exactly there.
WPM_DEPARTURE = Loss(L.GGUF_WPM, "reader", "tokenizer.ggml.model",
                     "llama.cpp's WordPiece drops every mark and newer format characters, keeps only a composed Hangul "
                     "syllable's leading jamo, splits at VT/FF/NEL and has no word-length limit; the .mtok "
                     "follows BERT's preprocessing (the model's own tokenizer)", "\u0915\u093e",
                     pattern="[\\p{M}\\p{Cf}\uac00-\ud7a3\x0b\x0c\x1c-\x1f\x85]|\\S{101,}")
