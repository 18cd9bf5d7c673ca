"""Verification (DESIGN section 4): the real MNN runtime loading a written file against the reference
(HF on the source, or the source's own library), on the built-in corpus plus the user's.

Every mismatch is attributed by reproduction (`attribution`): explained only when the source's
reference with the recorded losses' projections gives exactly what the runtime gave.  The
expectations come from the source and its honest lowering, never from the file under test.
The report also measures each loss's reach: on which checks and corpus slices it shows."""

from __future__ import annotations

import hashlib
import json
import unicodedata
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from .. import cache
from ..corpus import slice_of
from ..dump.jsonify import id_to_token
from ..errors import InputError, MtokError
from ..job_options import VerifyOptions
from ..losses import EDGE, KINDS, RUNTIME_CRASH, Loss, Severity
from ..lower.models import gap_fillers
from ..model_folder import jinja_block
from ..mtok.header import read_header
from ..readers.interpretation import disagreements
from ..readers.mnn_file import read_mnn_bytes
from . import bounded
from .attribution import Attribution
from .budget import SHARES, STOP, Budget
from .chat_parity import (
    HANG,
    builtin_conversations,
    prints_parts,
    reference_render,
    render_request,
)
from .reference import ReferenceUnavailable
from . import robust as R
from .runtime import run_runtime
from .steps import Steps
from .surface import short_json
from .sweep import sweep_texts

CHECKS = ("engine ids", "raw ids", "streaming decode", "full decode", "chat text", "chat ids", "chat paths",
          "stop ids", "vocab sweep", "robustness")
CHAT_CHECKS = ("chat text", "chat ids", "chat paths")
# The checks on which a loss of each layer would show (its severity is measured only when they ran).
LAYER_CHECKS = {"reference": (), "chat_template": CHAT_CHECKS, "decoder": ("streaming decode",), "post_processor": ("engine ids",),
                "added_tokens": ("raw ids", "streaming decode")}


@dataclass
class Mismatch:
    check: str
    sample: str
    text: str
    expected: object
    got: object
    explanation: tuple[str, ...]  # loss codes that reproduce it; empty: unexplained
    slice: str = "everyday"  # "everyday", "edge" or "documents" (the corpus slices), or "sweep"
    where: tuple[str, ...] = ()  # the JSON paths of those losses in the source
    component: str = ""  # unexplained: the pipeline component the first divergence points at (`attribution.COMPONENTS`)


@dataclass
class Check:
    name: str
    ok: int = 0
    total: int = 0
    skipped: str = ""  # why the check could not run (or some samples were left out)
    mismatches: list[Mismatch] = field(default_factory=list)
    reference: str = ""  # what the expected values came from (library and version)


@dataclass
class Report:
    file: str
    target: str
    runtime: str
    checks: list[Check]
    losses: list[Loss]
    corpus_sha256: str = ""
    runtime_output: tuple = field(default=(), repr=False)  # (encodes, decodes, chats, chat encodes) as run
    reference: dict = field(default_factory=dict)  # what the runtime was compared with (`Chosen.describe`)
    robustness: R.Robustness | None = None  # the robustness phase (None: not run)
    surface: list | None = None  # the special-token surface (`verify.surface.Special` rows; None: not measured)
    # `verify`'s `extra` texts: (the runtime's encodes, the reference's raw ids), compared by the caller
    extra: tuple = field(default=((), ()), repr=False)
    partial: list = field(default_factory=list)  # the phases the time budget ended (`budget.Partial.to_json`)

    @property
    def surface_json(self) -> dict | None:
        return short_json(self.surface)

    def check(self, name: str) -> Check:
        return next(c for c in self.checks if c.name == name)

    def classes(self) -> list[tuple[str, tuple[str, ...], int, Mismatch]]:
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
        return sum(1 for c in self.checks for m in c.mismatches if not m.explanation)

    @property
    def verdict(self) -> str:
        """"passed", "passed (partial)" (a phase the budget ended: nothing known of its rest) or "failed"."""
        return ("passed (partial)" if self.partial else "passed") if self.ok else "failed"

    @property
    def ok(self) -> bool:
        """Every mismatch is reproduced by a recorded loss (whether those losses are acceptable is
        the acceptance policy's decision, `policy.decide`)."""
        return self.unexplained == 0

    def reach(self) -> dict[str, dict]:
        """Per loss code: the mismatches it explains, by check and slice, and the measured severity."""
        out = {x.code: {"everyday": 0, "edge": 0, "documents": 0, "sweep": 0, "checks": {}} for x in self.losses}
        for c in self.checks:
            for m in c.mismatches:
                sl = counted_slice(m)
                for code in m.explanation:
                    r = out.setdefault(code, {"everyday": 0, "edge": 0, "documents": 0, "sweep": 0, "checks": {}})
                    r[sl] += 1
                    r["checks"][c.name] = r["checks"].get(c.name, 0) + 1
        ran = {c.name for c in self.checks if c.total}
        for x in self.losses:
            r = out[x.code]
            # Not seen on the corpus although the checks that would show it ran: measured as edge.
            seen = r["everyday"] + r["edge"] + r["documents"] or bool(ran & set(LAYER_CHECKS.get(x.kind.layer, ("raw ids",))))
            r["severity"] = measured_severity(r).value if seen else None
        return out


