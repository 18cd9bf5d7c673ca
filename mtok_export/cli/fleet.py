"""Several models in one `mtok-export`: which models the `--path` values name, a process pool that
exports them (`--jobs N`), the table printed at the end, and the `--report` / `--junit` files that
cover every model.

A `--path` value is a model folder or tokenizer file, `@LIST` (a file of such values, one a line, `#`
comments; relative paths are relative to the list's folder), a folder of model folders (it holds no
tokenizer itself; each subfolder that does is a model), or `org/name[@revision]` on the Hub when no
local path has that name.  Every job runs in its own process: its verification starts its own MNN
runtime with its own time limit, and a crash or a memory peak stays in that process."""

# function-local imports: a command's modules load when the command runs, so `mtok --help` and every
# other command start without them (tests/acceptance/test_startup_imports.py)

from __future__ import annotations

import dataclasses
import os
import signal
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from .. import signals
from ..errors import InputError, Interrupted
from ..signals import STOP_SIGNALS, handled

if TYPE_CHECKING:  # the commands load the library when they run
    from ..job import Job

STOP_SECONDS = 10  # how long a stopped job may take to kill its runtime and remove its files


@dataclass(frozen=True)
class Model:
    """One model to export: a local `path`, or a Hub `repo` (fetched when its job runs)."""

    name: str  # its folder under --output, and its row and test suite
    path: Path | None = None
    repo: str | None = None
    revision: str | None = None

    @property
    def label(self) -> str:
        return f"{self.repo}@{self.revision}" if self.revision else self.repo or str(self.path)

    def job(self, base: Job) -> Job:
        """`base` (the options, checked once) reading this model: its path, or its Hub id, which
        `api.export` fetches in the model's own process; with the accept file its folder holds
        (`policy.ACCEPT_FILE`) when --accept-file named none or a fleet's shared one."""
        from ..policy import own_accept_file

        job = dataclasses.replace(base, source=self.path if self.repo is None else Path(self.label))
        if self.repo is None:
            folder = self.path if self.path.is_dir() else self.path.parent
            job = dataclasses.replace(job, policy=own_accept_file(base.policy, folder))
        return job


def expand(values: list[Path]) -> tuple[list[Model], bool]:
    """The models `values` name, and whether they are a fleet (several values, a list file or a
    folder of model folders: then each model writes OUTPUT/<name>/ and the run ends with a table,
    however many models there turn out to be)."""
    models: list[Model] = []
    fleet = len(values) > 1
    for value in values:
        text = str(value)
        if text.startswith("@"):
            fleet = True
            listed = Path(text[1:])
            for line in _list_lines(listed):
                found, _ = _one(Path(line) if Path(line).is_absolute() else listed.parent / line, line)
                models += found
            continue
        found, folder_of_models = _one(Path(value), text)
        fleet = fleet or folder_of_models
        models += found
    _unique_names(models)
    return models, fleet


def _list_lines(listed: Path) -> list[str]:
    try:
        text = listed.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise InputError(f"--path @{listed}: cannot read the list ({getattr(e, 'strerror', None) or e})") from None
    lines = [line.split("#", 1)[0].strip() for line in text.splitlines()]
    lines = [line for line in lines if line]
    if not lines:
        raise InputError(f"--path @{listed}: the list names no model")
    return lines


def _one(path: Path, text: str) -> tuple[list[Model], bool]:
    """(the models of one value, whether it was a folder of model folders)."""
    from ..formats import candidates
    from ..hub import parse_repo_id

    if not path.exists():
        repo = parse_repo_id(text)
        if repo is not None:
            return [Model(repo[0].split("/")[1], repo=repo[0], revision=repo[1])], False
        return [Model(_name(path), path)], False  # the export says "no such file or directory"
    if path.is_dir() and not candidates(path):
        subs = sorted(p for p in path.iterdir() if p.is_dir() and not p.name.startswith(".") and candidates(p))
        if subs:
            return [Model(p.name, p) for p in subs], True
    return [Model(_name(path), path)], False


def _name(path: Path) -> str:
    path = path.absolute()
    return path.name if path.is_dir() or not path.parent.name else path.parent.name


