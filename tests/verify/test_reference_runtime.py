"""The runtime reference of an input MNN loads itself (`verify.reference_runtime`): MNN 3.4.1 on a
legacy tokenizer.txt, this environment's MNN on a .mtok, both on the source file as it is; and how
the tool finds MNN 3.4.1 (`verify.mnn341`) without ever installing it.

The expected ids come from independent libraries on the files the legacy/.mtok sources were made
from (HF `tokenizers` on tokenizer.json, `sentencepiece` on tokenizer.model, transformers' chat
rendering), never from our reader of the file under test."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from mtok_export.corpus import builtin_chats
from mtok_export.errors import RuntimeEngineError
from mtok_export.formats import read_source
from mtok_export.targets import build
from mtok_export.verify import mnn341
from mtok_export.verify.reference import ReferenceUnavailable
from mtok_export.verify.reference_runtime import runtime_reference

CORPUS = Path(__file__).resolve().parents[3] / "shared/corpus/tokenizers"
TEXTS = ["Hello world", "The quick brown fox.", "  two  spaces", ""]


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    """name -> a file this tool wrote from a corpus tokenizer (the sources under test)."""
    out = tmp_path_factory.mktemp("sources")
    files = {}
    for name, src, fmt in (("gpt2.txt", "gpt2", "txt"), ("llama2.txt", "llama2-7b-hf", "txt"),
                           ("qwen2.5.mtok", "qwen2.5-instruct", "mtok")):
        path = out / name
        path.write_bytes(build(read_source(CORPUS / src), fmt)[0])
        files[name] = path
    return files


def _hf(name: str):
    from tokenizers import Tokenizer

    return Tokenizer.from_file(str(CORPUS / name / "tokenizer.json"))


@pytest.mark.runtime
def test_legacy_type3_is_run_by_mnn341(written, mnn341_python):
    ref = runtime_reference(written["gpt2.txt"], Path(mnn341_python), TEXTS, [])
    hf = _hf("gpt2")
    want = [hf.encode(t, add_special_tokens=False).ids for t in TEXTS]
    assert ref.raw == want and ref.engine == want  # GPT-2 has no prefix ids
    assert ref.decoded == TEXTS  # the single-id decodes of the ids, joined
    assert ref.chat_text == [] and ref.chat_ids == [] and ref.normalize is None


@pytest.mark.runtime
def test_legacy_prefix_ids_are_what_the_runtime_gives_for_nothing(written, mnn341_python):
    """Type 0 with BOS as its header prefix: engine = [BOS] + ids, raw without it."""
    import sentencepiece as spm

    sp = spm.SentencePieceProcessor(model_file=str(CORPUS / "llama2-7b-hf/tokenizer.model"))
    texts = ["Hello world", "The quick brown fox."]
    ref = runtime_reference(written["llama2.txt"], Path(mnn341_python), texts, [])
    assert ref.raw == [sp.encode(t) for t in texts]
    assert ref.engine == [[sp.bos_id()] + sp.encode(t) for t in texts]
    assert ref.decoded == [" " + t for t in texts]  # 3.4.1 turns each piece's first U+2581 into a space


@pytest.mark.runtime
def test_legacy_file_renders_no_chats(written, mnn341_python):
    chats = list(builtin_chats())[:2]
    ref = runtime_reference(written["gpt2.txt"], Path(mnn341_python), ["a"], chats)
    assert ref.chat_text == [None, None] and ref.chat_ids == [None, None]


@pytest.mark.runtime
def test_mtok_is_run_by_this_environments_mnn(written):
    hf = _hf("qwen2.5-instruct")
    chats = [c for c in builtin_chats() if c.add_generation_prompt and not c.tools][:2]
    ref = runtime_reference(written["qwen2.5.mtok"], None, TEXTS, chats)
    assert ref.raw == [hf.encode(t, add_special_tokens=False).ids for t in TEXTS]
    assert ref.decoded == TEXTS

    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(str(CORPUS / "qwen2.5-instruct"))
    want = [tok.apply_chat_template(list(c.messages), tokenize=False, add_generation_prompt=True) for c in chats]
    assert ref.chat_text == want
    assert ref.chat_ids == [hf.encode(t, add_special_tokens=False).ids for t in want]


@pytest.mark.runtime
def test_legacy_file_on_another_mnn_is_unavailable(written):
    """This environment's MNN is 3.6.1: not the runtime a legacy file is verified against."""
    with pytest.raises(ReferenceUnavailable) as e:
        runtime_reference(written["gpt2.txt"], Path(sys.executable), ["a"], [])
    assert "not the 3.4.1" in e.value.why and "mtok_export.verify.mnn341" in e.value.install