def counted_slice(m: Mismatch) -> str:
    """The slice a mismatch counts on (DESIGN 4.2: a loss is judged by what its user sees): its
    sample's, except
    * a streamed text that differs from the reference's decode by one leading space alone (a
      SentencePiece reply's first "▁"): the user reads the same characters, so it counts as edge;
    * a document piece holding text that is not in NFC (pointed Hebrew with its marks out of
      canonical order, say) is the edge slice's kind of input (decomposed and unnormalized forms)
      where only a normalizer loss explains the mismatch: that loss acts on those forms alone,
      whatever document they sit in."""
    if m.check == "streaming decode" and leading_space_only(m.expected, m.got):
        return "edge"
    if m.slice == "documents" and m.explanation and isinstance(m.text, str) \
            and not unicodedata.is_normalized("NFC", m.text) and all(KINDS[c].layer == "normalizer" for c in m.explanation):
        return "edge"
    return m.slice


def leading_space_only(want, got) -> bool:
    """Two texts that differ by one leading space alone."""
    return isinstance(want, str) and isinstance(got, str) and want != got and (got == " " + want or want == " " + got)


def measured_severity(reach: dict) -> Severity:
    """What a loss reaches on the corpus: chat prompts, BOS/EOS (engine ids only), ordinary text, or
    only edge inputs.  The long documents are everyday text: a loss that changes one of them reaches
    beyond the edge."""
    checks = reach["checks"]
    if not reach["everyday"] + reach.get("documents", 0):
        return EDGE
    if any(c in checks for c in CHAT_CHECKS):
        return Severity.CHAT
    if set(checks) - {"vocab sweep"} <= {"engine ids", "stop ids"}:
        return Severity.BOS_EOS
    return Severity.TEXT


def corpus_hash(samples, chats) -> str:
    h = hashlib.sha256()
    for s in samples:
        h.update(json.dumps([s.id, s.text], ensure_ascii=False).encode("utf-8", "surrogatepass"))
    for c in chats:
        h.update(json.dumps([c.id, list(c.messages), c.tools], ensure_ascii=False, sort_keys=True,
                            default=str).encode("utf-8", "surrogatepass"))
    return h.hexdigest()


@dataclass(frozen=True)
class VerifyJob:
    """What verifying one file against its source is asked to do (`verify(job, file, reference,
    checked)`): which source and honest lowering the file is held to, which inputs the checks run,
    and how (`VerifyOptions`).  `pipeline.run` builds it for the export and `mtok verify`."""

    source: object  # the IR as read
    # its honest lowering, what a correct file holds (`lower(source)` again, never the file); the
    # robustness phase adds the loss `runtime-crash` to `lowering.losses`
    lowered: object
    lowering: object
    samples: Sequence  # the corpus (those with NUL are left out: the MNN binding passes C strings)
    chats: Sequence  # the conversations (the runtime renders those with a generation prompt and no tools)
    # python, sweep, robust and seconds as the options say (`verify.sweep`, `verify.robust`, `budget`);
    # its corpus is the caller's to read into `samples`
    options: VerifyOptions = field(default_factory=VerifyOptions)
    # more texts for the same runtime call, compared with nothing here: their runtime encodes and the
    # reference's raw ids are the report's `extra` (the special-token surface, `verify.surface`)
    extra: Sequence[str] = ()
    # the model folder's llm_config.json as the engine reads it: its `jinja` block replaces the
    # embedded template and EOS
    llm_config: dict | None = None
    progress: Callable | None = None  # told each phase, and how far a countable one is (`steps.Steps`)
    timeout: float = 300.0  # seconds the runtime's process may take (no option sets it)


