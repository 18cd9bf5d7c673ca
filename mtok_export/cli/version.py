"""`--version`: this tool's version, the MNN runtime it verifies with, and the Unicode version the
normalization tables are built from (all three decide what an export writes or how it is checked).
Looked up from package metadata, without importing MNN, so it stays fast."""

from __future__ import annotations

import platform
import unicodedata

from .. import __version__


def version_lines() -> list[str]:
    return [f"mtok-export {__version__}", f"MNN runtime: {mnn_runtime()}",
            f"Unicode {unicodedata.unidata_version} (Python {platform.python_version()})"]


def mnn_runtime() -> str:
    """The MNN package beside this tool, or why there is none (verify can use --runtime-python)."""
    from importlib import metadata

    try:
        dist = metadata.distribution("MNN")
    except metadata.PackageNotFoundError:
        return "not found in this environment (verify needs --runtime-python PY)"
    return f"MNN {dist.version} ({dist.locate_file('')})"
