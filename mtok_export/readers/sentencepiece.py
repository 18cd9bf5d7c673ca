"""SentencePiece `.model` (a serialized `ModelProto`) -> IR, plus the configs beside it.

The IR is built the way transformers' SentencePiece converters build `tokenizer.json` (SpmConverter,
LlamaConverter and `build_tokenizer_from_spm_proto`), so HF semantics equal SentencePiece's, and in
the forms MNN's lowering carries exactly wherever one exists:

* **Model.**  Unigram -> `Unigram([(piece, score)...], unk_id, byte_fallback)` (scores kept).
  BPE -> `BPE(vocab, merges, byte_fallback, unk_token, fuse_unk=True)`.  SentencePiece BPE merges
  the adjacent pair whose *result* has the highest score; the equivalent HF merge list is every
  split of a normal piece into two normal pieces, ranked by (-score of the piece, its id, left,
  right) (`sp_merges`).  Piece scores are not kept for BPE: they are implied by the merge ranks,
  and the legacy type-0 writer recomputes them (score = -(rank of the first merge that makes the
  piece) - 1; 0 for pieces no merge makes), which orders merges the same way.
* **Piece types.**  control (3) -> special `AddedToken`; user-defined (4) -> non-special
  `AddedToken`; both `normalized=False` (each chunk between added tokens gets its own dummy prefix,
  as in transformers' legacy mode).  unknown (2) -> `unk_id` / `unk_token`.  byte (6) `<0xHH>`
  pieces are what `byte_fallback` uses.  unused (5) pieces stay in the vocab but are never merge
  parts (as in transformers); SentencePiece's re-segmentation of them has no HF form.  The legacy
  writer recovers types from the IR: unk, added tokens (special -> control), `<0xHH>` with byte
  fallback -> byte, everything else normal.  Which library is the reference for control-piece text:
  transformers (split out) when HF configs or a chat template sit beside the model, sentencepiece
  (ordinary text) for a bare `.model`; the latter is recorded as the `sp-control-text` difference,
  which the `.mtok` lowering resolves in sentencepiece's favour.
* **Normalizer** (SentencePiece's order: charsmap, whitespace clean-up, dummy prefix, escaping).
  The charsmap itself is carried as `Precompiled(blob)` (named rules `nmt_nfkc`, `nfkc`,
  `*_cf` or user TSV rules all live in the blob; `identity` has none).  Then:

  - no `remove_extra_whitespaces` (Llama, Mistral): `Prepend('▁')`, `Replace(' ', '▁')`,
    exactly transformers' LlamaConverter (legacy) form, which MNN runs as it is;
  - `remove_extra_whitespaces` + `add_dummy_prefix` (T5, most Unigram models):
    `Prepend(' ')` and `COLLAPSE_PASSES` x `Replace('  ', ' ')` as the normalizer, so the dummy
    space absorbs leading spaces and space runs collapse (exact for runs up to 2**16 spaces), then
    the pre-tokenizer `Split(/ (?![\\s\\S])/, Removed)` drops the one trailing space and
    `Metaspace('▁', never, split=False)` escapes spaces.  SentencePiece strips only U+0020, so HF's
    `Strip` (all White_Space) would be wrong for a trailing newline under plain `nfkc`; and a
    `Prepend` after a `Strip` would turn a whitespace-only chunk into '▁' in MNN, whose Prepend
    does not skip empty text.  Every step here is literal or an ASCII regex the runtime runs.
  - `remove_extra_whitespaces` without a dummy prefix: leading spaces use `Strip(left)`, which
    also strips other whitespace (recorded in `Metadata.notes`).

  `transformers`' regex forms (`Replace(/ {2,}/)`, `Replace(/\\A +| +\\z/)`) are exact in HF but
  have no runtime form, which is why they are not used.
* **Decoder**: `Sequence[Replace('▁', ' '), ByteFallback (if byte_fallback), Fuse,
  Strip(' ', 1, 0) (if add_dummy_prefix)]`.
* **BOS/EOS** (`bos_eos_policy`): SentencePiece itself adds nothing.  `tokenizer_config.json`'s
  `add_bos_token` / `add_eos_token` decide when present; otherwise the tokenizer class's default
  (Llama/Gemma: BOS; T5: EOS); otherwise nothing.  The result is a `TemplateProcessing`
  (`<s> $A`, `$A </s>`, ...) in LlamaTokenizerFast's shape, and `Metadata.add_bos_token` /
  `add_eos_token` record it (the verifier derives the reference's policy from them).
* **Header lists, template, provenance**: `finish.finish`, as for every format; the eos token is
  the config's, else the model's eos piece.

Companions read from `config_dir` (default: the model's folder): the configs of `finish.SideFiles`
and the chat template (`chat_template.jinja`, `.json` or the config key)."""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