@pytest.mark.runtime
def test_interpreter_without_mnn_is_unavailable(written, tmp_path):
    bare = tmp_path / "python"
    bare.write_text("#!/bin/sh\nexec /usr/bin/env python3 -I -S \"$@\"\n")  # no site-packages: no MNN
    bare.chmod(0o755)
    with pytest.raises(ReferenceUnavailable) as e:
        runtime_reference(written["gpt2.txt"], bare, ["a"], [])
    assert "not importable" in e.value.why and "mtok_export.verify.mnn341" in e.value.install


@pytest.mark.runtime
def test_a_file_the_runtime_cannot_load_is_an_engine_error(tmp_path):
    """The source's own runtime rejecting it is no missing reference (bytes MNN reports cleanly:
    other garbage can make it allocate without bound)."""
    bad = tmp_path / "tokenizer.mtok"
    bad.write_bytes(b"431 4\n0 0 0\n\n" + b"\0" * 16)
    with pytest.raises(RuntimeEngineError, match="could not load(.|\n)*magic number is wrong"):
        runtime_reference(bad, None, ["a"], [])


# ---------------------------------------------------------------- finding MNN 3.4.1


def test_find_names_the_command_that_creates_the_venv(tmp_path, monkeypatch):
    monkeypatch.setenv("MTOK_CACHE_DIR", str(tmp_path / "c d"))
    monkeypatch.delenv(mnn341.ENV, raising=False)
    with pytest.raises(ReferenceUnavailable) as e:
        mnn341.find()
    assert str(tmp_path / "c d" / "venv-mnn341" / "bin" / "python") in e.value.why
    assert e.value.install == f"MTOK_CACHE_DIR='{tmp_path / 'c d'}' {sys.executable} -m mtok_export.verify.mnn341"
    assert not (tmp_path / "c d").exists()  # looking never creates anything


def test_find_takes_the_cache_venv(tmp_path, monkeypatch):
    python = tmp_path / "venv-mnn341" / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.write_text("")
    monkeypatch.setenv("MTOK_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv(mnn341.ENV, raising=False)
    assert mnn341.find() == python


def test_find_takes_the_environment_variable_first(tmp_path, monkeypatch):
    monkeypatch.setenv("MTOK_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv(mnn341.ENV, sys.executable)
    assert mnn341.find() == Path(sys.executable)
    monkeypatch.setenv(mnn341.ENV, str(tmp_path / "nope"))
    with pytest.raises(ReferenceUnavailable) as e:
        mnn341.find()
    assert "no such interpreter" in e.value.why and mnn341.ENV in e.value.install


def test_setup_is_idempotent(mnn341_python):
    """The venv `make setup` made: a second run finds it and installs nothing."""
    if mnn341.ENV in __import__("os").environ:
        pytest.skip(f"${mnn341.ENV} names the interpreter: no cache venv to check")
    venv = Path(mnn341_python).parents[1]
    before = sorted(p.name for p in venv.parent.iterdir())
    assert mnn341.ensure(venv) == venv / "bin" / "python"
    assert sorted(p.name for p in venv.parent.iterdir()) == before


def test_version_of():
    assert mnn341.version_of(Path(sys.executable)) == "3.6.1"
    assert mnn341.version_of(Path("/nonexistent/python")) is None


INSTALLS = ("mnn341.ensure(", '"pip", "install"', '"pip", "download"', "urlretrieve(", "urlopen(")


def installs(text: str) -> list[str]:
    """What in a test file's text installs or downloads (the ways the tests did it before issue 23)."""
    return [call for call in INSTALLS if call in text]


def test_no_test_installs():
    """Issue 23: the environment is the set-up's (Makefile `setup`), never a test's: no file under
    tests/ installs a package or downloads one (except this test, which names the calls)."""
    tests = Path(__file__).resolve().parents[1]
    offenders = {str(p.relative_to(tests)): installs(p.read_text(encoding="utf-8")) for p in tests.rglob("*.py")
                 if p.resolve() != Path(__file__).resolve()}
    assert {name: calls for name, calls in offenders.items() if calls} == {}
    # the check catches the forms the tests used
    assert installs('subprocess.run([sys.executable, "-m", "pip", "install", "-q", requirement])') == ['"pip", "install"']
    assert installs('[sys.executable, "-m", "pip", "download", "-q", "--no-deps"]') == ['"pip", "download"']
    assert installs("python = mnn341.ensure(cache)") == ["mnn341.ensure("]