@dataclass
class _Run:
    """One verification as it goes: what it was asked (the job, the file, the reference, what it
    keeps of the job's inputs) and what each step found, filled in order by `verify`'s steps."""

    job: VerifyJob
    path: Path
    reference: object
    checked: tuple | None
    usable: list  # the job's samples without NUL (the binding passes C strings)
    left_out: int
    runtime_chats: list  # the conversations the runtime renders (a generation prompt, no tools)
    has_chat: bool
    budget: Budget
    extra: list  # the job's extra texts without NUL
    # filled by the steps
    ref: object = None  # the reference's `Reference` on the corpus
    data: bytes = b""
    file_tok: object = None
    fillers: dict = field(default_factory=dict)
    swept: list = field(default_factory=list)  # the sweep's strings checked (as far as the budget allowed)
    sweep_total: int = 0  # the sweep's strings there are
    sweep_note: str = "not run"
    swept_raw: list | None = None
    extra_raw: list = field(default_factory=list)
    robust_request: tuple | None = None
    ahead: dict = field(default_factory=dict)
    why: Attribution | None = None
    paths: list = field(default_factory=list)
    rt: object = None  # the runtime's `RuntimeResult`
    robustness: R.Robustness | None = None

    @property
    def texts(self) -> list[str]:
        return [s.text for s in self.usable]


def verify(job: VerifyJob, file, reference, checked: tuple[bytes, object] | None = None) -> Report:
    """Run the runtime on `file` and the reference on `job.source`, and compare.

    `reference`: the source's independent reference (`references.Chosen`: `run(texts, chats) ->
    Reference`, named in the report), run in a child whose memory is bounded (`bounded`).
    `checked`: (bytes, the IR the strict reader read from them), when the caller has just read the
    file (the export what it wrote, `mtok verify` the file it checks); the file is parsed again only
    when it holds other bytes.  With `job.options.sweep`, also the vocabulary sweep (every token's
    own text, raw ids against the reference); `job.options.robust`: the robustness phase's budget in
    seconds of runtime encodes (None: not run); `job.options.seconds`: the time budget (0: none):
    the sweep ends where it is when it would run past it, named in the report's `partial`."""
    step = Steps(job.progress)
    found = disagreements(job.source)
    if found:  # the reader did not follow the folder's interpretation the reference follows: one finding
        return _disagreement_report(file, job.lowering, found, reference)
    usable = [s for s in job.samples if "\x00" not in s.text]
    has_chat = bool(job.lowered.chat.text) and bool(job.lowering.target.jinja)
    runtime_chats = [c for c in job.chats if c.add_generation_prompt and not c.tools] if has_chat else []
    run = _Run(job, Path(file), reference, checked, usable, len(job.samples) - len(usable), runtime_chats, has_chat,
               Budget(job.options.seconds), [t for t in job.extra if "\x00" not in t])
    _ask_reference(run, step)
    _run_runtime(run, step)
    checks = _compare(run, step)
    return _report(run, checks)


def _ask_reference(run: _Run, step) -> None:
    """The reference on the corpus, the file read once, and the reference on the sweep's strings
    (as many as the budget allows) and on the special-token surface."""
    step("reference")
    texts, reference = run.texts, run.reference
    run.ref = _ask(reference, "", lambda tell: reference.run(texts, run.runtime_chats))
    run.data = run.path.read_bytes()
    # once, before MNN loads it: every check runs (lazy only defers building the vocab entries)
    run.fillers = gap_fillers(run.job.source, run.job.lowered)
    if run.checked is not None and run.checked[0] == run.data:
        run.file_tok = run.checked[1]  # these very bytes passed the same strict read: not parsed again
    else:
        run.file_tok = read_mnn_bytes(run.data, str(run.path), strict=True, lazy=True)[0]
    if run.job.options.sweep:
        # the gap fillers as the honest lowering writes them and as this file holds them (a wrong one
        # may be reachable: the sweep types it)
        fillers = [*run.fillers.values(), *_entries_at(run.file_tok, run.fillers)]
        swept, run.sweep_note = sweep_texts(run.job.source, set(texts), fillers)
        if swept:
            run.swept_raw = _ask(reference, " on the vocabulary sweep",
                                 lambda tell: reference.raw_ids(swept, _budgeted(tell, run.budget)),
                                 tell=lambda done, total: step("reference", done, total))  # the long part
            run.swept, run.sweep_total = swept[:len(run.swept_raw)], len(swept)
    if run.extra:
        run.extra_raw = _ask(reference, " on the special tokens", lambda tell: reference.raw_ids(run.extra))


