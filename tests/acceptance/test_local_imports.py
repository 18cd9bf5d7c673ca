"""Every import inside a function of the package says why it is not at the top of its module (issue
42): a comment on its line or right above it, or the module's `# function-local imports: why` header
(`tests/support/local_imports.py`).  The lister is shown to tell a reasonless import from a reasoned
one on made-up module texts."""

from __future__ import annotations

from pathlib import Path

from tests.support import local_imports as LI

HERE = Path("made_up.py")


def _reasons(text: str) -> dict[str, str]:
    """What each function-local import of `text` imports -> its reason ("" for none)."""
    return {x.names: x.reason for x in LI.local_imports(HERE, text)}


def test_every_function_local_import_states_its_reason():
    found = LI.all_local_imports()
    assert len(found) > 100 and any(x.path.name == "cmd_export.py" for x in found)  # the lister sees the package
    assert [f"{x.path.relative_to(LI.PACKAGE.parent)}:{x.line}: {x.names}" for x in found if not x.reason] == []


def test_a_reasonless_local_import_is_reported():
    text = "import os\n\n\ndef f():\n    import json\n    return json, os\n"
    assert LI.local_imports(HERE, text) == [LI.LocalImport(HERE, 5, "import json", "")]  # the top one is not listed
    # a comment above a statement that is not an import, or a noqa/type: ignore, is no reason
    assert _reasons("def f():\n    # why\n    x = 1\n    import json\n") == {"import json": ""}
    assert _reasons("def f():\n    import json  # noqa: F401\n    import re  # type: ignore\n") == \
        {"import json": "", "import re": ""}
    # an inline comment speaks for its own line only
    assert _reasons("def f():\n    import json  # why\n    import re\n") == {"import json": "why", "import re": ""}
    # methods, async functions and nested functions count (a nested one once)
    text = "class C:\n    def m(self):\n        async def g():\n            import json\n"
    assert LI.local_imports(HERE, text) == [LI.LocalImport(HERE, 4, "import json", "")]
    # a module-level comment that is not the header covers nothing
    assert _reasons("# functions import locally: why\n\ndef f():\n    import json\n") == {"import json": ""}


def test_a_comment_or_the_header_is_a_reason():
    assert _reasons("def f():\n    import json  # why\n") == {"import json": "why"}
    assert _reasons("def f():\n    # why\n    # and more\n    from a import b\n") == {"from a import b": "why and more"}
    # one comment covers the run of imports under it
    assert _reasons("def f():\n    # why\n    from a import b\n    from a.c import d\n") == \
        {"from a import b": "why", "from a.c import d": "why"}
    header = ("\"\"\"Doc.\"\"\"\n\n# function-local imports: why\n# goes on\n\nimport os\n\n# another comment\n"
              "def f():\n    import json\n\n\ndef g():\n    import re  # its own\n")
    assert _reasons(header) == {"import json": "why goes on", "import re": "its own"}


def test_kinds_sort_reasons_by_their_words():
    assert LI.kind("") == "(no reason)"
    assert LI.kind("sentencepiece: an optional library, only for a .model file") == "an optional library"
    assert LI.kind("POSIX only") == "a module one platform or build lacks"
    assert LI.kind("jinja2: only when not cached") == "start-up: loaded only where it is used"
    assert LI.kind("because") == "other"
