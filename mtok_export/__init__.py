"""mtok-export: convert LLM tokenizers to MNN's on-device formats, and prove they tokenize the same.

The Python API (see `mtok_export/api.py`): `from mtok_export import export, verify, inspect, convert`.
They are loaded on first use, so `import mtok_export` (and the CLI's start-up) stays cheap."""

import sys
import types

__version__ = "0.1.0"
__all__ = ["__version__", "convert", "export", "inspect", "verify"]

_API = ("convert", "export", "inspect", "verify")


def __getattr__(name):
    if name in _API:
        from . import api  # `import mtok_export` (and the CLI's start-up) loads no reader or runtime

        return getattr(api, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class _Package(types.ModuleType):
    """`export` and `verify` are also the names of a submodule and a subpackage.  Importing a
    submodule binds it as an attribute of its package, which would replace the API function after
    the first `import mtok_export.export`; this keeps the names for the API.  The submodules stay
    importable by their dotted names (`from mtok_export.export import build`)."""

    def __setattr__(self, name, value):
        if name in _API and isinstance(value, types.ModuleType):
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