def _budgeted(tell, budget: Budget):
    """A reference's `tell` that also stops it (`STOP`) once its share of the budget is spent."""
    def told(done: int, total: int):
        if tell is not None:
            tell(done, total)
        return STOP if budget.over(SHARES["reference"]) else None
    return told


def _run_runtime(run: _Run, step) -> None:
    """One runtime process: the corpus, the special-token surface and the sweep (the sweep within
    what the budget leaves), the chats, then the chat-path renders apart (their own tokenizer and
    time limit; a hang costs only them) and the robustness inputs.  The HF projections a raw-id
    mismatch asks for first, and the reference's side of the robustness phase, are made ready while
    it runs (on another core), not after it."""
    step("runtime")
    job = run.job
    run.robust_request = R.request(job.options.robust) if job.options.robust is not None else None

    def early():
        """The reference's side of the robustness phase, while the runtime runs."""
        if run.robust_request is not None:
            run.ahead.update(R.reference_ahead(run.robust_request[0], run.reference))
    run.why = why = Attribution(job.source, job.lowered, job.lowering, ref_normalize=run.ref.normalize,
                                ref_unigram=run.ref.unigram)
    run.paths = _path_conversations() if run.has_chat else []
    renders, apart = _path_render_request(run.paths, job.lowered, job.llm_config) if run.has_chat else ([], None)
    ids_needed = sorted({i for ids in run.ref.raw for i in ids})
    first = len(run.texts) + len(run.extra)  # the sweep comes last: what the budget may leave out
    left = run.budget.left(SHARES["runtime"])
    run.rt = run_runtime(run.path, texts=run.texts + run.extra + run.swept, decode_ids=ids_needed,
                         chats=[list(c.messages) for c in run.runtime_chats], python=job.options.python,
                         timeout=job.timeout, llm_config=job.llm_config, check=False, encode_chats=True, renders=renders,
                         renders_apart=apart, while_running=lambda: (why.warm(), early()),
                         robust=run.robust_request[1] if run.robust_request else None, tell=step,
                         until=(first, left) if left is not None and run.swept else None)
    run.swept = run.swept[:len(run.rt.encodes) - first]  # fewer when the budget ended the sweep's encodes


def _compare(run: _Run, step) -> dict[str, Check]:
    """Every check of the runtime's answers against the reference's."""
    step("compare")
    job = run.job
    checks = {name: Check(name) for name in CHECKS}
    if run.left_out:
        for name in ("engine ids", "raw ids", "streaming decode"):
            checks[name].skipped = (f"{run.left_out} sample(s) with NUL left out: the MNN Python binding passes text "
                                    "as a C string")
    _text_checks(checks, run)
    checks["full decode"].skipped = "the MNN Python API exposes only single-id decode"
    if run.swept:
        step("vocab sweep")
        first = len(run.texts) + len(run.extra)
        run.swept = run.swept[:_sweep(checks["vocab sweep"], run.swept, run.rt.encodes[first:], run.swept_raw, run.why,
                                      step, run.budget)]
    cut = run.budget.cut("sweep", len(run.swept), run.sweep_total)  # named where the budget ended it
    checks["vocab sweep"].skipped = "; ".join(filter(None, (run.sweep_note, cut.line() if cut else "")))
    _chat_checks(checks, run)
    run.why.save()  # every projection attribution asks for has run: cache the answers for the next run
    if run.has_chat:
        step("chat paths")
        _chat_paths(checks["chat paths"], run.paths, HANG if run.rt.renders is None else run.rt.renders,
                    job.source, job.lowering, run.why)
    else:
        checks["chat paths"].skipped = "no chat template"
    _stop_checks(checks["stop ids"], run.data, run.file_tok.chat, job.source, job.lowered, job.lowering)
    _name_components(checks, run.why)
    if run.robust_request is not None:
        step("robustness")
        run.robustness = _robustness(checks["robustness"], run.robust_request[0], run.rt.robust, job.options.robust,
                                     run.reference, run.why, job.lowering, run.ahead)
        run.why.save()
    else:
        checks["robustness"].skipped = "not run (--no-robust)"
    _name_references(checks, run.reference)
    return checks