def _unique_names(models: list[Model]) -> None:
    seen: dict[str, Model] = {}
    for m in models:
        if m.name in seen:
            raise InputError(f"--path: {seen[m.name].label} and {m.label} are both named {m.name!r}, so they would "
                             "write the same OUTPUT/<name>/ folder and share a row; export them separately")
        seen[m.name] = m


# ------------------------------------------------------------------ the pool

def run_pool(models: list[Model], jobs: int, job, done=None) -> list[dict]:
    """`job(model) -> row` for every model, at most `jobs` at a time, each in a forked process;
    `done(row)` is told each row as it arrives.  Returns the rows in `models`' order.

    Ctrl-C or SIGTERM stops every job: each gets SIGINT (its export then kills its runtime worker
    and removes its temporary files), is waited for, and SIGKILLed after STOP_SECONDS; then the
    KeyboardInterrupt / `Interrupted` goes on to the CLI's handler."""
    import multiprocessing as mp
    from multiprocessing.connection import wait

    if "fork" not in mp.get_all_start_methods():  # Windows: a job is a closure, which spawn cannot send
        return [_tell(done, job(model)) for model in models]
    ctx = mp.get_context("fork")
    rows: list[dict | None] = [None] * len(models)
    pending = list(enumerate(models))
    running: dict = {}  # the result pipe's reading end -> (process, index)
    with handled():  # SIGTERM and SIGHUP raise here as Ctrl-C does (the CLI's own handlers, when it runs)
        try:
            while pending or running:
                while pending and len(running) < jobs:
                    i, model = pending.pop(0)
                    reader, writer = ctx.Pipe(duplex=False)
                    # daemon: should one escape _stop, multiprocessing's exit handler still stops and joins it
                    proc = ctx.Process(target=_child, args=(job, model, writer), name=f"mtok-export {model.name}",
                                       daemon=True)
                    sys.stdout.flush()  # a forked job would print what is still buffered again
                    sys.stderr.flush()
                    proc.start()
                    writer.close()
                    running[reader] = (proc, i)
                for reader in wait(list(running)):  # a row arrived, or the job died without one
                    proc, i = running.pop(reader)
                    try:
                        rows[i] = reader.recv()
                    except (EOFError, OSError):
                        proc.join()
                        rows[i] = died_row(models[i], proc.exitcode)
                    reader.close()
                    proc.join()
                    _tell(done, rows[i])
        except BaseException:
            # a second stop signal must not cut the cleanup short
            previous = {s: signal.signal(s, signal.SIG_IGN) for s in STOP_SIGNALS}
            try:
                _stop([proc for proc, _ in running.values()])
            finally:
                for s, h in previous.items():
                    signal.signal(s, h)
            raise
    return rows


def _tell(done, row: dict) -> dict:
    if done is not None:
        done(row)
    return row


def _stop(procs) -> None:
    for proc in procs:
        if proc.is_alive():
            try:
                os.kill(proc.pid, signal.SIGINT)  # see _child
            except ProcessLookupError:
                pass
    deadline = time.monotonic() + STOP_SECONDS
    for proc in procs:
        proc.join(max(0.0, deadline - time.monotonic()))
        if proc.is_alive():
            proc.kill()
            proc.join()


def _child(job, model: Model, writer) -> None:
    """A job's process.  It is stopped by SIGINT (the parent's, a terminal's Ctrl-C, or the kernel's
    when the parent dies) or SIGTERM, which raise once (`signals.for_forked_job`): every cleanup path
    of the export (the runtime's process group, temporary files) handles it, and unlike an Exception
    no `except Exception` on the way swallows it."""
    signals.for_forked_job()
    _stop_with_parent()
    try:
        from .console import set_quiet

        set_quiet(True)  # a job prints nothing: the parent prints its row
        try:
            row = job(model)
        except (KeyboardInterrupt, Interrupted):
            raise
        except Exception as e:  # a bug in one job: its row says so, the others go on
            row = died_row(model, 2, f"internal error: {type(e).__name__}: {e}")
        writer.send(row)
        writer.close()
    except (KeyboardInterrupt, Interrupted):  # stopped, whatever it was doing; its files are gone
        os._exit(130)
    except OSError:  # the parent is gone
        pass