from .. import cache
from .. import losses as L
from ..errors import InputError, UnsupportedError
from ..ir import AddedToken, Tokenizer
from ..ir import models as M
from ..ir.sentencepiece import SPACE, PieceType, bos_eos_template, sp_decoder, sp_merges, sp_normalizer
from ..losses import Loss
from .chat_source import MISTRAL_SP_FILE
from .finish import SPECIAL_ROLES, Parsed, SideFiles, decoder_entries, decoder_token, finish, read_side_files
from .hf_config import find_templates

MODEL_FILES = ("tokenizer.model", "spiece.model", "sentencepiece.bpe.model", "ice_text.model")

# Tokenizer classes whose BOS/EOS defaults we mirror when tokenizer_config.json does not say.
_ADDS = {
    ("Llama", "CodeLlama", "Gemma", "Mistral"): (True, False),
    ("T5", "MT5", "UMT5"): (False, True),
}


# ----------------------------------------------------------------------- the .model file

def find_model_file(directory: Path) -> Path:
    for name in MODEL_FILES:
        if (directory / name).is_file():
            return directory / name
    found = sorted(directory.glob("*.model"))
    if len(found) == 1:
        return found[0]
    raise InputError(f"{directory}: no SentencePiece model here (looked for {', '.join(MODEL_FILES)} or one *.model)")


def parse_model_proto(data: bytes, path) -> object:
    """Bytes -> `ModelProto`; a clean `InputError` naming the file (and where, when we can tell)."""
    # protobuf (~30 ms): only when a .model is parsed, not when its answer is cached (a warm export)
    from google.protobuf.message import DecodeError
    from sentencepiece import sentencepiece_model_pb2 as pb

    m = pb.ModelProto()
    try:
        m.ParseFromString(data)
    except (DecodeError, ValueError) as e:
        where = _wire_problem(data)
        raise InputError(f"{path}: not a SentencePiece model: {where or e}") from None
    if not m.pieces:
        raise InputError(f"{path}: not a SentencePiece model: no pieces "
                         f"({len(data)} bytes parsed as an empty ModelProto)")
    return m


_FIELDS = {1: "pieces", 2: "trainer_spec", 3: "normalizer_spec", 4: "self_test_data", 5: "denormalizer_spec"}


