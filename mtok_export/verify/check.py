"""Verification (DESIGN section 4): the real MNN runtime loading the written file against the HF
reference, on the built-in corpus plus the user's.  Every mismatch is attributed to a loss recorded
by lowering (by its code) or left unexplained; the report says which."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path

from ..dump.jsonify import id_to_token
from ..errors import InputError, MtokError
from ..ir import models as M
from ..mtok.header import read_header
from . import emulate

CHECKS = ("engine ids", "raw ids", "streaming decode", "full decode", "chat text", "chat ids", "stop ids")


@dataclass
class Mismatch:
    check: str
    sample: str
    text: str
    expected: object
    got: object
    explanation: str | None  # loss code, or None when nothing explains it


@dataclass
class Check:
    name: str
    ok: int = 0
    total: int = 0
    skipped: str = ""  # why the check could not run (or some samples were left out)
    mismatches: list[Mismatch] = field(default_factory=list)


@dataclass
class Report:
    file: str
    target: str
    runtime: str
    checks: list[Check]
    losses: list  # lower.Loss
    accepted: bool  # losses were accepted with --allow-lossy

    def classes(self) -> list[tuple[str, str | None, int, Mismatch]]:
        """(check, explanation, count, first example) per mismatch class."""
        seen: dict = {}
        for c in self.checks:
            for m in c.mismatches:
                key = (c.name, m.explanation)
                if key in seen:
                    seen[key][2] += 1
                else:
                    seen[key] = [c.name, m.explanation, 1, m]
        return [tuple(v) for v in seen.values()]

    @property
    def unexplained(self) -> int:
        return sum(1 for c in self.checks for m in c.mismatches if m.explanation is None)

    @property
    def ok(self) -> bool:
        mismatches = sum(len(c.mismatches) for c in self.checks)
        return mismatches == 0 or (self.unexplained == 0 and self.accepted)


def verify(mtok_path, source_dir, lowered, lowering, *, samples, chats, python=None, accepted=False,
           timeout: float = 300.0, progress=None, reference=None) -> Report:
    """Run the runtime and the reference and compare.  `progress(step)` is told each phase.
    `reference(texts, chats) -> Reference` replaces HF on `source_dir/tokenizer.json` for inputs
    without one (`verify.reference_tiktoken`: tiktoken on a rank file, HF built from the source IR)."""
    from .reference import hf_reference
    from .runtime import run_runtime

    step = progress or (lambda s: None)
    usable = [s for s in samples if "\x00" not in s.text]
    left_out = len(samples) - len(usable)
    runtime_chats = [c for c in chats if c.add_generation_prompt and not c.tools and lowered.chat.text]
    step("reference")
    texts = [s.text for s in usable]
    try:
        ref = reference(texts, runtime_chats) if reference else hf_reference(source_dir, texts, runtime_chats)
    except MtokError:
        raise
    except Exception as e:  # noqa: BLE001  tokenizers/transformers/sentencepiece errors: name them, no traceback
        raise InputError(f"{source_dir}: the reference tokenizer could not run ({type(e).__name__}: {e})") from e
    ids_needed = sorted({i for ids in ref.raw for i in ids})
    step("runtime")
    chat_texts = [t for t in ref.chat_text if t is not None]
    rt = run_runtime(mtok_path, texts=[s.text for s in usable], decode_ids=ids_needed,
                     chats=[list(c.messages) for c in runtime_chats], python=python, timeout=timeout)
    step("compare")
    codes = {loss.code for loss in lowering.losses}
    names = id_to_token(lowered)
    # The file's own header is what the runtime uses: its prefix list and its stop list.
    _, (_, file_stops, prefix), _ = read_header(Path(mtok_path).read_bytes(), str(mtok_path))
    prefix = list(prefix)
    projected = _projection(lowered, texts, ref.raw) if lowering.target == "mnn-legacy" else None
    checks = {name: Check(name) for name in CHECKS}
    note = f"{left_out} sample(s) with NUL left out: the MNN Python binding passes text as a C string" if left_out else ""
    for name in ("engine ids", "raw ids", "streaming decode"):
        checks[name].skipped = note

    for k, (s, got, eng, raw, dec) in enumerate(zip(usable, rt.encodes, ref.engine, ref.raw, ref.decoded)):
        got_raw = got[len(prefix):] if got[:len(prefix)] == prefix else got
        stream = b"".join(rt.decodes.get(i, b"") for i in raw).decode("utf-8", "replace")
        if projected is not None:  # legacy: explained when the runtime does what its type documents
            legacy = lambda ok: LEGACY if ok else None  # noqa: E731
            p_raw, p_dec = projected[0][k], projected[1][k]
            _compare(checks["engine ids"], s, eng, got, lambda: legacy(got_raw == p_raw) or _explain_ids(
                codes, s.text, raw, lowered, ref, lowering.losses, got_raw))
            _compare(checks["raw ids"], s, raw, got_raw, lambda: legacy(got_raw == p_raw) or _explain_ids(
                codes, s.text, raw, lowered, ref, lowering.losses, got_raw))
            _compare(checks["streaming decode"], s, dec, stream,
                     lambda: legacy(stream == p_dec) or _explain_stream(codes, dec, stream))
            continue
        _compare(checks["engine ids"], s, eng, got,
                 lambda: _explain_engine(codes, s.text, eng, raw, got, got_raw, lowered, ref, lowering.losses))
        _compare(checks["raw ids"], s, raw, got_raw,
                 lambda: _explain_ids(codes, s.text, raw, lowered, ref, lowering.losses, got_raw))
        _compare(checks["streaming decode"], s, dec, stream, lambda: _explain_stream(codes, dec, stream))
    checks["full decode"].skipped = "the MNN Python API exposes only single-id decode"

    # Chat: the runtime always adds the generation prompt and never passes tools.
    other = len(chats) - len(runtime_chats)
    chat_note = (f"{other} conversation(s) not comparable (no generation prompt, tools, or no template)"
                 if other else "")
    if not lowered.chat.text:
        chat_note = "no chat template"
    checks["chat text"].skipped = checks["chat ids"].skipped = chat_note
    chat_ids_rt = []
    if chat_texts:
        enc = run_runtime(mtok_path, texts=[t for t in rt.chats if t is not None], python=python, timeout=timeout)
        chat_ids_rt = iter(enc.encodes)
    cleared = lowering.cleared_bos
    if cleared:
        checks["chat text"].skipped = (checks["chat text"].skipped + "; " if checks["chat text"].skipped else "") \
            + f"compared without the leading {cleared!r}, which the header prefix adds as an id"
    for c, want, got, want_ids in zip(runtime_chats, ref.chat_text, rt.chats, ref.chat_ids):
        if want is None:
            continue
        if cleared and want.startswith(cleared):
            want = want[len(cleared):]
        s = _Sample(c.id, str(c.messages)[:200])
        _compare(checks["chat text"], s, want, got, lambda: "chat-template" if "chat-template" in codes else None)
        if got is not None:
            got_ids = next(chat_ids_rt)
            _compare(checks["chat ids"], s, want_ids, got_ids,
                     lambda: _explain_chat_ids(codes, want, got, want_ids, got_ids, lowered, ref, lowering.losses))

    # Every stop id the source declares (eos in its configs, end-of-turn tokens) is in the file.
    for i, source in getattr(lowering.meta, "stop_sources", ()):
        _compare(checks["stop ids"], _Sample(f"stop-{i}", f"{names.get(i, '?')} from {source}"), i,
                 i if i in file_stops else None, lambda: None)
    return Report(str(mtok_path), lowering.target, rt.version, list(checks.values()), lowering.losses, accepted)


LEGACY = "legacy-type"  # the explanation: the legacy type's documented behaviour (its losses)


def _projection(tok, texts, ref_raw):
    """HF running the IR of what a legacy runtime does (the legacy writers' projection): its raw
    ids per text, and its decode of the reference ids."""
    from .reference import run_hf
    from .reference_tiktoken import hf_from_ir

    try:
        hf = hf_from_ir(tok)
        return run_hf(hf, texts).raw, hf.decode_batch(ref_raw, skip_special_tokens=False)
    except Exception:  # noqa: BLE001  HF cannot run every projection (e.g. greedy matching without unk)
        return [None] * len(texts), [None] * len(ref_raw)


@dataclass
class _Sample:
    id: str
    text: str


def _compare(check: Check, sample, expected, got, explain):
    check.total += 1
    if expected == got:
        check.ok += 1
    else:
        check.mismatches.append(Mismatch(check.name, sample.id, sample.text, expected, got, explain()))


def _explain_engine(codes, text, eng, raw, got, got_raw, tok, ref, losses):
    if got_raw == raw:
        suffix = [i for i in getattr(tok.post_processor, "ops", ()) if i is not None]
        if "suffix-not-appended" in codes and suffix and got + suffix == eng:
            return "suffix-not-appended"
        for code in ("bos-template", "bos-none"):
            if code in codes:
                return code
        return None
    return _explain_ids(codes, text, raw, tok, ref, losses, got_raw)


def _explain_ids(codes, text, raw, tok, ref, losses=(), got=()) -> str | None:
    """The first recorded loss whose effect shows in this text."""
    def triggered(code):
        return any(x.trigger and any(t in text for t in ([x.trigger] if isinstance(x.trigger, str) else x.trigger))
                   for x in losses if x.code == code)

    tests = {
        "normalizer-table": lambda: emulate.normalize(tok.normalizer, text) != ref.normalize(text),
        "normalizer-approx": lambda: emulate.normalize(tok.normalizer, text) != ref.normalize(text),
        "bert-clean": lambda: any(unicodedata.category(c) in ("Cf", "Co", "Zl", "Zp") for c in text),
        "lowercase": lambda: any(len(c.lower()) > 1 for c in text),
        "strip-accents": lambda: (unicodedata.normalize("NFD", text) != text
                                  or any(unicodedata.category(c) in ("Mc", "Me") for c in text)),
        "unigram-ties": lambda: _same_score(tok, raw, got),
        "regex-control": lambda: any("\x01" <= c <= "\x07" for c in text),
        "whitespace-class": lambda: triggered("whitespace-class"),
        "whitespace-word": lambda: triggered("whitespace-word"),
        "added-strip-ascii": lambda: any(_unicode_space_next_to(x.trigger, text) for x in losses
                                         if x.code == "added-strip-ascii"),
        "metaspace-first": lambda: triggered("metaspace-first") or any(t.content in text for t in tok.added_tokens if t.special),
        "unk-drop": lambda: _unk_id(tok) in raw,
        "strip-whitespace": lambda: any(unicodedata.category(c) in ("Zl", "Zp") or c == "\x85" for c in text),
        "wordpiece-bytes": lambda: any(len(w) > 20 for w in text.split()),
        # The following cannot be localized from the text alone; they explain what is left.
        "ignore-merges": lambda: True,
        "merged-with-previous": lambda: True,
        "regex-unsupported": lambda: True,
        "prefix-space": lambda: True,
        "added-normalized": lambda: triggered("added-normalized"),
        "dropped": lambda: True,
        "type0-unigram": lambda: True,  # a Unigram model run as BPE by piece score
        "legacy-greedy": lambda: True,  # type 1: greedy longest-prefix matching instead of BPE
        "type0-normalizer": lambda: True,
    }
    for code, test in tests.items():
        if code in codes and test():
            return code
    return next((x.code for x in losses if x.code.startswith("sp-") and triggered(x.code)), None)


def _unicode_space_next_to(token: str, text: str) -> bool:
    """A non-ASCII whitespace character right before or after `token` (the runtime strips ASCII only)."""
    ws = r"[^\S\x00-\x7f]"
    return bool(re.search(f"{ws}{re.escape(token)}|{re.escape(token)}{ws}", text))


def _same_score(tok, a, b) -> bool:
    """Unigram: both segmentations have the same total score (a Viterbi tie)."""
    if not isinstance(tok.model, M.Unigram):
        return False
    v = tok.model.vocab
    total = lambda ids: sum(v[i][1] for i in ids if i < len(v))  # noqa: E731
    return abs(total(a) - total(b)) < 1e-6


def _unk_id(tok):
    m = tok.model
    if isinstance(m, M.Unigram):
        return m.unk_id
    unk = getattr(m, "unk_token", None)
    return M.vocab_of(m).get(unk) if unk else None


def _explain_stream(codes, want: str, got: str) -> str | None:
    if "sp-unk-surface" in codes and "\u2047" in want:
        return "sp-unk-surface"
    if "\ufffd" in want and "byte-fallback" in codes:
        return "byte-fallback"
    for code in ("stream-decode", "no-decoder", "decoder-strip", "wordpiece-cleanup", "type0-decode"):
        if code in codes:
            return code
    return None


def _explain_chat_ids(codes, want_text, got_text, want, got, tok, ref, losses):
    if want_text != got_text:
        return "chat-template" if "chat-template" in codes else None
    n = len(tok.prefix_ids)
    if n and got[:n] == list(tok.prefix_ids):
        if got[n:] == want:
            return "double-bos" if "double-bos" in codes else None
        got = got[n:]
    return _explain_ids(codes, want_text, want, tok, ref, losses, got)
