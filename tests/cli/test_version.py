"""`--version` (`cli/version.py`): the tool's, the MNN runtime's and the normalization tables'
Unicode version (HF tokenizers', not the running Python's)."""

from __future__ import annotations

from importlib import metadata

from tests.support.commands import run_process


def test_version():
    r = run_process("mtok", "--version")
    assert r.returncode == 0
    lines = r.stdout.splitlines()
    assert lines[0] == f"mtok-export {metadata.version('mtok-export')}"
    assert lines[1].startswith(f"MNN runtime: MNN {metadata.version('MNN')} (")
    # the tables' version (HF tokenizers'), not the running Python's
    assert lines[2] == (f"Unicode 9.0.0 (the normalization tables: HF tokenizers' version, from unicodedataplus "
                        f"{metadata.version('unicodedataplus')})")