def _text_checks(checks: dict[str, Check], run: _Run) -> None:
    """The text checks (`TEXT_CHECKS`) of the corpus, each mismatch explained by `Attribution`."""
    why, usable = run.why, run.usable
    base_decode = why.base_decode(run.ref.raw) if why.legacy or why.of("reader") else [None] * len(usable)
    compare_texts(checks, usable, run.rt, run.ref, why.prefix,
                  explain_raw=lambda j, raw, got_raw: why.raw(usable[j].text, raw, got_raw),
                  explain_engine=lambda j, eng, raw, got, got_raw, raw_why: why.engine(usable[j].text, eng, raw, got,
                                                                                      raw_why),
                  explain_stream=lambda j, raw, dec, stream: why.stream(raw, dec, stream, base_decode[j]))


def _chat_checks(checks: dict[str, Check], run: _Run) -> None:
    """Chat text and ids: the runtime always adds the generation prompt and is given no tools."""
    ref, rt, why = run.ref, run.rt, run.why
    other = len(run.job.chats) - len(run.runtime_chats)
    note = f"{other} conversation(s) not comparable (no generation prompt, or tools)" if other else ""
    if not run.has_chat:
        note = "no chat template"
    cleared = run.job.lowering.prefix_text
    if cleared and run.has_chat:
        note = (note + "; " if note else "") + f"compared without the leading {cleared!r}, which the header prefix adds as an id"
    checks["chat text"].skipped = checks["chat ids"].skipped = note
    for c, want, got, want_ids, got_ids in zip(run.runtime_chats, ref.chat_text, rt.chats, ref.chat_ids,
                                               rt.chat_encodes):
        if want is None:  # transformers refused the conversation (raise_exception)
            continue
        if cleared and want.startswith(cleared):
            want = want[len(cleared):]
        s = _Sample(c.id, json.dumps(list(c.messages), ensure_ascii=False)[:300])
        sl = "edge" if "special" in c.tags else "everyday"
        text_why = compare(checks["chat text"], s, want, got, lambda: why.chat_text(c, want, got), slice=sl)
        if got is not None:
            compare(checks["chat ids"], s, want_ids, got_ids,
                    lambda: why.chat_ids(want, got, want_ids, got_ids, text_why, c.messages), slice=sl)


def _report(run: _Run, checks: dict[str, Check]) -> Report:
    rt, texts, first, lowering = run.rt, run.texts, len(run.texts) + len(run.extra), run.job.lowering
    chat_encodes = [ids for ids in rt.chat_encodes if ids is not None]
    encodes = rt.encodes[:len(texts)] + rt.encodes[first:first + len(run.swept)]
    return Report(str(run.path), lowering.target.name, rt.version, list(checks.values()), list(lowering.losses),
                  corpus_hash(run.usable, run.runtime_chats), (encodes, rt.decodes, rt.chats, chat_encodes),
                  {**run.reference.describe(), **({"disagreement": run.ref.drift} if run.ref.drift else {})},
                  run.robustness, extra=(rt.encodes[len(texts):first], run.extra_raw),
                  partial=[p.to_json() for p in run.budget.partial])



