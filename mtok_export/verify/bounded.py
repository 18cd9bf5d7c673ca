"""The reference libraries run where their memory is bounded (issue 40): a call into HF `tokenizers`,
`sentencepiece`, `tiktoken` or llama.cpp runs in a forked child under `RLIMIT_AS`, so a source that
would take gigabytes (a normalizer that prepends a 1,000-character string to every sweep entry grew
to 24 GB) is refused with its cause, exit 2, instead of the kernel killing the export or the
library's allocation failure aborting it (a Rust panic in-process is SIGABRT).

A fork, not a new interpreter: the child has the reference already loaded and the IR already read,
so the bound costs a fork (tens of milliseconds) instead of a second start and load.  The child's
answer comes back pickled; an answer that cannot be pickled (a `Reference` holding its library's
normalizer, a library object that pickles but does not rebuild) is asked again here, where it is
known to fit, and comes from the reference cache the child just filled.  The child's progress (`tell(done, total)`) and its error, if any, come back the
same way.  Where there is no fork (not Linux or macOS) the call runs in-process, unbounded, as before.

HF `tokenizers` disables its thread pool in a child forked after the pool ran (its threads are not
copied); the environment variable set around the fork says so in advance, so it does not print its
warning."""

from __future__ import annotations

import faulthandler
import os
import pickle
import signal
import struct
import sys
import tempfile
from collections.abc import Callable

from ..errors import InputError

try:
    import resource
except ImportError:  # not a Unix: no fork either (`available`)
    resource = None

MEMORY = 4 * 2**30  # bytes of address space the reference may add to what this process holds
_HEADER = struct.Struct("<Q")


class OutOfMemory(InputError):
    """The reference needed more than its memory budget (exit 2)."""


def available() -> bool:
    return hasattr(os, "fork") and sys.platform != "win32"


def run(call: Callable[[Callable[[int, int], None] | None], object], *, what: str, library: str,
        tell: Callable[[int, int], None] | None = None, memory: int = MEMORY):
    """`call(tell)` in a child bounded to `memory` more bytes of address space than this process has
    now -> its value.  Its exceptions are raised here (a library's own error as `InputError`, as
    the caller names it); running out of the budget or dying of a signal is an `InputError` naming
    `library` and `what` it was doing (exit 2), never a kill of this process."""
    if not available() or memory <= 0:
        return call(tell)
    limit = _limit(memory)
    if limit is not None:  # what the child may add: less when a lower hard limit (ulimit -v) is set
        memory = max(limit - _address_space(), 0)
    with tempfile.TemporaryFile() as err:
        read_end, write_end = os.pipe()
        before = os.environ.get("TOKENIZERS_PARALLELISM")
        os.environ["TOKENIZERS_PARALLELISM"] = "false"  # the child's pool is gone: say so, no warning
        try:
            pid = os.fork()
        finally:
            if before is not None:
                os.environ["TOKENIZERS_PARALLELISM"] = before
        if pid == 0:  # never returns
            os.close(read_end)
            _child(call, write_end, err.fileno(), limit, tell is not None)
        if before is None:
            os.environ.pop("TOKENIZERS_PARALLELISM", None)
        os.close(write_end)
        try:
            answer = _serve(read_end, tell)
        finally:
            os.close(read_end)
            status = _reap(pid)
        if answer is not None:
            kind, value = answer
            if kind == "value":
                return value
            if kind == "again":  # not picklable: asked here, where it fits (and is cached now)
                return call(tell)
            raise value
        err.seek(0)
        raise _death(status, err.read().decode("utf-8", "replace"), what, library, memory)


def _limit(memory: int) -> int | None:
    """The child's RLIMIT_AS: `memory` bytes more than this process holds, at most the hard limit
    (None: /proc does not say what it holds: unbounded, as before)."""
    held = _address_space()
    if not held or resource is None:
        return None
    hard = resource.getrlimit(resource.RLIMIT_AS)[1]
    return held + memory if hard == resource.RLIM_INFINITY else min(held + memory, hard)