def _stop_with_parent() -> None:
    """Linux: the kernel sends this job SIGINT when the parent dies, even by kill -9."""
    try:
        import ctypes

        ctypes.CDLL(None).prctl(1, signal.SIGINT)  # PR_SET_PDEATHSIG
    except Exception:  # not Linux: the parent's own cleanup still applies
        pass


def died_row(model: Model, code: int | None, error: str | None = None) -> dict:
    """The row of a job that ended without one."""
    if error is None:
        how = f"was killed by {signal.Signals(-code).name}" if code is not None and code < 0 else f"exited ({code})"
        error = f"internal error: the export process {how} before reporting"
    from ..reports import EXIT_MEANING, junit_cases, outcome_json

    return {"name": model.name, "source": model.label, "exit_code": 2, "outcome": EXIT_MEANING[2], "error": error,
            "hint": None, "losses": 0, "refused": 0, "checks": None, "seconds": 0.0,
            "report": {"name": model.name, "source": model.label, "seconds": 0.0,
                       **outcome_json("mtok-export", 2, error=RuntimeError(error))},
            "junit": junit_cases(f"mtok-export: {model.label}", 2, error=error), "suite": f"mtok-export: {model.label}"}


# ------------------------------------------------------------------ printing

def print_row(row: dict, index: int, total: int) -> None:
    """One line on stderr as each model finishes."""
    from .console import err

    line = f"[{index}/{total}] {row['name']}: exit {row['exit_code']} ({row['outcome']}), {_what(row)}"
    err.print(line, markup=False)
    if row["exit_code"] and row["error"]:
        err.print(f"  error: {row['error']}", markup=False)
        for i, line in enumerate((row["hint"] or "").splitlines()):
            err.print(f"  hint: {line}" if i == 0 else f"        {line}", markup=False)
        if row.get("next"):
            err.print(f"  why: {row['next']['why']}", markup=False)
            err.print(f"  next: {row['next']['command']}", markup=False)
    if row.get("stale"):
        err.print(f"  warning: {stale_warning(row['accept_file'], row['stale'])}", markup=False)


def stale_warning(accept_file: str, codes: list[str]) -> str:
    return (f"{accept_file} lists loss code(s) this export no longer records: {', '.join(codes)} (remove them, or "
            "the next time such a loss comes back it passes unreviewed; --strict refuses a stale accept file)")


def _what(row: dict) -> str:
    checks = row["checks"]
    parts = [f"{row['losses']} loss code(s)" + (f", {row['refused']} refused" if row["refused"] else ""),
             f"checks {checks[0]}/{checks[1]} passed" if checks else "not verified", f"{row['seconds']:.1f} s"]
    return ", ".join(parts)


def print_table(rows: list[dict], code: int, seconds: float) -> None:
    from rich.table import Table

    from .console import out

    t = Table("model", "exit", "outcome", "losses", "checks", "seconds", box=None, padding=(0, 1),
              title=f"{len(rows)} model(s): exit {code}, {seconds:.1f} s in all", title_justify="left")
    for column in t.columns:
        column.no_wrap = True
    for r in rows:
        losses = f"{r['losses']}" + (f" ({r['refused']} refused)" if r["refused"] else "")
        checks = f"{r['checks'][0]}/{r['checks'][1]}" if r["checks"] else "-"
        t.add_row(r["name"], str(r["exit_code"]), SHORT.get(r["exit_code"], r["outcome"]), losses, checks,
                  f"{r['seconds']:.1f}")
    out.print(t)


def fleet_verdict(rows: list[dict], code: int) -> str:
    """The fleet's verdict in one line: the exit code, its meaning, and the models of each outcome."""
    from ..reports import EXIT_MEANING

    by: dict[str, list[str]] = {}
    for r in rows:
        by.setdefault(SHORT.get(r["exit_code"], r["outcome"]), []).append(r["name"])
    parts = [f"{len(names)} {what}" + (f" ({', '.join(names)})" if what != "passed" else "") for what, names in by.items()]
    return f"{'passed' if code == 0 else EXIT_MEANING.get(code, 'error')} (exit {code}): {', '.join(parts)}"


SHORT = {0: "passed", 1: "mismatch", 2: "bad input", 3: "refused", 130: "interrupted", 143: "interrupted"}
