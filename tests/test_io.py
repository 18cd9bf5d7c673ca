"""`io.atomic_write`: the mode a plain open() gives, a temporary file removed on every failure
(a full disk, Ctrl-C), OS errors as one `OutputError` naming the path and the reason, and stale
temporary files of killed runs cleaned (issue 13)."""

from __future__ import annotations

import errno
import os
import subprocess
import sys
import time

import pytest

from mtok_export.errors import OutputError
from mtok_export.io import atomic_write, remove_stale_temps
from tests.support.commands import run_process


@pytest.fixture
def umask():
    """Set the umask for one test and restore it."""
    saved = os.umask(0o022)
    os.umask(saved)
    yield lambda m: os.umask(m)
    os.umask(saved)


def mode(p) -> int:
    return p.stat().st_mode & 0o777


@pytest.mark.parametrize("mask,want", [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_new_file_gets_the_umask_mode(tmp_path, umask, mask, want):
    umask(mask)
    p = tmp_path / "tokenizer.mtok"
    atomic_write(p, b"abc")
    assert p.read_bytes() == b"abc"
    assert mode(p) == want
    assert sorted(os.listdir(tmp_path)) == ["tokenizer.mtok"]


def test_replaced_file_keeps_its_mode(tmp_path, umask):
    umask(0o022)
    p = tmp_path / "tokenizer.mtok"
    p.write_bytes(b"old")
    p.chmod(0o640)
    atomic_write(p, b"new")
    assert p.read_bytes() == b"new" and mode(p) == 0o640


def test_creates_missing_folders(tmp_path):
    p = tmp_path / "a/b/tokenizer.mtok"
    atomic_write(p, b"x")
    assert p.read_bytes() == b"x"


def test_full_disk_is_an_output_error_and_leaves_nothing(tmp_path, monkeypatch):
    p = tmp_path / "tokenizer.mtok"
    p.write_bytes(b"good")

    def full(fd, data):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "write", full)
    with pytest.raises(OutputError) as info:
        atomic_write(p, b"new contents")
    assert str(info.value) == f"{p}: cannot write (No space left on device)"
    assert info.value.exit_code == 2
    assert p.read_bytes() == b"good"  # the old file is untouched
    assert os.listdir(tmp_path) == ["tokenizer.mtok"]


def test_ctrl_c_during_the_write_leaves_no_temp_file(tmp_path, monkeypatch):
    def interrupted(fd):
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "fsync", interrupted)
    with pytest.raises(KeyboardInterrupt):
        atomic_write(tmp_path / "tokenizer.mtok", b"x")
    assert os.listdir(tmp_path) == []


def test_parent_is_a_file(tmp_path):
    (tmp_path / "f").write_text("x")
    with pytest.raises(OutputError, match=r"/f: is a file, so the output folder cannot be created there$"):
        atomic_write(tmp_path / "f/sub/tokenizer.mtok", b"x")


def test_target_is_a_folder(tmp_path):
    (tmp_path / "tokenizer.mtok").mkdir()
    with pytest.raises(OutputError, match=r"tokenizer.mtok: is a directory, not a file$"):
        atomic_write(tmp_path / "tokenizer.mtok", b"x")


def test_unwritable_folder(tmp_path, monkeypatch):
    real_open = os.open

    def denied(path, flags, mode=0o777, **kw):
        if str(path).startswith(str(tmp_path)) and flags & os.O_CREAT:
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(path))
        return real_open(path, flags, mode, **kw)

    monkeypatch.setattr(os, "open", denied)
    with pytest.raises(OutputError, match=rf"^{tmp_path}: cannot create a file here \(Permission denied\)$"):
        atomic_write(tmp_path / "tokenizer.mtok", b"x")


def dead_pid() -> int:
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid


def test_stale_temps_of_killed_runs_are_removed(tmp_path):
    target = tmp_path / "tokenizer.mtok"
    dead = tmp_path / f".tokenizer.mtok.{dead_pid()}.0a1b2c3d.tmp"  # ours, writer gone
    verifying = tmp_path / f".tokenizer.mtok.{dead_pid()}.verifying"  # export's, killed while verifying
    live = tmp_path / f".tokenizer.mtok.{os.getppid()}.0a1b2c3d.tmp"  # ours, writer running
    old = tmp_path / ".tokenizer.mtok.k3j_x9q1"  # mkstemp's, from before pids were recorded
    fresh = tmp_path / ".tokenizer.mtok.z8y7x6w5"
    other = tmp_path / ".tokenizer.mtok.json"  # not a temporary file
    for p in (dead, verifying, live, old, fresh, other):
        p.write_bytes(b"partial")
    an_hour_ago = time.time() - 3600
    os.utime(old, (an_hour_ago, an_hour_ago))
    assert sorted(remove_stale_temps(target)) == sorted([dead, verifying, old])
    atomic_write(target, b"x")  # also cleans, and leaves its own temp nowhere
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        [live.name, fresh.name, other.name, "tokenizer.mtok"])


@pytest.mark.runtime
def test_export_output_under_a_file_is_exit_2_one_line(tmp_path):
    (tmp_path / "f").write_text("x")
    from pathlib import Path

    repo = Path(__file__).resolve().parents[1]
    r = run_process("mtok", "export", "--path", repo / "samples/bert-wordpiece", "--output", tmp_path / "f/out",
                    "--no-verify", "--allow-lossy", timeout=120)
    assert r.returncode == 2
    assert r.stderr == f"error: {tmp_path / 'f'}: is a file, so the output folder cannot be created there\n"
