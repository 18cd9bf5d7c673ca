"""Run a tokenizer file through the real MNN runtime (PyPI package `MNN`) and collect what it does.

`run_runtime` encodes texts, decodes single ids and renders chat templates with `MNN.llm`, the same
code an app runs on device.  MNN runs in a subprocess (`_runtime_worker.py`, started with
``python -I``) because a corrupt file can crash or hang it and MNN 3.4.1 crashes on any `.mtok`;
the subprocess may use another interpreter (``python=``), e.g. a venv holding an older MNN release.
The worker gets a temporary folder with `config.json`, a copy of the tokenizer under its own basename
and dummy `llm.mnn`/`llm.mnn.weight`: the model load fails harmlessly after the tokenizer is loaded.

Facts about the `MNN.llm` Python API (checked with MNN 3.6.1 on Linux):

* `tokenizer_encode(s)` returns header prefix ids + encode.  3.6.1 ignores the `.mtok` post-processor
  program (spec section 11).  There is no way to encode without the prefix ids: strip them yourself.
  `""` gives just the prefix ids.
* It accepts `str`, `bytes` (passed raw, so invalid UTF-8 can be tested; `bytearray` is refused) or
  `{"text": ...}`.  The input is a C string: everything from the first NUL is dropped (`"a\\0b"` encodes
  like `"a"`).  A `str` with a lone surrogate segfaults the process, so `run_runtime` refuses it.
* `tokenizer_decode(id)` is the streaming single-id decode.  The binding decodes the C++ bytes as
  strict UTF-8: a partial character raises `UnicodeDecodeError` whose `.object` is the whole raw byte
  string (`.start`/`.end` mark the bad part), so `decodes` holds raw bytes.  Ids out of range
  (negative or >= vocab size) give `""`, no crash; ids are truncated to 32 bits, so `run_runtime`
  refuses ids outside int32.
* `apply_chat_template(x)` takes exactly one argument: a list of `{"role", "content"}` dicts, or a
  str (rendered as one user message).  A single dict, a tuple or a list item that is not a dict print
  "content must be str or dict" and raise `SystemError` (`chats` then holds None).  Non-str content
  renders empty; other message keys are dropped, except that role `"json"` makes the content parse
  as a whole message object.  `add_generation_prompt` is always
  true and cannot be switched off (not even through `jinja.context`).
* `llm_config.json` beside `config.json` is read and its keys override `config.json`'s (a
  `tokenizer_file` there wins, so the worker forces the file names).  Its `jinja` block is honoured when
  it has a `chat_template`: that template and `jinja.eos` (empty if absent) replace the embedded ones,
  `jinja.bos` is ignored (BOS stays the `.mtok` one), `jinja.context` keys become template variables.
  A `jinja` block without `chat_template` changes nothing.  `set_config({"jinja": ...})` after `load()`
  left the rendered template unchanged when checked with 3.6.1, so `renders` loads a fresh Llm per block.
* Load failures are only printed ("magic number is wrong", "Failed to load tokenizer", "tokenizer file
  not found"); any tokenizer call after that segfaults, so the worker checks the log after `load()`.
  A truncated body loads silently and may segfault later.
* `import MNN` prints "The device supports: ..." at C level; `MNN.version()` gives the version string.
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from .. import signals
from ..errors import InputError, RuntimeEngineError
from ..io import remove_stale_folders
from ..readers.mnn_file import read_mnn_file
from ..target_type import Target, Version
from ..targets import TARGETS

__all__ = ["RobustRequest", "RobustRun", "RuntimeResult", "run_runtime"]

_WORKER = Path(__file__).with_name("_runtime_worker.py")
_RESERVED = {"config.json", "llm_config.json", "llm.mnn", "llm.mnn.weight"}
_LOG_TAIL_LINES = 20
_TEMP_PREFIX = "mtok-runtime-"  # + pid + "-": a later run removes the folders of dead pids


@dataclass(frozen=True)
class RobustRequest:
    """Robustness inputs for `run_runtime` (run last, after everything else, see `_runtime_worker`):
    `texts` in order, `groups` (one name per text: a group's texts grow, and the rest of a group is
    skipped once its growth predicts one would not finish within `seconds`), each encode on a
    thread with a `stack`-byte stack, under `memory` bytes of address space more than the loaded
    runtime holds."""

    texts: Sequence[str]
    groups: Sequence[str]
    seconds: float
    stack: int
    memory: int = 2 * 2**30


@dataclass(frozen=True)
class RobustRun:
    """What the runtime did with the robustness inputs: per text {"seconds", "ids"}, {"skipped": why},
    {"error": message} or None (not reached); `crashed`: the index of the text the process died on
    (None: it did not); `status`: how the process ended ("exited with status 0", "was killed by SIGSEGV")."""

    results: list[dict | None]
    crashed: int | None
    status: str


@dataclass(frozen=True)
class RuntimeResult:
    """What the runtime produced, in request order."""

    encodes: list[list[int]]   # tokenizer_encode(s) per text (engine path: includes header prefix ids)
    decodes: dict[int, bytes]  # single-id decode per requested id, raw bytes (may be partial UTF-8)
    chats: list[str | None]    # apply_chat_template(messages) per conversation, None if it raised
    log: str                   # everything MNN printed (C-level stdout and stderr)
    version: str               # MNN.version() of the interpreter that ran it
    renders: list[str | None] | None = ()  # per `renders` item: its messages rendered with its jinja block
    # (None: renders run apart did not finish)
    chat_encodes: list[list[int] | None] = ()  # with `encode_chats`: tokenizer_encode of each chat's rendering
    robust: RobustRun | None = None  # with `robust`: what the robustness inputs did


def run_runtime(tokenizer_path: str | os.PathLike, *, texts: Sequence[str | bytes] = (),
                decode_ids: Sequence[int] = (), chats: Sequence[Sequence[Mapping[str, str]]] = (),
                python: str | os.PathLike | None = None, timeout: float = 120.0,
                llm_config: Mapping | None = None, check: bool = True,
                renders: Sequence[Mapping] = (), encode_chats: bool = False,
                renders_apart: tuple[bytes, float] | None = None, decode_encoded: bool = False,
                while_running: Callable[[], None] | None = None, robust: RobustRequest | None = None,
                tell: Callable[[str, int, int], None] | None = None,
                until: tuple[int, float] | None = None) -> RuntimeResult:
    """Load `tokenizer_path` (`.mtok` or legacy `tokenizer.txt`) in MNN and run all requests in one process.

    `texts` are `str` (valid Unicode) or `bytes` (passed raw); `decode_ids` are int32; each entry of
    `chats` is a list of `{"role", "content"}` messages.  `python` is the interpreter that has MNN
    (default: this one).  `llm_config` is written as `llm_config.json`, e.g. ``{"jinja": {...}}``.
    Each of `renders` is ``{"jinja": {"chat_template", "eos", "context"}, "messages": [...]}``:
    its messages rendered by an Llm loaded with that `jinja` block (how an app sets the template,
    tools and extra variables); role "json" messages carry whole message objects (spec 8.7).
    `encode_chats`: also encode each chat's rendering (`chat_encodes`), in the same process.
    `decode_encoded`: also decode every id the texts encode to (`decodes`), in the same process.
    `renders_apart`: (a tokenizer file's bytes, seconds): the renders load that tokenizer instead and
    run last, given those seconds; when they hang, crash or raise, the rest is returned and
    `renders` is None (one process instead of a second one for the renders).
    `while_running`: work for this process to do while the runtime's process runs (on another core).
    `robust`: robustness inputs, run last in the same process (`RobustRequest`); a crash, a kill or
    a time-out among them is their result (`RuntimeResult.robust`), not an error.
    `tell(phase, done, total)`: told while the worker runs how far it is, from its progress record
    ("runtime": texts encoded of `texts`, "robustness": robustness inputs reached).
    `until`: (i, seconds): the texts from index i on are encoded only within those seconds of the
    first encode (a time budget): `encodes` then holds fewer than `texts`, the first i always.
    Raises `RuntimeEngineError` on a missing file, missing MNN, load failure, crash or timeout.
    With `check` (the default) the file is first read by our strict reader, so a malformed file is
    a `FormatError` naming the section and offset (exit 2) instead of whatever MNN makes of it
    (a crash, a silent misread); tests of MNN's own behaviour on broken files pass `check=False`.
    """
    src = Path(tokenizer_path)
    if not src.is_file():
        raise RuntimeEngineError(f"{src}: tokenizer file not found")
    if check:
        read_mnn_file(src, strict=True)
    python = str(python or sys.executable)
    if os.path.exists(python):  # `--runtime-python ./venv/bin/python` arrives as "venv/bin/python"
        python = os.path.abspath(python)
    texts = list(texts)
    request = {"texts": _wire_texts(texts), "decode_ids": _wire_ids(decode_ids), "decode_encoded": decode_encoded,
               "chats": [[dict(m) if isinstance(m, Mapping) else m for m in conv] for conv in chats],
               "encode_chats": encode_chats, "renders": [dict(r) for r in renders],
               "until": {"from": int(until[0]), "seconds": float(until[1])} if until is not None else None}
    if robust is not None:
        timeout += 2 * robust.seconds + 10  # the worker's own hard stop comes first
    return _run_request(request, python, src, texts, timeout, llm_config=llm_config, renders_apart=renders_apart,
                        robust=robust, while_running=while_running, tell=tell)


def _run_request(request: dict, python: str, src: Path, texts: list, timeout: float, *, llm_config, renders_apart,
                 robust: RobustRequest | None, while_running, tell) -> RuntimeResult:
    """The worker run on `request` in a folder of its own (the model folders, the request, its
    response, log and progress record) -> its result; a time-out or a death without a result
    raised as `RuntimeEngineError` naming the step it was at."""
    remove_stale_folders(tempfile.gettempdir(), _TEMP_PREFIX)  # left by runs killed without unwinding
    with tempfile.TemporaryDirectory(prefix=f"{_TEMP_PREFIX}{os.getpid()}-") as tmp:
        tmp_path = Path(tmp)
        files = [tmp_path / n for n in ("request.json", "response.json", "log.txt", "progress")]
        _, response, log, progress = files
        results = tmp_path / "robust.jsonl"
        request.update(_folders(tmp_path, src, llm_config, renders_apart), robust=_wire_robust(robust, results))
        files[0].write_text(json.dumps(request))
        try:
            tick = None if tell is None else lambda: _tell(tell, _read(progress), len(texts), robust)
            output, status = _run_worker(python, files, tmp_path, timeout, while_running, tick)
        except subprocess.TimeoutExpired:
            raise RuntimeEngineError(f"MNN runtime ({python}) did not finish within {timeout:g}s"
                                     f" (step: {_describe(_read(progress), texts) or 'start'}), killed it;"
                                     f" last output:\n{_tail(_read(log))}") from None
        log_text = _read(log) + output
        if not response.is_file():
            step = _describe(_read(progress), texts)
            raise RuntimeEngineError(f"MNN runtime ({python}) {status} without a result"
                                     f"{f' during {step}' if step else ''}; last output:\n{_tail(log_text)}")
        data = json.loads(response.read_text(encoding="utf-8"))
        robust_run = _robust_run(robust, results, _read(progress), status) if robust is not None else None
    return _result(data, python, src, log_text, robust_run)


def _wire_texts(texts: list) -> list[dict]:
    """Texts as the worker's request holds them: {"s": str} or {"hex": bytes passed raw}."""
    out = []
    for t in texts:
        if isinstance(t, bytes):
            out.append({"hex": t.hex()})
        elif isinstance(t, str):
            try:
                t.encode("utf-8")
            except UnicodeEncodeError as e:  # a lone surrogate segfaults MNN
                raise ValueError(f"text is not valid Unicode: {t!r}") from e
            out.append({"s": t})
        else:
            raise TypeError(f"texts must be str or bytes, not {type(t).__name__}")
    return out


def _wire_ids(decode_ids) -> list[int]:
    ids = [int(i) for i in decode_ids]
    if any(not -2**31 <= i < 2**31 for i in ids):
        raise ValueError("decode ids must fit in int32")
    return ids


def _folders(tmp: Path, src: Path, llm_config, renders_apart) -> dict:
    """The model folder(s) the worker loads -> the request's "config" and "renders_apart"."""
    name = src.name if src.name not in _RESERVED else "tokenizer" + src.suffix
    config = _model_folder(tmp / "model", name, lambda path: shutil.copyfile(src, path), llm_config)
    apart = None
    if renders_apart is not None:
        tokenizer, seconds = renders_apart
        apart = {"config": str(_model_folder(tmp / "renders", "tokenizer.mtok", lambda path: path.write_bytes(tokenizer),
                                             None)),
                 "seconds": float(seconds)}
    return {"config": str(config), "renders_apart": apart}


def _wire_robust(robust: RobustRequest | None, results: Path) -> dict | None:
    if robust is None:
        return None
    return {"texts": [{"s": t} for t in robust.texts], "groups": list(robust.groups), "stack": int(robust.stack),
            "seconds": float(robust.seconds), "memory": int(robust.memory), "results": str(results)}


def _result(data: dict, python: str, src: Path, log_text: str, robust_run: RobustRun | None) -> RuntimeResult:
    """The worker's response as a `RuntimeResult`, or its error raised (`RuntimeEngineError`)."""
    err = data.get("error")
    if err:
        if err["kind"] == "import":
            e = RuntimeEngineError(f"MNN is not importable in {python} ({err['message']}); "
                                   f"install it with `{python} -m pip install MNN==3.6.1`")
            e.hint = f"{python} -m pip install MNN==3.6.1"
            raise e
        if err["kind"] == "load":
            raise RuntimeEngineError(f"MNN could not load {src}:\n{_tail(log_text)}")
        raise RuntimeEngineError(f"runtime worker failed:\n{err['message']}")
    return RuntimeResult(encodes=data["encodes"], decodes={i: bytes.fromhex(h) for i, h in data["decodes"]},
                         chats=data["chats"], log=log_text, version=data["version"],
                         renders=data.get("renders"), chat_encodes=data.get("chat_encodes", []), robust=robust_run)


def _tell(tell: Callable[[str, int, int], None], step: str, texts: int, robust: RobustRequest | None) -> None:
    """How far the worker is, from its progress record (`_runtime_worker.main`'s step names)."""
    name, _, n = step.rstrip(" ").partition(" ")
    if name == "encode" and n.isdigit():
        tell("runtime", int(n), texts)
    elif name == "robust" and n.isdigit() and robust is not None:
        tell("robustness", int(n), len(robust.texts))
    elif name in ("decode", "chat", "render"):  # every text is encoded: the rest is short
        tell("runtime", texts, texts)


def _robust_run(robust: RobustRequest, results: Path, progress: str, status: str) -> RobustRun:
    """The worker's result lines, and the input it died on when it did not end normally."""
    out: list[dict | None] = [None] * len(robust.texts)
    for line in _read(results).splitlines():
        try:
            item = json.loads(line)
        except ValueError:  # the last line, cut by the crash
            continue
        out[item.pop("i")] = item
    step = progress.rstrip(" ")
    crashed = None
    if status != "exited with status 0" and step.startswith("robust "):
        crashed = int(step.split()[1])
    return RobustRun(out, crashed, status)


def _model_folder(folder: Path, name: str, write_tokenizer: Callable[[Path], object], llm_config) -> Path:
    """A folder the engine loads: the tokenizer as `name`, config.json naming it and dummy model files
    (the model load fails harmlessly after the tokenizer is loaded), `llm_config` as llm_config.json.
    -> its config.json."""
    folder.mkdir()
    write_tokenizer(folder / name)
    files = {"tokenizer_file": name, "llm_model": "llm.mnn", "llm_weight": "llm.mnn.weight", "backend_type": "cpu"}
    (folder / "config.json").write_text(json.dumps(files))
    if llm_config is not None:
        (folder / "llm_config.json").write_text(json.dumps({**llm_config, **files}))
    (folder / "llm.mnn").write_bytes(b"\0")
    (folder / "llm.mnn.weight").write_bytes(b"\0")
    return folder / "config.json"


def _run_worker(python: str, args: list[Path], cwd: Path, timeout: float,
                while_running: Callable[[], None] | None = None,
                tick: Callable[[], None] | None = None) -> tuple[str, str]:
    """Run the worker; returns (what it printed before redirecting its fds, exit status text).
    The worker also asks the kernel to kill it if we die without unwinding (kill -9)."""
    env = {**os.environ, "MTOK_PARENT_PID": str(os.getpid())}
    try:
        rc, raw, _ = _run_group([python, "-I", str(_WORKER), *map(str, args)], timeout, cwd=cwd, env=env,
                                stderr=subprocess.STDOUT, while_running=while_running, tick=tick)
    except OSError as e:
        raise RuntimeEngineError(f"cannot start the runtime interpreter {python}: {e}") from e
    if rc >= 0:
        status = f"exited with status {rc}"
    else:
        try:
            status = f"was killed by {signal.Signals(-rc).name}"
        except ValueError:
            status = f"was killed by signal {-rc}"
    return raw.decode("utf-8", "replace"), status


TICK = 0.5  # seconds between two progress reads while the worker runs


def _communicate(proc, timeout: float, tick: Callable[[], None] | None):
    """`proc.communicate(timeout=timeout)`, calling `tick()` every `TICK` seconds meanwhile (a time-out
    of communicate keeps what was read: retrying loses no output)."""
    if tick is None:
        return proc.communicate(timeout=timeout)
    end = time.monotonic() + timeout
    while True:
        left = end - time.monotonic()
        try:
            return proc.communicate(timeout=max(min(TICK, left), 0.01))
        except subprocess.TimeoutExpired:
            if left <= TICK:
                raise subprocess.TimeoutExpired(proc.args, timeout) from None
            tick()


def _run_group(cmd: list[str], timeout: float, *, cwd=None, env=None, stderr=subprocess.PIPE,
               while_running: Callable[[], None] | None = None,
               runtime: bool = True, tick: Callable[[], None] | None = None) -> tuple[int, bytes, bytes | None]:
    """Run `cmd` in a process group of its own (a terminal's Ctrl-C reaches only us, which then
    decide) -> (exit status, stdout, stderr).  The group is SIGKILLed whenever this does not
    return normally: on timeout (`TimeoutExpired` re-raised), on any exception, and on SIGINT,
    SIGTERM or SIGHUP, by the signal handler itself (`signals.on_stop`) before it raises, so that
    neither a window before `Popen` returns nor a library swallowing the exception in
    `while_running` leaves the group running; such a signal is raised again once it is gone.
    `runtime` False: `cmd` does not load MNN (a release probe), which a test not marked `runtime` may
    run.  `tick()`: called about every `TICK` seconds while `cmd` runs (progress)."""
    if runtime and os.environ.get("MTOK_TESTS_NO_RUNTIME"):  # set by tests/conftest.py for a test not marked `runtime`
        with open(os.environ["MTOK_TESTS_NO_RUNTIME"], "a", encoding="utf-8") as log:
            log.write(f"{cmd}\n")
        raise RuntimeError(f"a test not marked `runtime` started the MNN runtime: {cmd}")
    group = {"process_group": 0} if sys.version_info >= (3, 11) else {"start_new_session": True}
    proc = None
    with signals.handled(), signals.on_stop(lambda: proc is not None and _signal_group(proc)):
        since = signals.mark()
        try:
            with signals.deferred():  # raised after Popen returns, when `proc` can be killed
                proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                        stderr=stderr, **group)
            if while_running is not None:
                while_running()
            out, err = _communicate(proc, timeout, tick)
            signals.raise_pending(since)  # taken while a library call swallowed it: the group is dead
        except BaseException:
            if proc is not None:
                _kill_group(proc)
            raise
    return proc.returncode, out, err


