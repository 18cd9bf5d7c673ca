"""The runtime worker never outlives the tool (issue 13): on Ctrl-C of a CLI process running a
verify, on SIGTERM, and on timeout, its whole process group is killed, its temporary folder is
removed, and the CLI exits 130 (143 for SIGTERM) with one line.

A hung runtime is simulated by `--runtime-python` pointing at a script that starts a background
`sleep` and then sleeps itself: both must be gone afterwards, which proves the group is killed,
not just the direct child."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.processes import wait_for
from mtok_export.errors import RuntimeEngineError
from mtok_export.verify.runtime import run_runtime

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "samples/qwen-bpe"

pytestmark = [pytest.mark.runtime,  # the runtime worker stopped from outside
              pytest.mark.skipif(sys.platform != "linux", reason="process groups and ps as on Linux")]


def hung_runtime(tmp_path: Path) -> tuple[Path, str]:
    """A fake interpreter that never answers; -> (its path, a marker in its processes' command lines)."""
    marker = str(4000 + os.getpid() % 1000)  # `sleep <marker>` identifies our sleeps in ps
    script = tmp_path / "hung-python"
    script.write_text(f"#!/bin/sh\nsleep {marker}1 &\nexec sleep {marker}2\n")
    script.chmod(0o755)
    return script, marker


def processes_with(marker: str) -> list[str]:
    ps = subprocess.run(["ps", "-eo", "pid,args"], capture_output=True, text=True, check=True).stdout
    return [line for line in ps.splitlines() if f"sleep {marker}" in line]


@pytest.fixture
def private_tmp(tmp_path, monkeypatch) -> Path:
    """A temp root of our own (this process and the CLI's), so other test runs on the machine
    cannot add or hide `mtok-runtime-*` folders."""
    import tempfile

    root = tmp_path / "tmp"
    root.mkdir()
    monkeypatch.setenv("TMPDIR", str(root))
    monkeypatch.setattr(tempfile, "tempdir", str(root))
    return root




@pytest.fixture
def exported(tmp_path) -> Path:
    from mtok_export.formats import read_source
    from mtok_export.targets import build

    data, _, _ = build(read_source(SAMPLE))
    out = tmp_path / "tokenizer.mtok"
    out.write_bytes(data)
    return out


@pytest.mark.parametrize("signum,code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_signal_during_verify_kills_the_worker_group(tmp_path, exported, private_tmp, signum, code):
    script, marker = hung_runtime(tmp_path)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.Popen([sys.executable, "-m", "mtok_export", "verify", str(exported), "--against", str(SAMPLE),
                             "--allow-lossy", "--runtime-python", str(script)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        # the release probe runs the fake interpreter first (and gives up on it): the worker's folder
        # shows the runtime itself has started
        assert wait_for(lambda: list(private_tmp.glob("mtok-runtime-*")), 120), "the fake runtime never started"
        assert wait_for(lambda: len(processes_with(marker)) == 2, 60), "the fake runtime never started"
        proc.send_signal(signum)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == code, err
    lines = err.strip().splitlines()
    assert lines[-1].startswith("interrupted"), err  # one line saying so, after the progress lines
    assert all(line.startswith("verify: ") for line in lines[:-1]), err
    assert "Traceback" not in err
    assert wait_for(lambda: not processes_with(marker), 10), processes_with(marker)
    assert list(private_tmp.iterdir()) == []


def test_timeout_kills_the_worker_group(tmp_path, exported, private_tmp):
    script, marker = hung_runtime(tmp_path)
    with pytest.raises(RuntimeEngineError, match=r"did not finish within 3s"):
        run_runtime(exported, texts=["a"], python=script, timeout=3)
    assert wait_for(lambda: not processes_with(marker), 10), processes_with(marker)
    assert list(private_tmp.iterdir()) == []


def test_malformed_file_is_read_by_our_reader_before_mnn(tmp_path, exported):
    # issue 13: a truncated .mtok went to MNN first (exit 1, or SIGSEGV reported); now our reader's
    # checks run first and name the section and offset.  A missing interpreter proves MNN never ran.
    from mtok_export.errors import FormatError

    truncated = tmp_path / "truncated.mtok"
    truncated.write_bytes(exported.read_bytes()[:5000])
    with pytest.raises(FormatError, match=r"truncated.mtok section \w+ at 0x[0-9a-f]{8}: "):
        run_runtime(truncated, texts=["a"], python=tmp_path / "no-such-python")


def test_verify_cli_on_a_random_file_is_exit_2(tmp_path):
    random = tmp_path / "random.mtok"
    random.write_bytes(bytes(range(256)) * 8)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    r = subprocess.run([sys.executable, "-m", "mtok_export", "verify", str(random), "--against", str(SAMPLE)],
                       capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 2, r.stderr
    assert r.stderr.startswith(f"error: {random} section header at 0x00000000: ")
    assert "Traceback" not in r.stderr
