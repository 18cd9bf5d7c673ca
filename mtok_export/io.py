"""Writing output files safely: a temporary file beside the target, fsync, then a rename, so a
failure or a kill never leaves half a file and never clobbers a good one (DESIGN section 5).

The temporary file gets the mode a plain `open()` would give (0666 minus the umask, or the mode of
the file it replaces), not `mkstemp`'s 0600, which other users and packaging steps cannot read.
Its name carries the writer's pid, `.tokenizer.mtok.<pid>.<random>.tmp`, so a later run can tell
a temporary file left by a killed run from one a live run is still writing, and remove it."""

from __future__ import annotations

import os
import shutil
import stat
import time
from pathlib import Path

from .errors import OutputError

# Temporary files named by mkstemp before pids were recorded are removed once this old.
_STALE_SECONDS = 600


def cache_dir() -> Path:
    """Where computed data is cached (Unicode tables, reference results): ``$MTOK_CACHE_DIR``, else
    ``$XDG_CACHE_HOME/mtok-export``, else ``~/.cache/mtok-export``."""
    explicit = os.environ.get("MTOK_CACHE_DIR")
    if explicit:
        return Path(explicit)
    xdg = os.environ.get("XDG_CACHE_HOME")
    if xdg and os.path.isabs(xdg):
        return Path(xdg) / "mtok-export"
    return Path.home() / ".cache" / "mtok-export"


def atomic_write(path, data: bytes) -> None:
    """Write `data` to `path` through a temporary file and a rename.  Every OS error becomes an
    `OutputError` naming the path and the reason; the temporary file is removed on any failure,
    KeyboardInterrupt included."""
    path = Path(path)
    folder = path.parent
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError):
        blocker = next((p for p in (folder, *folder.parents) if p.exists() and not p.is_dir()), folder)
        raise OutputError(blocker, "is a file, so the output folder cannot be created there") from None
    except OSError as e:
        raise OutputError(e.filename or folder, f"cannot create the output folder ({_reason(e)})") from None
    if path.is_dir():
        raise OutputError(path, "is a directory, not a file")
    remove_stale_temps(path)
    tmp = folder / f".{path.name}.{os.getpid()}.{os.urandom(4).hex()}.tmp"
    try:
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o666)
        except OSError as e:
            raise OutputError(folder, f"cannot create a file here ({_reason(e)})") from None
        try:
            if path.exists():  # as open() would: an overwritten file keeps its mode
                os.chmod(fd, stat.S_IMODE(path.stat().st_mode))
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except OSError as e:
        _unlink(tmp)
        raise OutputError(path, f"cannot write ({_reason(e)})") from None
    except BaseException:
        _unlink(tmp)
        raise
    _fsync_dir(folder)


def remove_stale_temps(path) -> list[Path]:
    """Remove temporary files for `path` left by runs that were killed: ours and export's
    `.NAME.<pid>.verifying` whose pid is gone, and mkstemp-named ones (`.tokenizer.mtok.XXXXXXXX`)
    older than ten minutes.  -> the removed."""
    path = Path(path)
    removed = []
    try:
        candidates = list(path.parent.glob(f".{path.name}.*"))
    except OSError:
        return removed
    for p in candidates:
        parts = p.name[len(path.name) + 2:].split(".")
        if ((len(parts) == 3 and parts[2] == "tmp") or parts[1:] == ["verifying"]) and parts[0].isdigit():
            stale = not pid_alive(int(parts[0]))  # ours, or export's file under verification (.<pid>.verifying)
        elif len(parts) == 1 and len(parts[0]) == 8:
            try:
                stale = time.time() - p.stat().st_mtime > _STALE_SECONDS
            except OSError:
                continue
        else:
            continue
        if stale and _unlink(p):
            removed.append(p)
    return removed


def remove_stale_folders(parent, prefix: str) -> list[Path]:
    """Remove the folders `<prefix><pid>-*` in `parent` whose pid is gone (left by a run killed
    without unwinding: kill -9, an OOM kill); a live process's, and names of any other form, stay.
    -> the removed."""
    removed = []
    try:
        candidates = list(Path(parent).glob(f"{prefix}*-*"))
    except OSError:
        return removed
    for p in candidates:
        pid = p.name[len(prefix):].split("-", 1)[0]
        if pid.isdigit() and not pid_alive(int(pid)) and p.is_dir() and not p.is_symlink():
            shutil.rmtree(p, ignore_errors=True)
            removed.append(p)
    return removed


def pid_alive(pid: int) -> bool:
    """Whether process `pid` exists (one owned by another user counts)."""
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # exists, owned by someone else
        return True
    return True


def _unlink(p: Path) -> bool:
    try:
        os.unlink(p)
        return True
    except OSError:
        return False


def _fsync_dir(folder: Path) -> None:
    """Make the rename itself durable; not every platform can open a directory."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _reason(e: OSError) -> str:
    return e.strerror or str(e)