def _signal_group(proc: subprocess.Popen) -> None:
    """SIGKILL the process group (from a signal handler: no waiting, no raising)."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except OSError:
        pass


def _kill_group(proc: subprocess.Popen) -> None:
    """SIGKILL the worker's process group (the worker and anything it started) and reap it."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        proc.kill()
    try:
        proc.communicate(timeout=10)
    except (subprocess.TimeoutExpired, ValueError, OSError):
        pass


def _describe(step: str, texts: list[str | bytes]) -> str:
    """Turn the worker's progress marker (space-padded) into words, quoting the input it was working on."""
    step = step.rstrip(" ")
    kind, _, num = step.partition(" ")
    if kind == "encode" and num.isdigit() and int(num) < len(texts):
        return f"encode of text #{num} {texts[int(num)]!r:.80}"
    if kind == "decode":
        return f"decode of id {num}"
    if kind == "chat":
        return f"chat template #{num}"
    if kind == "render":
        return f"template render #{num}"
    return step


def _tail(log: str) -> str:
    lines = log.rstrip().splitlines()[-_LOG_TAIL_LINES:]
    return "\n".join("  " + line for line in lines) or "  (nothing)"


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


_PROBE = "import importlib.metadata as m, sys; sys.stdout.write(m.version('MNN'))"
PROBE_SECONDS = 5  # an interpreter that has not answered by then is left to the runtime's own start
_probed: dict[tuple[str, int], str | None] = {}  # (interpreter, its mtime) -> its MNN release, this process


