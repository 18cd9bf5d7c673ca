"""Chat-template support for MNN targets.

MNN renders the chat template embedded in a ``.mtok`` file (spec section 2.8) with its own
small Jinja engine, whose subset is described in spec section 8 and listed in
:mod:`mtok_export.chat.runtime_subset`. :mod:`mtok_export.chat.lint` checks a template statically
against that subset (:mod:`~mtok_export.chat.source_map` locates AST nodes in the text,
:mod:`~mtok_export.chat.walker` walks the AST, :mod:`~mtok_export.chat.rules` holds one check per
rule), :mod:`mtok_export.chat.lowering` rewrites what has an equivalent inside it (printing
expressions with :mod:`mtok_export.chat.jinja_emit`), and :mod:`mtok_export.verify.chat_parity`
proves the result by rendering conversations with transformers and with the runtime.
"""

from importlib.util import find_spec
from pathlib import Path


def code_files() -> tuple[Path, ...]:
    """What a cached chat-template result depends on besides its inputs (see `cache.key(files=)`): this
    package's sources, and the `__init__.py` of jinja2 and of markupsafe (its escaping), which hold
    their versions (read without importing them)."""
    libs = [find_spec(name) for name in ("jinja2", "markupsafe")]
    return (*sorted(Path(__file__).parent.glob("*.py")), *(Path(s.origin) for s in libs if s is not None and s.origin))
