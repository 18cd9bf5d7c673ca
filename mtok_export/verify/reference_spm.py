"""The reference side for a bare SentencePiece model: the `sentencepiece` library itself, plus the
parity run (MNN runtime vs that reference) shared by `scripts/parity_spm.py` and the tests.

SentencePiece knows nothing of added tokens, so wherever the IR (like transformers) splits a
control or user-defined piece out of the text, SentencePiece encodes the same text as pieces.
Those differences belong to the *reader*, not to MNN: the reader records them as `sp-*` losses.
`spm_parity` (for `.mtok`) runs `verify` itself; `spm_parity_txt` (legacy type 0 on MNN 3.4.1)
still classifies them by text (`reader_classifier`) and the type-0 losses by trigger."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from .reference import Reference

def _charsmap_only(model_path) -> object:
    """SentencePiece's own normalizer reduced to the charsmap (no dummy prefix, whitespace
    clean-up or escaping): str -> str."""
    import sentencepiece as spm
    from sentencepiece import sentencepiece_model_pb2 as pb

    m = pb.ModelProto()
    m.ParseFromString(Path(model_path).read_bytes())
    if not m.normalizer_spec.precompiled_charsmap:
        return lambda s: s
    ns = m.normalizer_spec
    ns.add_dummy_prefix = ns.remove_extra_whitespaces = ns.escape_whitespaces = False
    sp = spm.SentencePieceProcessor(model_proto=m.SerializeToString())
    return sp.normalize


def _normalize_with(n, text: str, charsmap) -> str:
    """The IR normalizer with its `Precompiled` step done by SentencePiece itself (other steps as
    `emulate` does them): what `_explain_ids` compares the runtime's table emulation with."""
    from ..ir import normalizers as N
    from . import emulate

    if n is None:
        return text
    if isinstance(n, N.Sequence):
        for c in n.normalizers:
            text = _normalize_with(c, text, charsmap)
        return text
    if isinstance(n, N.Precompiled):
        return charsmap(text)
    return emulate.normalize(n, text)


def spm_reference(model_path, texts, *, add_bos: bool, add_eos: bool, chats=(), bos_id: int | None = None,
                  eos_id: int | None = None, tok=None) -> Reference:
    """`sentencepiece` on `texts`: raw ids, engine ids (`bos_id`/`eos_id`, default the model's, around
    them per `add_bos`/`add_eos`) and decode.  Chats are rendered with transformers only when a
    `tokenizer_config.json` chat template sits beside the model (else `None`s).  `normalize` is the
    IR normalizer (`tok`, default read from the model) with SentencePiece's own charsmap."""
    import sentencepiece as spm

    model_path = Path(model_path)
    sp = spm.SentencePieceProcessor(model_file=str(model_path))
    texts = list(texts)
    raw = [list(x) for x in sp.encode(texts)]
    bos = sp.bos_id() if bos_id is None else bos_id
    eos = sp.eos_id() if eos_id is None else eos_id
    pre = [bos] if add_bos and bos >= 0 else []
    post = [eos] if add_eos and eos >= 0 else []
    engine = [pre + r + post for r in raw]
    decoded = [sp.decode(r) for r in raw]
    chat_text: list = [None] * len(chats)
    chat_ids: list = [None] * len(chats)
    if chats and _has_template(model_path.parent):
        from .reference import _chats
        chat_text, chat_ids = _chats(model_path.parent, list(chats))
    if tok is None:
        from ..readers.sentencepiece import read_sentencepiece
        tok = read_sentencepiece(model_path)
    charsmap = _charsmap_only(model_path)
    norm = tok.normalizer
    return Reference(engine, raw, decoded, chat_text, chat_ids, lambda s: _normalize_with(norm, s, charsmap))


def _has_template(directory: Path) -> bool:
    import json

    p = directory / "tokenizer_config.json"
    if (directory / "chat_template.jinja").is_file() or (directory / "chat_template.json").is_file():
        return True
    try:
        return bool(p.is_file() and json.loads(p.read_bytes()).get("chat_template"))
    except ValueError:
        return False


# ----------------------------------------------------------------------- parity


