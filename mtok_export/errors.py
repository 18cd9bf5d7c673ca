"""The tool's error taxonomy.  Every failure the user can cause is an `MtokError`; the CLI turns
them into `error:` lines and exit codes (DESIGN section 5), anything else is a bug."""

from __future__ import annotations

import signal


class MtokError(Exception):
    """Root of every error the user can cause.  `exit_code` is what the CLI exits with."""

    exit_code = 2
    hint: str | None = None
    next: object = None  # `next_command.NextCommand`: the one command to run next (exit 1 and 3)


class InputError(MtokError):
    """Unreadable, missing or malformed input that is not a binary format problem."""


class NothingFound(InputError):
    """No file of a directory is a source this tool reads.  `considered` lists every file of it as
    data (`formats.Considered.to_json`: its name, size, what it looks like and why each format that
    could have claimed it did not), for --json; the message says the same in lines."""

    def __init__(self, message: str, considered: list[dict]):
        super().__init__(message)
        self.considered = considered


class FormatError(MtokError):
    """A malformed binary file: names the file, the section and the byte offset."""

    def __init__(self, message: str, *, offset: int | None = None, section: str | None = None,
                 path: str | None = None):
        self.message, self.offset, self.section, self.path = message, offset, section, path
        where = []
        if path:
            where.append(str(path))
        if section:
            where.append(f"section {section}")
        if offset is not None:
            where.append(f"at 0x{offset:08x}")
        super().__init__(f"{' '.join(where)}: {message}" if where else message)


class UnsupportedError(MtokError):
    """Valid input that this tool does not understand, e.g. an unknown component `type`."""

    def __init__(self, message: str, *, json_path: str | None = None, path: str | None = None):
        self.json_path, self.path = json_path, path
        prefix = " ".join(x for x in (str(path) if path else None, json_path) if x)
        super().__init__(f"{prefix}: {message}" if prefix else message)


class OutputError(MtokError):
    """The output location is unusable: not writable, not a folder, the disk is full...  Names the
    path and the operating system's reason."""

    def __init__(self, path, reason: str):
        self.path, self.reason = path, reason
        super().__init__(f"{path}: {reason}")


class LossError(MtokError):
    """The acceptance policy refuses a loss the export would ship with (`policy.decide`)."""

    exit_code = 3

    def __init__(self, decisions, result=None, hint: str | None = None):
        """`decisions`: the `policy.Decision` of every loss code; `hint`: how to accept the refused
        ones (`policy.refusal_hint`)."""
        self.decisions = list(decisions)
        self.result = result  # export.ExportResult, when the export got that far
        refused = [d for d in self.decisions if not d.accepted]
        self.losses = [x for d in refused for x in d.losses]
        self.hint = hint
        super().__init__(f"the policy refuses {len(refused)} loss code(s): "
                         + ", ".join(f"{d.code} ({'stale in the accept file' if getattr(d, 'stale', False) else d.severity.value})"
                                     for d in refused))


class IdentityError(MtokError):
    """A file this tool made is not what its source produces now (an input changed since the export,
    or the file was edited): found by re-deriving the file, before any runtime check."""

    exit_code = 1

    def __init__(self, file, source, changed: list[str], first: str):
        self.file, self.source, self.changed, self.first = file, source, list(changed), first
        parts = list(changed) + ([first] if first else [])
        super().__init__(f"{file} is not what {source} produces: " + "; ".join(parts))
        self.hint = ("re-export it (mtok-export --path SOURCE), or verify it against the source it was made from "
                     "with --against")


class VerificationError(MtokError):
    """A mismatch on the runtime that no recorded loss reproduces."""

    exit_code = 1

    def __init__(self, result):
        self.result = result
        report = result.verify
        super().__init__(f"verification failed: {report.unexplained} mismatch(es) on MNN {report.runtime} not "
                         "reproduced by any recorded loss" + (f"; the file was kept as {result.rejected}"
                                                              if result.rejected else ""))


class Interrupted(KeyboardInterrupt):
    """SIGTERM or SIGHUP (Ctrl-C stays a plain KeyboardInterrupt): the work was stopped and its worker
    processes and temporary files removed.  A KeyboardInterrupt, so that it unwinds like Ctrl-C's
    and no `except Exception` on the way swallows it.  Exit 128 + the signal number, as a shell
    reports it."""

    def __init__(self, signum: int):
        self.signum = signum
        self.exit_code = 128 + signum
        super().__init__(stop_line(signum))


def stop_line(signum: int) -> str:
    """The one line the CLI prints when a stop signal ended a command."""
    name = "Ctrl-C" if signum == signal.SIGINT else signal.Signals(signum).name
    return f"interrupted by {name}: stopped, worker processes and temporary files removed"


class RuntimeEngineError(MtokError):
    """The MNN runtime subprocess crashed, hung or could not be started."""

    exit_code = 1
