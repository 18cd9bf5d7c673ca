"""`--version`: this tool's version, the MNN runtime it verifies with, and the Unicode version the
normalization tables are built from (all three decide what an export writes or how it is checked).
Looked up from package metadata, without importing MNN, so it stays fast."""

# function-local imports: a command's modules load when the command runs, so `mtok --help` and every
# other command start without them (tests/acceptance/test_startup_imports.py)

from __future__ import annotations

from .. import __version__
from ..unicode.ucd import VERSION as UNICODE_VERSION


def version_lines() -> list[str]:
    return [f"mtok-export {__version__}", f"MNN runtime: {mnn_runtime()}",
            f"Unicode {UNICODE_VERSION} (the normalization tables: HF tokenizers' version, "
            f"from {_data_package()})"]


def _data_package() -> str:
    """The pinned UCD package, from its metadata (importing it is not needed to say which)."""
    from ..cache import version

    return f"unicodedataplus {version('unicodedataplus')}"


def mnn_runtime() -> str:
    """The MNN package beside this tool, or why there is none (verify can use --runtime-python)."""
    from importlib import metadata

    try:
        dist = metadata.distribution("MNN")
    except metadata.PackageNotFoundError:
        return "not found in this environment (verify needs --runtime-python PY)"
    return f"MNN {dist.version} ({dist.locate_file('')})"
