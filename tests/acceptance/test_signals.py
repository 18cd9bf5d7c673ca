"""SIGINT, SIGTERM and SIGHUP stop `mtok-export` and `mtok verify` the same way in every phase
(issue 25): exit 130 / 143 / 129 with one line, the output and its manifest as they were, no
`.verifying` or `.rejected` file, the runtime's temporary folder and process group gone.  kill -9
cannot be handled: the next export of that output removes what it left.

Each case runs the CLI through `signal_driver.py`, which pauses at the phase until the signal
comes; the runtime phases use the real MNN worker (paused in the work done while it runs) or a
fake interpreter that hangs with a background child (the group kill)."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.processes import processes_with, wait_for
from tests.support.signal_runs import (OLD, SAMPLE, export_argv, hung_python, paused, signal_when, start,
                                       start_export)

REPO = Path(__file__).resolve().parents[2]

pytestmark = [pytest.mark.runtime,  # subprocess exports and verifies, paused and signalled
              pytest.mark.skipif(sys.platform != "linux", reason="signals, process groups and ps as on Linux")]

SIGNALS = [(signal.SIGINT, "Ctrl-C"), (signal.SIGTERM, "SIGTERM"), (signal.SIGHUP, "SIGHUP")]
EXPORT_PHASES = ["read", "lower", "reference", "runtime", "runtime-hung", "rename"]


@pytest.fixture
def env(tmp_path):
    """The CLI's environment: a temp root and a cache of its own (no other run can add or hide
    `mtok-runtime-*` folders)."""
    root = tmp_path / "tmp"
    root.mkdir()
    return {**os.environ, "PYTHONPATH": str(REPO), "TMPDIR": str(root), "MTOK_CACHE_DIR": str(tmp_path / "cache")}


@pytest.fixture
def out_dir(tmp_path) -> Path:
    """An output folder holding a previous output and manifest, which a stopped export must keep."""
    out = tmp_path / "out"
    out.mkdir()
    (out / "tokenizer.mtok").write_bytes(OLD)
    (out / "tokenizer.mtok.json").write_text("{}")
    return out


def assert_stopped(code: int, err: str, signum: int, name: str) -> None:
    assert code == 128 + signum, err
    assert err.strip().splitlines()[-1] == f"interrupted by {name}: stopped, worker processes and temporary files removed", err
    assert "Traceback" not in err and "error:" not in err, err


def assert_clean(env: dict, marker: str | None = None) -> None:
    tmp = env["TMPDIR"]
    assert wait_for(lambda: not processes_with(tmp), 10), processes_with(tmp)  # the worker's args name its folder
    if marker:
        assert wait_for(lambda: not processes_with(f"sleep {marker}"), 10), processes_with(f"sleep {marker}")
    assert list(Path(tmp).iterdir()) == []


@pytest.mark.parametrize("signum,name", SIGNALS, ids=[n for _, n in SIGNALS])
@pytest.mark.parametrize("phase", EXPORT_PHASES)
def test_export_stopped_in_every_phase_keeps_the_output(tmp_path, env, out_dir, phase, signum, name):
    proc, ready, marker = start_export(tmp_path, out_dir, phase, env)
    _, err = signal_when(proc, ready, signum)
    assert_stopped(proc.returncode, err, signum, name)
    assert sorted(p.name for p in out_dir.iterdir()) == ["tokenizer.mtok", "tokenizer.mtok.json"]
    assert (out_dir / "tokenizer.mtok").read_bytes() == OLD
    assert (out_dir / "tokenizer.mtok.json").read_text() == "{}"
    assert_clean(env, marker)


def test_ctrl_c_leaves_no_empty_output_folder(tmp_path, env):
    """An export to a folder that did not exist, stopped while it verifies (its .verifying file is in
    the folder then): the folder, and the parent it needed, go with the temporary file."""
    out = tmp_path / "new" / "out"
    proc = start("runtime", export_argv(out), env)
    _, err = signal_when(proc, paused(proc, "runtime"), signal.SIGINT)
    assert_stopped(proc.returncode, err, signal.SIGINT, "Ctrl-C")
    assert not (tmp_path / "new").exists()


@pytest.mark.parametrize("signum,name", SIGNALS[1:], ids=[n for _, n in SIGNALS[1:]])
def test_a_signal_swallowed_while_the_worker_runs_still_stops(tmp_path, env, out_dir, signum, name):
    # The window of the flaky test_runtime_cleanup: the exception raised in the work done while the
    # worker runs is swallowed (a bare except in a library).  The handler has killed the worker's
    # group itself, and the signal is raised again once communicate returns.
    python, marker = hung_python(tmp_path)
    proc = start("runtime", export_argv(out_dir, python), env, "--swallow")
    ready = paused(proc, "runtime")
    _, err = signal_when(proc, lambda: ready() and len(processes_with(f"sleep {marker}")) == 2, signum)
    assert_stopped(proc.returncode, err, signum, name)
    assert (out_dir / "tokenizer.mtok").read_bytes() == OLD
    assert_clean(env, marker)


@pytest.mark.parametrize("signum,name", SIGNALS, ids=[n for _, n in SIGNALS])
def test_a_signal_during_the_replace_is_held_until_the_manifest_is_written(env, out_dir, signum, name):
    # Once the output is being replaced, the rest of the commit (manifest) completes, then the
    # command stops: the output never stands beside an older manifest.
    proc = start("commit", export_argv(out_dir), env)
    _, err = signal_when(proc, paused(proc, "commit"), signum)
    assert_stopped(proc.returncode, err, signum, name)
    data = (out_dir / "tokenizer.mtok").read_bytes()
    assert data != OLD
    manifest = json.loads((out_dir / "tokenizer.mtok.json").read_text())
    assert manifest["output"]["sha256"] == hashlib.sha256(data).hexdigest()
    assert sorted(p.name for p in out_dir.iterdir()) == ["tokenizer.mtok", "tokenizer.mtok.json"]
    assert_clean(env)


@pytest.mark.parametrize("signum,name", SIGNALS, ids=[n for _, n in SIGNALS])
@pytest.mark.parametrize("phase", ["read", "reference", "runtime-hung"])
def test_verify_stopped_in_every_phase(tmp_path, env, signum, name, phase):
    from mtok_export.formats import read_source
    from mtok_export.targets import build

    mtok = tmp_path / "tokenizer.mtok"
    mtok.write_bytes(build(read_source(SAMPLE))[0])
    argv = ["mtok", "verify", str(mtok), "--against", str(SAMPLE), "--allow-lossy"]
    marker = None
    if phase == "runtime-hung":
        python, marker = hung_python(tmp_path)
        proc = start("runtime", argv + ["--runtime-python", str(python)], env)
        ready = lambda: len(processes_with(f"sleep {marker}")) == 2  # noqa: E731
    else:
        proc = start(phase, argv, env)
        ready = paused(proc, phase)
    _, err = signal_when(proc, ready, signum)
    assert_stopped(proc.returncode, err, signum, name)
    assert_clean(env, marker)


@pytest.mark.parametrize("phase", ["reference", "runtime-hung", "rename"])
def test_kill_9_leftovers_are_removed_by_the_next_export(tmp_path, env, out_dir, phase):
    proc, ready, marker = start_export(tmp_path, out_dir, phase, env)
    signal_when(proc, ready, signal.SIGKILL)
    assert proc.returncode == -signal.SIGKILL
    pid = proc.pid
    assert (out_dir / f".tokenizer.mtok.{pid}.verifying").is_file()  # kill -9 cannot be handled
    assert (out_dir / "tokenizer.mtok").read_bytes() == OLD
    runtime_dirs = list(Path(env["TMPDIR"]).glob(f"mtok-runtime-{pid}-*"))
    assert len(runtime_dirs) == (1 if phase == "runtime-hung" else 0)
    if marker:  # the fake runtime does not ask for PDEATHSIG as the real worker does: end it here
        for line in processes_with(f"sleep {marker}"):
            os.kill(int(line.split()[0]), signal.SIGKILL)
    # a live concurrent run's temporaries (this test process's pid) must stay
    live_file = out_dir / f".tokenizer.mtok.{os.getpid()}.verifying"
    live_file.write_bytes(b"x")
    live_dir = Path(env["TMPDIR"]) / f"mtok-runtime-{os.getpid()}-live"
    live_dir.mkdir()
    again = subprocess.run([sys.executable, "-m", "mtok_export", "export", *export_argv(out_dir)[1:]],
                           env=env, capture_output=True, text=True, timeout=300)
    assert again.returncode == 0, again.stderr
    assert (out_dir / "tokenizer.mtok").read_bytes() != OLD
    assert sorted(p.name for p in out_dir.iterdir()) == sorted(
        ["tokenizer.mtok", "tokenizer.mtok.json", live_file.name])
    assert list(Path(env["TMPDIR"]).iterdir()) == [live_dir]


def test_sigint_stops_verify_started_with_sigint_ignored(tmp_path, env):
    # A shell without job control starts `cmd &` with SIGINT ignored, and Python keeps it so: an
    # explicit SIGINT then did nothing while the worker hung (test_runtime_cleanup's flake, whose
    # stderr stopped at "verify: runtime" and whose sleeps were left behind).
    from mtok_export.formats import read_source
    from mtok_export.targets import build

    mtok = tmp_path / "tokenizer.mtok"
    mtok.write_bytes(build(read_source(SAMPLE))[0])
    python, marker = hung_python(tmp_path)
    proc = subprocess.Popen([sys.executable, "-m", "mtok_export", "verify", str(mtok), "--against", str(SAMPLE),
                             "--allow-lossy", "--runtime-python", str(python)], env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
    _, err = signal_when(proc, lambda: len(processes_with(f"sleep {marker}")) == 2, signal.SIGINT)
    assert_stopped(proc.returncode, err, signal.SIGINT, "Ctrl-C")
    assert_clean(env, marker)


def test_an_ignored_sighup_stays_ignored():
    # nohup: the hangup must not stop the command
    from mtok_export import signals

    previous = signal.signal(signal.SIGHUP, signal.SIG_IGN)
    try:
        with signals.handled():
            assert signal.getsignal(signal.SIGHUP) == signal.SIG_IGN
            assert signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL
        assert signal.getsignal(signal.SIGHUP) == signal.SIG_IGN
    finally:
        signal.signal(signal.SIGHUP, previous)