@dataclass
class Parity:
    model: str
    file: str
    runtime: str  # MNN version that ran it
    checks: dict  # name -> check.Check
    losses: list  # lower.Loss (or type-0 losses)
    ir_raw: tuple[int, int] | None = None  # the IR under HF `tokenizers` vs SentencePiece (ok, total)
    notes: list = field(default_factory=list)

    def classes(self) -> dict[tuple[str, str | None], int]:
        out: dict = {}
        for c in self.checks.values():
            for m in c.mismatches:
                out[(c.name, m.explanation)] = out.get((c.name, m.explanation), 0) + 1
        return out

    @property
    def unexplained(self) -> int:
        return sum(1 for c in self.checks.values() for m in c.mismatches if not m.explanation)

    def cell(self, name: str) -> str:
        c = self.checks[name]
        return f"{c.ok}/{c.total}"

    def stream_but_lead_space(self) -> str:
        """Streaming decode k/n when the one leading space the runtime keeps (the dummy prefix of
        the first piece) is ignored."""
        c = self.checks["streaming decode"]
        extra = sum(1 for m in c.mismatches if isinstance(m.got, str) and m.got == " " + m.expected)
        return f"{c.ok + extra}/{c.total}"


def reader_classifier(tok, sp_norm):
    """text -> the `sp-*` loss code that explains an IR-vs-SentencePiece difference, or None."""
    from ..ir import models as M
    from ..ir import pre_tokenizers as P
    from ..readers.sentencepiece import SPACE, TRAILING_SPACE

    added = [t.content for t in tok.added_tokens if t.content]
    m = tok.model
    reserved = []
    if isinstance(m, M.Unigram):
        reserved = [p for i, (p, _) in enumerate(m.vocab)
                    if i == m.unk_id or (m.byte_fallback and len(p) == 6 and p.startswith("<0x") and p.endswith(">"))]
    pre = tok.pre_tokenizer
    kids = pre.pretokenizers if isinstance(pre, P.Sequence) else (pre,)
    strips = any(isinstance(k, P.Split) and k.pattern.value == TRAILING_SPACE for k in kids)

    def classify(text: str) -> str | None:
        if any(t in text for t in added):
            return "sp-added-token-text"
        if reserved and any(p in text for p in reserved):
            return "sp-reserved-piece-text"
        if strips:
            normalized = sp_norm(text)
            if normalized.rstrip(" " + SPACE) != normalized.rstrip(" "):
                return "sp-trailing-u2581"
        return None

    return classify


def _samples(samples):
    from .corpus import builtin_corpus

    samples = list(builtin_corpus() if samples is None else samples)
    usable = [s for s in samples if "\x00" not in s.text]  # the MNN binding passes a C string
    return usable, len(samples) - len(usable)


def _compare(model_path, tok, losses, path, *, samples, python, timeout, explain_raw, explain_engine,
             explain_stream, prefix) -> Parity:
    """Run the runtime on `path` and compare with SentencePiece; `explain_*` attribute mismatches."""
    import sentencepiece as spm

    from ..lower import Lowering
    from ..lower.processors import split_single
    from .check import Check, Mismatch
    from .runtime import run_runtime

    usable, left_out = _samples(samples)
    texts = [s.text for s in usable]
    pre_ids, post_ids = split_single(Lowering(), tok.post_processor, "$.post_processor") or ((), ())
    ref = spm_reference(model_path, texts, add_bos=bool(pre_ids), add_eos=bool(post_ids),
                        bos_id=pre_ids[0] if pre_ids else None, eos_id=post_ids[0] if post_ids else None, tok=tok)
    sp = spm.SentencePieceProcessor(model_file=str(model_path))
    classify = reader_classifier(tok, _charsmap_only(model_path))
    needed = sorted({i for r in ref.raw for i in r})
    rt = run_runtime(path, texts=texts, decode_ids=needed, python=python, timeout=timeout)
    codes = {x.code for x in losses}
    checks = {n: Check(n) for n in ("raw ids", "engine ids", "streaming decode")}
    prefix = list(prefix)
    unk = sp.unk_id()

    def add(check, sample, want, got, why):
        check.total += 1
        if want == got:
            check.ok += 1
        else:
            code = why()
            check.mismatches.append(Mismatch(check.name, sample.id, sample.text, want, got, (code,) if code else ()))

    for s, got, eng, raw, dec in zip(usable, rt.encodes, ref.engine, ref.raw, ref.decoded):
        got_raw = got[len(prefix):] if got[:len(prefix)] == prefix else got
        add(checks["raw ids"], s, raw, got_raw,
            lambda: classify(s.text) or explain_raw(codes, s.text, raw, got_raw, ref))
        add(checks["engine ids"], s, eng, got,
            lambda: (classify(s.text) if got_raw != raw else None)
            or explain_engine(codes, s.text, eng, raw, got, got_raw, ref))
        stream = b"".join(rt.decodes.get(i, b"") for i in raw).decode("utf-8", "replace")
        add(checks["streaming decode"], s, dec, stream,
            lambda: "sp-unk-surface" if unk >= 0 and unk in raw and "\u2047" in dec
            else explain_stream(codes, dec, stream))
    notes = [f"{left_out} sample(s) with NUL left out (the MNN binding passes a C string)"] if left_out else []
    return Parity(str(model_path), str(path), rt.version, checks, list(losses), notes=notes)