def _child(call, out: int, err: int, limit: int | None, telling: bool) -> None:
    """In the fork: bound the address space, quiet the terminal (the library's own messages go to
    `err`, read back for the cause), run, send the answer, and leave without unwinding the parent's
    state (no atexit, no finalizers)."""
    code = 0
    try:
        signal.signal(signal.SIGINT, signal.SIG_DFL)  # the parent decides what a Ctrl-C does
        faulthandler.disable()  # a crash is the parent's to name (a test runner's traceback is not the cause)
        os.dup2(err, 1)
        os.dup2(err, 2)
        if limit is not None:
            resource.setrlimit(resource.RLIMIT_AS, (limit, resource.getrlimit(resource.RLIMIT_AS)[1]))
        tell = (lambda done, total: _send(out, ("tell", (done, total)))) if telling else None
        try:
            value = call(tell)
        except MemoryError:
            os.write(err, b"MemoryError\n")
            code = 3
        except BaseException as e:  # noqa: BLE001  every error goes to the parent, named there
            _send(out, ("raise", _portable(e)))
        else:
            try:
                blob = pickle.dumps(("value", value), protocol=pickle.HIGHEST_PROTOCOL)
            except Exception:  # noqa: BLE001  a lambda, a library object: asked again in the parent
                blob = pickle.dumps(("again", None))
            _frame(out, blob)
    except MemoryError:
        code = 3
    except BaseException:  # noqa: BLE001
        code = 4
    finally:
        os._exit(code)


def _portable(e: BaseException) -> BaseException:
    """`e` if it survives pickling as itself, else an `InputError` with its message."""
    try:
        back = pickle.loads(pickle.dumps(e))
        if type(back) is type(e) and str(back) == str(e) and getattr(back, "__dict__", {}) == getattr(e, "__dict__", {}):
            return e
    except Exception:  # noqa: BLE001
        pass
    return InputError(f"{type(e).__name__}: {e}")


def _send(out: int, message) -> None:
    _frame(out, pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL))


def _frame(out: int, blob: bytes) -> None:
    data = memoryview(_HEADER.pack(len(blob)) + blob)
    while data:
        data = data[os.write(out, data):]


def _serve(fd: int, tell) -> tuple[str, object] | None:
    """Read the child's messages until it closes the pipe: progress is passed on to `tell`; -> its
    answer, or None when it died before giving one."""
    while True:
        head = _read(fd, _HEADER.size)
        if head is None:
            return None
        blob = _read(fd, _HEADER.unpack(head)[0])
        if blob is None:
            return None
        try:
            kind, value = pickle.loads(blob)
        except Exception:  # noqa: BLE001  pickled there, not rebuilt here (a library object): asked again
            return "again", None
        if kind == "tell":
            if tell is not None:
                tell(*value)
            continue
        return kind, value


def _read(fd: int, n: int) -> bytes | None:
    parts, left = [], n
    while left:
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            return None
        parts.append(chunk)
        left -= len(chunk)
    return b"".join(parts)


def _reap(pid: int) -> int:
    """Wait for the child (killed first when this ends abnormally) -> its wait status."""
    try:
        return os.waitpid(pid, 0)[1]
    except BaseException:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
        os.waitpid(pid, 0)
        raise


def _death(status: int, log: str, what: str, library: str, memory: int) -> InputError:
    """Why the child gave no answer, as an `InputError` (exit 2)."""
    code = os.waitstatus_to_exitcode(status)
    tail = " ".join(line.strip() for line in log.strip().splitlines()[-2:])[:300]
    # 3: Python's MemoryError; an allocation that failed in C++ or Rust says so before it aborts;
    # SIGKILL: the kernel's out-of-memory killer (nothing else here sends it)
    out_of_memory = code in (3, -signal.SIGKILL) or any(
        m in log for m in ("memory allocation", "MemoryError", "bad_alloc", "out of memory"))
    if out_of_memory:
        return OutOfMemory(f"the reference ({library}) ran out of its {memory / 2**30:.1f} GB memory budget{what}"
                           + (f" ({tail})" if tail else "")
                           + "; the file cannot be verified against it (the source makes it grow without bound: "
                           "see its normalizer and pre-tokenizer), or --no-verify to write it unverified")
    how = f"was killed by {signal.Signals(-code).name}" if code < 0 else f"exited with status {code}"
    return InputError(f"the reference ({library}) {how}{what}" + (f" ({tail})" if tail else "")
                      + "; the file cannot be verified against it")


def _address_space() -> int:
    """Bytes of address space this process holds now (VmSize), 0 where /proc does not say."""
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("VmSize:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0