def installed_version(python: str | os.PathLike | None = None) -> str | None:
    """The MNN release `python` (None: this interpreter, which the worker runs then) has installed, as
    its package metadata says, without importing MNN: 2 ms here, one short process (~30 ms) for another
    interpreter, remembered for this process.  Not cached on disk: a `pip install` into a venv changes
    the release without touching its interpreter.  None when there is no MNN package (or no such
    interpreter): the runtime's own start says why, as before."""
    if python is None:
        try:
            return importlib.metadata.version("MNN")
        except importlib.metadata.PackageNotFoundError:
            return None
    try:
        key = (str(python), os.stat(python).st_mtime_ns)
    except OSError:
        return None
    if key not in _probed:
        try:  # in a group of its own, killed whole on a time-out or Ctrl-C: an interpreter that hangs
            # (or forks) leaves nothing behind, and then the runtime's own start says what is wrong
            rc, out, _ = _run_group([str(python), "-I", "-c", _PROBE], PROBE_SECONDS, runtime=False)
            out = out.decode("utf-8", "replace").strip()
            _probed[key] = out if rc == 0 and out else None
        except (OSError, subprocess.SubprocessError):
            _probed[key] = None
    return _probed[key]


def require_runtime(target: Target, python: str | os.PathLike | None = None) -> str | None:
    """Refuse, before anything runs (no reading, lowering or runtime), to verify `target`'s file on a
    runtime outside its release range (`Target.runs_on`): an `InputError` (exit 2) naming the target,
    its range, the release found and what to do.  -> the release found (None: no MNN package there, or
    a build that reports no release number: nothing to compare, the run goes on as before)."""
    found = installed_version(python)
    try:
        version = Version.parse(found) if found else None
    except ValueError:
        return found
    if version is None or target.runs_on.admits(version):
        return found
    where = f"--runtime-python {python}" if python is not None else f"this Python ({sys.executable})"
    others = [t.name for t in TARGETS.values() if t.output is target.output and t.runs_on.admits(version)]
    needs = f"MNN {target.runs_on.clauses}" + (f" ({target.runs_on.note})" if target.runs_on.note else "")
    raise InputError(f"--target {target.name} needs {needs}, and the "
                     f"runtime that would verify it, {where}, has MNN {found}: pass --runtime-python with a "
                     f"Python whose MNN is {target.runs_on.clauses}"
                     + (f", or choose --target {' or '.join(others)} (runs on {found})" if others else "")
                     + ", or --no-verify to write it unverified")


def check_python(python: str | os.PathLike) -> str:
    """The MNN version `python` runs; `InputError` (exit 2) when it is not an interpreter with MNN.
    Called before anything is written, so a bad `--runtime-python` never costs an output."""
    try:
        rc, out, err = _run_group([str(python), "-I", "-c", "import MNN, sys; sys.stdout.write(MNN.version())"], 120)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise InputError(f"--runtime-python {python}: cannot run it ({e.__class__.__name__}: {e})") from e
    out, err = out.decode("utf-8", "replace"), err.decode("utf-8", "replace")
    if rc != 0:
        last = (err.strip().splitlines() or ["no output"])[-1]
        raise InputError(f"--runtime-python {python}: it has no usable MNN runtime ({last})")
    return out.strip().splitlines()[-1] if out.strip() else "?"