def _robustness(check: Check, items, run, seconds: float, reference, why, lowering, ahead: dict) -> R.Robustness:
    """The robustness phase's result: each finished input's raw ids against the reference's (the
    check), the timings and growth, and on a crash the loss `runtime-crash` (refused by default)."""
    result = R.summarize(items, run, seconds, R.STACK)
    finished = [(x, r) for x, r in zip(items, run.results) if r is not None and "ids" in r]
    done = [(x, r) for x, r in finished if len(x.text) <= R.IDS_MAX]
    if len(done) < len(finished):
        check.skipped = (f"{len(finished) - len(done)} input(s) over {R.IDS_MAX:,} characters: crash and time "
                         "only (explaining a mismatch on one such word can take minutes)")
    known = ahead.get("ids", {})
    later = [x.text for x, _ in done if x.text not in known]
    if later:
        known.update(zip(later, _ask(reference, " on the robustness inputs", lambda tell: reference.raw_ids(later))))
    want = [known[x.text] for x, _ in done]
    prefix = list(why.prefix)
    for (x, r), expected in zip(done, want):
        got = r["ids"]
        got_raw = got[len(prefix):] if got[:len(prefix)] == prefix else got
        compare(check, _Sample(f"robust:{x.group}:{len(x.text)}", x.text), expected, got_raw,
                lambda: why.raw(x.text, expected, got_raw), slice="edge")
    result.mismatches = len(check.mismatches)
    result.word_reference_seconds = ahead.get("word_seconds")
    if result.crash is not None:
        c = result.crash
        lowering.losses.append(Loss(RUNTIME_CRASH, "runtime", "$", f"the runtime crashed ({R.signal_name(c['status'])}) on "
                                    f"one {'run of ' if c['group'] in R.CLASSES else ''}"
                                    f"{c['group']}, {c['length']:,} characters long, encoded on a thread with a "
                                    f"{R.STACK // 1024} KiB stack (an app's worker thread: Android's is 1 MiB)"
                                    + (f"; the split /{lowering.wregex[0]}/ runs on std::wregex, which recurses once "
                                       "per character of a match" if lowering.wregex else ""),
                                    pattern=lowering.wregex[0] if lowering.wregex else ""))
    if run.crashed is None and not result.groups:
        check.skipped = "the runtime ran none of the robustness inputs"
    return result


def _disagreement_report(mtok_path, lowering, found: list[tuple[str, str]], reference) -> Report:
    """The report of a reader that decided a question of the folder on its own (`interpretation.
    disagreements`): its cause, once, instead of the mismatches it would cause on every input."""
    why = "not run: the reader and the reference interpret the folder differently (see interpretation)"
    checks = [Check(name, skipped=why) for name in CHECKS]
    check = Check("interpretation", reference="the folder's interpretation (manifest: interpretation)")
    for component, cause in found:
        compare(check, _Sample(f"interpretation:{component}", cause), "the interpretation", "the reader's own decision")
        check.mismatches[-1].component = "interpretation"
    return Report(str(mtok_path), lowering.target.name, "(not run)", [check, *checks], list(lowering.losses),
                  reference=reference.describe())


def _entries_at(tok, ids) -> list[str]:
    """The texts the file `tok` (a BPE, as the ids come from `gap_fillers`) holds at `ids`."""
    if not ids or not isinstance(getattr(tok.model, "vocab", None), Mapping):
        return []
    by_id = getattr(tok.model.vocab, "by_id", None)  # a lazy read's IdVocab
    if by_id is not None:
        return [by_id[i] for i in ids if i < len(by_id)]
    return [t for t, i in tok.model.vocab.items() if i in ids]


def _ask(reference, what: str, call, tell=None):
    """`call(tell)` on the reference, in a child whose memory is bounded (`bounded`: running out of it
    is exit 2 with its cause, never a kill); a library's own error is named (exit 2, no traceback).
    Ours and `ReferenceUnavailable` (the caller falls back to a self-check) go on as they are.
    `tell(done, total)`: the reference's progress, where it counts."""
    return bounded.run(lambda told: _named(reference, what, lambda: call(told)), what=what,
                       library=reference.library, tell=tell)


def _named(reference, what: str, call):
    """`call()`, a library's own error named (see `_ask`)."""
    try:
        return call()
    except (MtokError, ReferenceUnavailable):
        raise
    except Exception as e:  # noqa: BLE001  tokenizers/transformers/sentencepiece errors
        raise InputError(f"{', '.join(reference.files) or 'source'}: the reference ({reference.library}) could not "
                         f"run{what} ({type(e).__name__}: {e})") from e
    except BaseException as e:  # a panic in tokenizers' Rust code: pyo3's PanicException is a BaseException
        if type(e).__name__ != "PanicException":
            raise
        raise InputError(f"{', '.join(reference.files) or 'source'}: the reference ({reference.library}) panicked"
                         f"{what} ({e}); the file cannot be verified against it") from None