def _varint(buf: bytes, pos: int) -> tuple[int, int]:
    value, shift = 0, 0
    while True:
        if pos >= len(buf):
            raise IndexError
        b = buf[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        if not b & 0x80:
            return value, pos
        shift += 7
        if shift > 63:
            raise ValueError


def _wire_problem(data: bytes, pos: int = 0, end: int | None = None, names=_FIELDS, depth: int = 0) -> str:
    """Walk the protobuf wire format and say where it breaks (protobuf itself gives no offset)."""
    end = len(data) if end is None else end
    count: dict[int, int] = {}
    while pos < end:
        start = pos
        try:
            key, pos = _varint(data, pos)
            field, wire = key >> 3, key & 7
            name = names.get(field, f"field {field}")
            if field == 1 and names is _FIELDS:
                name = f"pieces[{count.get(1, 0)}]"
            count[field] = count.get(field, 0) + 1
            if wire == 0:
                _, pos = _varint(data, pos)
            elif wire == 1:
                pos += 8
            elif wire == 5:
                pos += 4
            elif wire == 2:
                length, pos = _varint(data, pos)
                if pos + length > end:
                    return (f"byte {start}: {name} declares {length} bytes but only {end - pos} remain "
                            f"(truncated file?)")
                if depth == 0 and field in (1, 2, 3, 5):
                    inner = _wire_problem(data, pos, pos + length, {}, depth + 1)
                    if inner:
                        return f"inside {name}: {inner}"
                pos += length
            else:
                return f"byte {start}: {name} has invalid wire type {wire}"
            if pos > end:
                return f"byte {start}: {name} runs past the end (truncated file?)"
        except (IndexError, ValueError):
            return f"byte {start}: truncated or malformed field key/length"
    return ""


def is_sentencepiece(path: Path) -> bool:
    """Content check: the file parses as a `ModelProto` with pieces (names are not trusted).  The
    answer is cached by the file's bytes, this module and the protobuf/sentencepiece versions:
    classifying a directory that holds a tokenizer.model beside its tokenizer.json would otherwise
    import and run protobuf on every export of it (~50 ms)."""
    try:
        with open(path, "rb") as f:
            head = f.read(2)
            if len(head) < 2 or head[0] != 0x0A:  # field 1 (pieces), length-delimited, comes first
                return False
            data = head + f.read()
    except OSError:
        return False
    digest = cache.key("is-sentencepiece", blobs=(data,), files=(__file__,), dists=("protobuf", "sentencepiece"))
    return cache.computed("is-sentencepiece", digest, lambda: _parses(data, path), valid=lambda v: type(v) is bool)


def _parses(data: bytes, path) -> bool:
    try:
        parse_model_proto(data, path)
    except InputError:
        return False
    return True


def parse_sentencepiece(path: Path, config_dir: Path | None = None, *, add_bos: bool | None = None,
                        add_eos: bool | None = None) -> Parsed:
    """A SentencePiece model (or a folder holding one) and the configs in `config_dir` (default: its
    folder).  `add_bos`/`add_eos` override the BOS/EOS policy found in the configs."""
    path = Path(path)
    if path.is_dir():
        path = find_model_file(path)
    try:
        data = path.read_bytes()
    except OSError as e:
        raise InputError(f"{path}: cannot read ({e.strerror or e})") from e
    proto = parse_model_proto(data, path)
    return parse_proto(proto, path, read_side_files(Path(config_dir) if config_dir is not None else path.parent),
                       add_bos, add_eos)


def read_sentencepiece(path: Path, config_dir: Path | None = None, *, add_bos: bool | None = None,
                       add_eos: bool | None = None, chat_template: str | None = None) -> Tokenizer:
    """`parse_sentencepiece`, finished; `chat_template` picks a named template or a file."""
    return finish(parse_sentencepiece(path, config_dir, add_bos=add_bos, add_eos=add_eos), chat_template)


def parse_proto(proto, path: Path, side: SideFiles, add_bos=None, add_eos=None) -> Parsed:
    """A parsed `ModelProto` (from a `.model`, or rebuilt from a GGUF with `SideFiles(None)`) and its
    configs -> what it holds (see the module docstring)."""
    ts, ns, tcfg = proto.trainer_spec, proto.normalizer_spec, side.tcfg
    notes: list[str] = []
    pieces = _pieces(proto, path)
    n = len(pieces)
    model = _model(pieces, ts, path, notes)
    if proto.HasField("denormalizer_spec") and proto.denormalizer_spec.precompiled_charsmap:
        notes.append("the denormalizer (decode-time charsmap) is ignored")
    tclass, legacy = tcfg.get("tokenizer_class"), tcfg.get("legacy")  # types checked by load_json_object
    dummy = ns.add_dummy_prefix
    if isinstance(tcfg.get("add_prefix_space"), bool) and tcfg["add_prefix_space"] != dummy:
        notes.append(f"tokenizer_config.json add_prefix_space={tcfg['add_prefix_space']} overrides the model's "
                     f"add_dummy_prefix={dummy}")
        dummy = tcfg["add_prefix_space"]
    if ns.remove_extra_whitespaces and not dummy:
        notes.append("remove_extra_whitespaces without a dummy prefix: leading whitespace other than U+0020 "
                     "is stripped too (Strip)")
    if legacy is False and ns.remove_extra_whitespaces:
        notes.append("legacy=false is ignored with remove_extra_whitespaces: the dummy prefix follows every "
                     "added token")
    normalizer, pre = sp_normalizer(bytes(ns.precompiled_charsmap), add_dummy_prefix=dummy,
                                    remove_extra_whitespaces=ns.remove_extra_whitespaces,
                                    escape_whitespaces=ns.escape_whitespaces, legacy=legacy is not False)
    decoder = sp_decoder(byte_fallback=bool(ts.byte_fallback), add_dummy_prefix=dummy,
                         escape_whitespaces=ns.escape_whitespaces)
    if tclass and tclass.startswith("ChatGLM"):
        notes.append("ChatGLMTokenizer rewrites text (newlines, tabs, space runs) and appends [gMASK] <sop> in "
                     "its own Python code; the SentencePiece model alone does neither")

    added = _added_tokens(pieces, side, dummy, notes)
    ids = {p: i for i, (p, _, _) in enumerate(pieces)}
    ids.update({t.content: t.id for t in added})

    def piece_id(text: str | None, fallback: int) -> tuple[str, int] | None:
        if text is not None:
            return (text, ids[text]) if text in ids else None
        return (pieces[fallback][0], fallback) if 0 <= fallback < n else None

    bos = piece_id(side.role("bos_token"), ts.bos_id)
    eos = piece_id(side.role("eos_token"), ts.eos_id)
    want_bos, want_eos, why = bos_eos_policy(tcfg, tclass, add_bos, add_eos)
    if want_bos and bos is None:
        notes.append(f"{why} says add BOS, but there is no BOS token; none added")
    if want_eos and eos is None:
        notes.append(f"{why} says add EOS, but there is no EOS token; none added")
    post = bos_eos_template([bos] if want_bos and bos else [], [eos] if want_eos and eos else [])
    notes.append(f"BOS/EOS policy from {why}: add_bos={want_bos}, add_eos={want_eos}")
    # A bare model (no HF config, no template beside it) is sentencepiece's: its control pieces are
    # never produced from text.  The IR keeps transformers' form (they are special added tokens, as
    # the legacy writer needs); the .mtok lowering follows sentencepiece (`lower.models`).
    bare = side.directory is not None and not side.inputs and \
        not find_templates(side.directory, tcfg, side.config_path).named
    return Parsed(model=model, side=side, inputs=[path], normalizer=normalizer, pre_tokenizer=pre, decoder=decoder,
                  post_processor=post, added=added, notes=notes, bos=bos[0] if bos else "",
                  eos=eos[0] if eos else "",
                  eos_source="config eos_token" if side.role("eos_token") else "the model's eos_id",
                  add_bos_token=bool(post and want_bos and bos), add_eos_token=bool(post and want_eos and eos),
                  differences=_differences(model, added, proto, bare),
                  # mistral_common generates its template (`chat_source`); embedded, it splits the
                  # control pieces out (`chat_source.split_controls`)
                  mistral_file=path if MISTRAL_SP_FILE.search(path.name) else None)


def _pieces(proto, path: Path) -> list[tuple[str, float, PieceType]]:
    """(piece, score, type) by id, each checked: non-empty UTF-8 text, a finite score, no repeats."""
    pieces = []
    seen: dict[str, int] = {}
    known = {int(t): t for t in PieceType}
    for i, p in enumerate(proto.pieces):
        if not p.piece:
            raise InputError(f"{path}: pieces[{i}] is empty")
        if not isinstance(p.piece, str):  # protobuf hands back bytes when the text is not UTF-8
            raise InputError(f"{path}: pieces[{i}] is not valid UTF-8: {p.piece[:40]!r}")
        if not math.isfinite(p.score):
            raise InputError(f"{path}: pieces[{i}] ({p.piece!r}) has the score {p.score}; scores must be finite")
        if p.piece in seen:
            raise InputError(f"{path}: piece {p.piece!r} appears twice (ids {seen[p.piece]} and {i})")
        seen[p.piece] = i
        pieces.append((p.piece, float(p.score), known.get(p.type, PieceType.NORMAL)))
    return pieces


def _model(pieces, ts, path: Path, notes: list[str]):
    """The Unigram or BPE model of the pieces, with notes on what HF and MNN cannot mirror."""
    model_type = ts.model_type
    if model_type not in (1, 2):
        name = {3: "WORD", 4: "CHAR"}.get(model_type, str(model_type))
        raise UnsupportedError(f"SentencePiece model type {name} is not supported (only UNIGRAM and BPE)",
                               json_path="trainer_spec.model_type", path=str(path))
    if ts.treat_whitespace_as_suffix:
        raise UnsupportedError("treat_whitespace_as_suffix (a dummy suffix instead of a prefix) has no HF or MNN form",
                               json_path="trainer_spec.treat_whitespace_as_suffix", path=str(path))
    n = len(pieces)
    unk_ids = [i for i, (_, _, t) in enumerate(pieces) if t == PieceType.UNKNOWN]
    if 0 <= ts.unk_id < n and pieces[ts.unk_id][2] == PieceType.UNKNOWN:
        unk_id = ts.unk_id
    else:
        unk_id = unk_ids[0] if unk_ids else None
    if unk_id is None:
        notes.append("the model has no unknown piece")
    byte_fallback = bool(ts.byte_fallback)
    if byte_fallback and sum(1 for _, _, t in pieces if t == PieceType.BYTE) < 256:
        notes.append("byte_fallback is on but fewer than 256 <0xHH> byte pieces exist")
    if any(t == PieceType.UNUSED for _, _, t in pieces):
        notes.append("unused pieces: SentencePiece re-segments them, HF and MNN use them as they are")
    if model_type == 1:
        return M.Unigram(tuple((p, s) for p, s, _ in pieces), unk_id, byte_fallback)
    return M.BPE({p: i for i, (p, _, _) in enumerate(pieces)}, sp_merges(pieces),
                 unk_token=pieces[unk_id][0] if unk_id is not None else None, fuse_unk=True,
                 byte_fallback=byte_fallback)


def _differences(model, added, proto, bare: bool) -> tuple[Loss, ...]:
    """Where this IR knowingly differs from the sentencepiece library's own encoding and decoding."""
    ts, ns = proto.trainer_spec, proto.normalizer_spec
    diffs = []
    controls = tuple(t.content for t in added if bare and t.special)
    if controls:
        diffs.append(Loss(L.SP_CONTROL_TEXT, "reader", "$.added_tokens", "control pieces are split out of the text "
                          "as transformers does; the sentencepiece library (the reference of a bare model) encodes "
                          "their text as ordinary text", trigger=controls))
    if others := tuple(t.content for t in added if t.content and t.content not in controls):
        diffs.append(Loss(L.SP_ADDED_TOKEN_TEXT, "reader", "$.added_tokens", "control and user-defined pieces are "
                          "split out of the text as transformers does; the sentencepiece library encodes their text "
                          "as ordinary text", trigger=others))
    if isinstance(model, M.Unigram):
        reserved = tuple(p for i, (p, _) in enumerate(model.vocab)
                         if i == model.unk_id or (model.byte_fallback and len(p) == 6 and p.startswith("<0x")))
        diffs.append(Loss(L.SP_RESERVED_PIECE_TEXT, "reader", "$.model.vocab", "literal unk or <0xHH> text can "
                          "match those pieces in the lattice; the sentencepiece library never produces them from text",
                          trigger=reserved))
        diffs.append(Loss(L.SP_FLOAT32_VITERBI, "reader", "$.model.vocab", "the sentencepiece library adds path "
                          "scores in float32 over the whole text, so deep into a text (one float32 step is 1.2e-4 at a "
                          "total of -1,316) a segmentation scoring a little lower can win; HF and the runtime add "
                          "exactly and keep the higher (shown per mismatch by re-running the library's Viterbi)"))
    if ns.remove_extra_whitespaces:
        diffs.append(Loss(L.SP_TRAILING_U2581, "reader", "$.normalizer", "sentencepiece also strips a trailing "
                          "literal U+2581; the runtime would need a non-ASCII regex for that", trigger=(SPACE,)))
    if ns.precompiled_charsmap:
        diffs.append(Loss(L.SP_CHARSMAP, "reader", "$.normalizer", "HF's Precompiled normalizer (what the runtime "
                          "is lowered from) and sentencepiece's own normalize the charsmap's multi-character rules "
                          "differently, e.g. conjoining jamo"))
    diffs.append(Loss(L.SP_UNK_SURFACE, "reader", "$.decoder", f"sentencepiece decodes an unknown piece as "
                      f"{ts.unk_surface!r}; the runtime as the piece itself",
                      trigger=(ts.unk_surface.strip() or ts.unk_surface,)))
    return tuple(diffs)


def bos_eos_policy(tcfg: dict, tclass: str | None, add_bos=None, add_eos=None) -> tuple[bool, bool, str]:
    """-> (add BOS, add EOS, where that came from).  Explicit arguments, then tokenizer_config.json's
    `add_bos_token`/`add_eos_token`, then the tokenizer class's default, then SentencePiece's (none)."""
    base = tclass.removesuffix("Fast").removesuffix("Tokenizer") if tclass else ""
    bos, eos, why = False, False, "SentencePiece's default (adds nothing)"
    for family, (b, e) in _ADDS.items():
        if base in family:
            bos, eos, why = b, e, f"{tclass}'s default"
    if isinstance(tcfg.get("add_bos_token"), bool) or isinstance(tcfg.get("add_eos_token"), bool):
        bos = tcfg.get("add_bos_token", bos) if isinstance(tcfg.get("add_bos_token"), bool) else bos
        eos = tcfg.get("add_eos_token", eos) if isinstance(tcfg.get("add_eos_token"), bool) else eos
        why = "tokenizer_config.json"
    if add_bos is not None or add_eos is not None:
        bos = bos if add_bos is None else add_bos
        eos = eos if add_eos is None else add_eos
        why = "the caller"
    return bos, eos, why


def _added_tokens(pieces, side: SideFiles, dummy: bool, notes: list[str]) -> tuple[AddedToken, ...]:
    """Control and user-defined pieces, then what the configs add (flags from `added_tokens_decoder`,
    `added_tokens.json`, T5's `extra_ids`, named special tokens present in the vocab)."""
    n = len(pieces)
    by_id: dict[int, AddedToken] = {}
    for i, (p, _, t) in enumerate(pieces):
        if t in (PieceType.CONTROL, PieceType.USER_DEFINED):
            by_id[i] = AddedToken(i, p, normalized=False, special=t == PieceType.CONTROL)
    for i, t in decoder_entries(side.tcfg):
        content = t["content"]
        if i < n and pieces[i][0] != content:
            notes.append(f"added_tokens_decoder renames piece {i} {pieces[i][0]!r} to {content!r}: ignored")
            continue
        old = by_id.get(i)
        token = decoder_token(i, {"special": old.special, **t} if old else t)  # a piece's type is its default
        if dummy:  # as transformers: each chunk between added tokens gets the dummy prefix
            token = replace(token, normalized=False)
        by_id[i] = token
    texts = {t.content for t in by_id.values()}
    for content, i in sorted(side.added_json.items(), key=lambda kv: kv[1]):
        if i not in by_id and (i >= n or pieces[i][0] == content):
            by_id[i] = AddedToken(i, content, normalized=False)
            texts.add(content)
    specials = [side.role(k) for k in SPECIAL_ROLES] + side.additional()
    extra = side.tcfg.get("extra_ids")
    base = (side.tcfg.get("tokenizer_class") or "").removesuffix("Fast").removesuffix("Tokenizer")
    if isinstance(extra, int) and extra > 0 and base in ("T5", "MT5", "UMT5") \
            and not any(t.id >= n for t in by_id.values()):
        for k in range(extra):  # T5Tokenizer: <extra_id_{extra-1}> ... <extra_id_0> after the pieces
            content = f"<extra_id_{extra - 1 - k}>"
            if content not in texts:
                by_id[n + k] = AddedToken(n + k, content, normalized=False, special=True)
                texts.add(content)
    ids = {p: i for i, (p, _, _) in enumerate(pieces)}
    ids.update({t.content: t.id for t in by_id.values()})
    for text in specials:
        if text is None:
            continue
        if text not in ids:
            notes.append(f"special token {text!r} named in the configs is not in the vocabulary")
            continue
        i = ids[text]
        old = by_id.get(i)
        if old is None:
            by_id[i] = AddedToken(i, text, normalized=False, special=True)
        elif not old.special:
            by_id[i] = AddedToken(i, old.content, old.single_word, old.lstrip, old.rstrip, old.normalized, True)
    return tuple(by_id[i] for i in sorted(by_id))