def ir_parity(model_path, tok, samples=None) -> tuple[int, int]:
    """Raw ids of the IR run by HF `tokenizers` vs SentencePiece: how faithful the reader is."""
    import json

    import sentencepiece as spm
    from tokenizers import Tokenizer

    from ..writers.hf_json import to_tokenizer_json

    usable, _ = _samples(samples)
    hf = Tokenizer.from_str(json.dumps(to_tokenizer_json(tok)))
    sp = spm.SentencePieceProcessor(model_file=str(model_path))
    texts = [s.text for s in usable]
    got = [e.ids for e in hf.encode_batch(texts, add_special_tokens=False)]
    want = sp.encode(texts)
    return sum(a == b for a, b in zip(got, want)), len(texts)


def spm_parity(model_path, out_dir, *, target: str = "mnn-3.6", python=None, samples=None, config_dir=None,
               timeout: float = 300.0, with_ir: bool = True) -> Parity:
    """read -> lower(target) -> write_mtok -> MNN runtime, against SentencePiece on the corpus (the same
    `verify` as every export: reader differences and lowering losses explain only what they reproduce)."""
    from ..lower import lower
    from ..mtok import write_mtok
    from ..readers.sentencepiece import read_sentencepiece
    from .check import verify
    from .reference import reference_for

    model_path = Path(model_path)
    tok = read_sentencepiece(model_path, config_dir)
    low, lw = lower(tok, target)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    path = out / "tokenizer.mtok"
    path.write_bytes(write_mtok(low))
    usable, left_out = _samples(samples)
    report = verify(path, tok, low, lw, samples=usable, chats=[], python=python, timeout=timeout,
                    reference=reference_for(tok))
    checks = {c.name: c for c in report.checks if c.name in ("raw ids", "engine ids", "streaming decode")}
    notes = [f"{left_out} sample(s) with NUL left out (the MNN binding passes a C string)"] if left_out else []
    p = Parity(str(model_path), str(path), report.runtime, checks, list(lw.losses), notes=notes)
    if with_ir:
        p.ir_raw = ir_parity(model_path, tok, samples)
    return p


def _explain_type0(codes, text: str, raw, sp_normalize, unk: int) -> str | None:
    """Type-0 runtime differences (see `legacy.sentencepiece_txt`), the first that shows in `text`."""
    from ..readers.sentencepiece import SPACE

    if "type0-normalizer" in codes and text and sp_normalize(text) != SPACE + text.replace(" ", SPACE):
        return "type0-normalizer"
    if "type0-unk" in codes and unk in raw:
        return "type0-unk"
    for code in ("type0-unigram", "type0-merges"):
        if code in codes:
            return code
    return None


def spm_parity_txt(model_path, out_dir, *, python, samples=None, config_dir=None, timeout: float = 300.0) -> Parity:
    """read -> legacy type-0 `tokenizer.txt` (lossy allowed) -> an MNN runtime (3.4.1), against
    SentencePiece.  Mismatches are explained by the `type0_losses` codes."""
    import sentencepiece as spm

    from ..legacy.sentencepiece_txt import format_type0, read_sentencepiece_txt
    from ..lower.legacy.type0 import plan
    from ..readers.sentencepiece import read_sentencepiece

    model_path = Path(model_path)
    tok = read_sentencepiece(model_path, config_dir)
    planned = plan(tok)
    losses = planned.losses
    data = format_type0(planned.content)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    path = out / "tokenizer.txt"
    path.write_bytes(data)
    read_sentencepiece_txt(data, path)  # the file must read back
    sp = spm.SentencePieceProcessor(model_file=str(model_path))

    def explain_raw(codes, text, raw, got, ref):
        return _explain_type0(codes, text, raw, sp.normalize, sp.unk_id())

    def explain_engine(codes, text, eng, raw, got, got_raw, ref):
        if got_raw != raw:
            return explain_raw(codes, text, raw, got_raw, ref)
        return "type0-suffix" if "type0-suffix" in codes and eng[len(got):] and eng[:len(got)] == got else None

    def explain_stream(codes, want, got):
        return "type0-decode" if "type0-decode" in codes else None

    return _compare(model_path, tok, losses, path, samples=samples, python=python, timeout=timeout,
                    explain_raw=explain_raw, explain_engine=explain_engine, explain_stream=explain_stream,
                    prefix=planned.content.prefix)