def _sweep(check: Check, swept: list[str], encodes, want_raw, why, step=lambda *a: None,
           budget: Budget | None = None) -> int:
    """Raw ids of each sweep string, the runtime's (without the header prefix) against the reference's;
    `step("vocab sweep", done, total)` told as it goes.  -> how many were compared (fewer than
    `swept` when the `budget` ended it: explaining mismatches is what can take minutes)."""
    prefix = list(why.prefix)
    for k, (text, got, want) in enumerate(zip(swept, encodes, want_raw)):
        if not k % 1024:
            step("vocab sweep", k, len(swept))
        if not k % 64 and budget is not None and budget.over(SHARES["compare"]):
            return k
        got_raw = got[len(prefix):] if got[:len(prefix)] == prefix else got
        compare(check, _Sample(f"sweep:{text[:40]}", text), want, got_raw, lambda: why.raw(text, want, got_raw),
                slice="sweep")
    step("vocab sweep", len(swept), len(swept))
    return len(swept)


def _name_components(checks: dict[str, Check], why: Attribution) -> None:
    """The component the first unexplained mismatch of each check points at (the one a dead end
    shows, `Attribution.component`)."""
    raw = {m.sample: m for m in checks["raw ids"].mismatches}
    for c in checks.values():
        m = next((m for m in c.mismatches if not m.explanation), None)
        if m is None or m.component:
            continue
        if c.name == "engine ids" and m.sample in raw:  # the raw ids part already: their component
            r = raw[m.sample]
            m.component = r.component or why.component("raw ids", r.text, r.expected, r.got)
        else:
            m.component = why.component(c.name, m.text, m.expected, m.got, raw_matched=m.sample not in raw)


def _name_references(checks: dict[str, Check], reference) -> None:
    """Each check's expected values and where they came from."""
    for name in ("engine ids", "raw ids", "streaming decode", "full decode", "vocab sweep"):
        checks[name].reference = reference.library if not reference.self_check else "none (self-check)"
    for name in ("chat text", "chat ids"):
        checks[name].reference = reference.chat or "none"
    checks["chat paths"].reference = f"transformers {cache.version('transformers')}"
    # no library states a model's stop ids: they are the source's configs as this tool read them
    checks["stop ids"].reference = "the source's configs"


def _path_conversations() -> list:
    """`chat_parity`'s conversations on the paths a template branches on (tools, tool calls and
    results, reasoning, content parts); the plain turns are the chat text check's."""
    paths = {"tools", "tool-calls", "reasoning", "multimodal"}
    return [c for c in builtin_conversations() if paths & set(c.tags)]


def _path_render_request(convs, lowered, llm_config):
    """`run_runtime`'s `renders` and `renders_apart` for `convs` rendered with the template the
    engine will use (the embedded one, or the model folder's jinja block), tools and whole messages
    passed as the engine takes them (`chat_parity.render_request`)."""
    jinja = jinja_block(llm_config)
    template, eos = (jinja["chat_template"], jinja.get("eos", "")) if jinja else (lowered.chat.text, lowered.chat.eos_token)
    return render_request(template, convs, bos=lowered.chat.bos_token, eos=eos)


def _chat_paths(check: Check, convs, got, source, lowering, why):
    """Every path a template branches on, rendered by transformers with the source's template and
    by the runtime (`got`: the renders, or HANG when they did not finish).  A difference is
    explained only as the chat text check's is: the source template rendered the way the runtime
    renders it (an empty inner BOS, a lint rule's runtime behaviour) gives the runtime's render
    exactly (`Attribution.chat_text`); a lint finding alone explains nothing."""
    src, cleared = source.chat, lowering.prefix_text
    if got == HANG:
        got = ["<the runtime did not finish>"] * len(convs)
    left_out = 0
    for conv, runtime, want in zip(convs, got, _reference_renders(src, convs)):
        if want is None or prints_parts(want, conv):
            left_out += 1  # transformers refuses it, or prints content parts as a Python list
            continue
        if cleared and want.startswith(cleared):
            want = want[len(cleared):]
        sample = _Sample(conv.id, json.dumps(list(conv.messages), ensure_ascii=False)[:300])
        compare(check, sample, want, runtime, lambda: why.chat_text(conv, want, runtime),
                slice="edge" if "special" in conv.tags else "everyday")
    if left_out:
        check.skipped = f"{left_out} conversation(s) transformers does not render (raises, or prints content parts)"


