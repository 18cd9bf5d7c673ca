"""The tool's error taxonomy.  Every failure the user can cause is an `MtokError`; the CLI turns
them into `error:` lines and exit codes (DESIGN section 5), anything else is a bug."""

from __future__ import annotations


class MtokError(Exception):
    """Root of every error the user can cause.  `exit_code` is what the CLI exits with."""

    exit_code = 2
    hint: str | None = None


class InputError(MtokError):
    """Unreadable, missing or malformed input that is not a binary format problem."""


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


class LossError(MtokError):
    """The acceptance policy refuses a loss the export would ship with (`policy.decide`)."""

    exit_code = 3

    def __init__(self, decisions, result=None):
        """`decisions`: `policy.Decision`s, or plain losses (a writer asked for no loss at all)."""
        from .policy import Policy, decide, refusal_hint

        decisions = list(decisions)
        if decisions and not hasattr(decisions[0], "accepted"):
            decisions = decide(decisions, Policy(strict=True))
        self.decisions = decisions
        self.result = result  # export.ExportResult, when the export got that far
        refused = [d for d in self.decisions if not d.accepted]
        self.losses = [x for d in refused for x in d.losses]
        self.hint = refusal_hint(self.decisions)
        super().__init__(f"the policy refuses {len(refused)} loss code(s) that reach beyond edge inputs: "
                         + ", ".join(f"{d.code} ({d.severity.value})" for d in refused))


class VerificationError(MtokError):
    """A mismatch on the runtime that no recorded loss reproduces."""

    exit_code = 1

    def __init__(self, result):
        self.result = result
        report = result.verify
        super().__init__(f"verification failed: {report.unexplained} mismatch(es) on MNN {report.runtime} not "
                         "reproduced by any recorded loss" + (f"; the file was kept as {result.rejected}"
                                                              if result.rejected else ""))


class RuntimeEngineError(MtokError):
    """The MNN runtime subprocess crashed, hung or could not be started."""

    exit_code = 1
