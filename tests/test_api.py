"""The Python API (`from mtok_export import export, verify, inspect, convert`): typed results, no
printing, exceptions whose `exit_code` is the CLI's, and an `import mtok_export` that loads none of
the heavy libraries."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from mtok_export import convert, export, inspect, verify
from mtok_export.errors import InputError, LossError, OutputError
from tests.support.commands import run_process

REPO = Path(__file__).resolve().parents[1]
SAMPLES = REPO / "samples"


def test_import_is_cheap():
    code = ("import sys, mtok_export; heavy = ('typer', 'rich', 'tokenizers', 'transformers', 'jinja2', 'MNN', "
            "'sentencepiece', 'google'); print(sorted({m.split('.')[0] for m in sys.modules} & set(heavy)))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                       env={**os.environ, "PYTHONPATH": str(REPO)})
    assert r.stdout.strip() == "[]"


def test_names_stay_the_api_after_the_submodules_are_imported():
    import mtok_export.export  # noqa: F401  (binds the submodule as a package attribute, normally)
    import mtok_export.verify.check  # noqa: F401

    assert callable(mtok_export.export) and mtok_export.export.__module__ == "mtok_export.api"
    assert mtok_export.verify.__module__ == "mtok_export.api"
    from mtok_export.export import ExportResult  # the submodule itself is still importable by name
    assert ExportResult.__module__ == "mtok_export.export"


def test_export_and_inspect(tmp_path, capsys):
    result = export(SAMPLES / "bert-wordpiece", tmp_path, allow_lossy=True, verify_on_runtime=False)
    assert result.path == tmp_path / "tokenizer.mtok" and result.size == result.path.stat().st_size
    assert {loss.code for loss in result.lowering.losses}  # every loss has a code
    seen = inspect(result.path)
    assert seen.info["model"]["type"] == "WordPiece"
    assert seen.layout.size == result.size
    assert [s["name"] for s in seen.info["sections"]][:3] == ["normalizer", "pre_tokenizer", "model"]
    assert seen.tokenizer.special_ids == result.lowered.special_ids
    assert seen.info["file"]["manifest"]["matches"] is True  # the manifest written beside it names this file
    assert capsys.readouterr() == ("", "")  # the library prints nothing


def test_lossy_export_raises_loss_error_with_exit_code_3(tmp_path):
    with pytest.raises(LossError) as info:
        export(SAMPLES / "bert-wordpiece", tmp_path, verify_on_runtime=False)
    assert info.value.exit_code == 3 and all(loss.code for loss in info.value.losses)
    assert "accept=[" in info.value.hint and "--accept" not in info.value.hint  # API callers pass arguments
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("kwargs,message", [({"target": "mnn-9"}, "--target 'mnn-9'"),
                                            ({"fmt": "gguf"}, "--format 'gguf'"),
                                            ({"bos": "maybe"}, "--bos 'maybe'"),
                                            ({"header_specials": "some"}, "--header-specials 'some'"),
                                            ({"normalizer_form": "fast"}, "--normalizer-form 'fast'")])
def test_bad_choices_are_input_errors(tmp_path, kwargs, message):
    with pytest.raises(InputError, match=message) as info:
        export(SAMPLES / "bert-wordpiece", tmp_path, **kwargs)
    assert info.value.exit_code == 2


def test_export_takes_the_lowering_choices(tmp_path):
    """The API passes `header_specials` and `normalizer_form` through, as the CLI flags do."""
    r = export(SAMPLES / "qwen-bpe", tmp_path, allow_lossy=True, verify_on_runtime=False, normalizer_form="table",
               header_specials="all")
    assert r.manifest["job"]["normalizer_form"] == "table"
    assert r.manifest["job"]["header_specials"] == "all"
    assert "normalizer-table" in {x.code for x in r.lowering.losses}


def test_convert_refuses_to_overwrite_without_force(tmp_path):
    out = tmp_path / "t.mtok"
    out.write_bytes(b"precious")
    with pytest.raises(OutputError, match="exists; pass --force"):
        convert(SAMPLES / "llama-spm", out, allow_lossy=True)
    assert out.read_bytes() == b"precious"
    r = convert(SAMPLES / "llama-spm", out, allow_lossy=True, force=True)
    assert r.paths == (out,) and out.read_bytes()[:6] == b"430 4\n"


def test_convert_cli_refuses_to_overwrite(tmp_path):
    out = tmp_path / "existing.bin"
    out.write_bytes(b"precious")
    r = run_process("mtok", "convert", SAMPLES / "llama-spm", out, "--allow-lossy")
    assert (r.returncode, r.stderr) == (2, f"error: {out}: exists; pass --force to replace it\n")
    assert out.read_bytes() == b"precious"


@pytest.mark.runtime
def test_export_verifies_then_verify_agrees(tmp_path, capsys):
    pytest.importorskip("MNN")
    result = export(SAMPLES / "bert-wordpiece", tmp_path, allow_lossy=True)
    assert result.verify is not None and result.verify.ok and result.path.is_file()
    checked = verify(result.path, allow_lossy=True)  # the source comes from the manifest
    assert checked.ok and checked.exit_code == 0 and checked.report.unexplained == 0
    assert {c.name for c in checked.report.checks} >= {"engine ids", "raw ids"}
    assert all(c.total > 0 for c in checked.report.checks if c.name in ("engine ids", "raw ids"))
    refused = verify(result.path, SAMPLES / "bert-wordpiece", strict=True)  # strict refuses edge losses too
    assert refused.exit_code == 3 and not refused.ok
    assert capsys.readouterr() == ("", "")