def _reference_renders(src, convs) -> list[str | None]:
    """transformers' renders of `convs` with the source's template, cached by content (a warm run
    then does not import transformers)."""
    digest = cache.key("chat-paths", src.text, src.bos_token, src.eos_token,
                       [[c.id, list(c.messages), c.tools] for c in convs], dists=("transformers", "jinja2"), dated=True)
    return cache.computed("chat-paths", digest,
                          lambda: [reference_render(src.text, c, bos=src.bos_token, eos=src.eos_token) for c in convs],
                          valid=lambda v: isinstance(v, list) and len(v) == len(convs))


def _stop_checks(check: Check, data: bytes, chat, source, lowered, lowering):
    """The file's stop list equals the expected set (the source's eos / end-of-turn ids, each with
    where it came from), and the embedded eos/bos strings are the source's (BOS empty when the
    lowering moved it to the header prefix).  `data`, `chat`: the file and its chat fields as read."""
    _, (_, file_stops, _), _ = read_header(data)
    expected = {i: src for i, src in getattr(lowering.meta, "stop_sources", ())}
    ids = set(expected) | set(file_stops)
    names = id_to_token(lowered, only=ids)
    for i in sorted(ids):
        what = f"{names.get(i, '?')} ({expected[i]})" if i in expected else f"{names.get(i, '?')} (not a stop id of the source)"
        compare(check, _Sample(f"stop-{i}", what), i if i in expected else None, i if i in file_stops else None)
    if lowering.target.legacy:  # a tokenizer.txt embeds no eos/bos strings
        return
    want_bos = "" if lowering.cleared_bos else source.chat.bos_token
    compare(check, _Sample("eos-token", "embedded eos_token"), source.chat.eos_token, chat.eos_token)
    compare(check, _Sample("bos-token", "embedded bos_token"), want_bos, chat.bos_token)


@dataclass
class _Sample:
    id: str
    text: str


TEXT_CHECKS = ("raw ids", "engine ids", "streaming decode")


def compare(check: Check, sample, expected, got, explain=tuple, *, slice: str = "everyday"):
    """Count one comparison of the runtime (`got`) with the reference (`expected`); on a mismatch
    record it with what `explain()` returns: losses, or loss codes as strings (callers whose
    explanations are not `Loss` objects).  Returns that explanation (None when they matched)."""
    check.total += 1
    if expected == got:
        check.ok += 1
        return None
    found = explain() or ()
    codes = tuple(dict.fromkeys(x if isinstance(x, str) else x.code for x in found))
    where = tuple(dict.fromkeys(x.json_path for x in found if not isinstance(x, str)))
    check.mismatches.append(Mismatch(check.name, sample.id, sample.text, expected, got, codes, slice, where))
    return found


def compare_texts(checks: dict[str, Check], samples, rt, ref, prefix, *, explain_raw, explain_engine,
                  explain_stream) -> None:
    """The text checks (`TEXT_CHECKS`) of one runtime run against one reference, sample by sample:
    the runtime's ids against the reference's engine ids, the same without the header `prefix` the
    runtime adds against its raw ids, and the concatenated single-id decodes of the reference's raw
    ids against its decode.  `rt` has `encodes` and `decodes` (id -> bytes), `ref` has `engine`,
    `raw` and `decoded`, all aligned with `samples`.  The explainers take the sample's index first:
    `explain_raw(j, raw, got_raw)`, `explain_engine(j, engine, raw, got, got_raw, raw explanation)`,
    `explain_stream(j, raw, decoded, stream)`."""
    prefix = list(prefix)
    for j, (s, got, eng, raw, dec) in enumerate(zip(samples, rt.encodes, ref.engine, ref.raw, ref.decoded)):
        got_raw = got[len(prefix):] if got[:len(prefix)] == prefix else got
        sl = slice_of(s)
        raw_why = compare(checks["raw ids"], s, raw, got_raw, lambda: explain_raw(j, raw, got_raw), slice=sl)
        compare(checks["engine ids"], s, eng, got, lambda: explain_engine(j, eng, raw, got, got_raw, raw_why), slice=sl)
        stream = b"".join(rt.decodes.get(i, b"") for i in raw).decode("utf-8", "replace")
        compare(checks["streaming decode"], s, dec, stream, lambda: explain_stream(j, raw, dec, stream), slice=sl)
