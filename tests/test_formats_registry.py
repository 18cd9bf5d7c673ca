"""The format registry as one declaration (`mtok_export/formats.py`, issue 33): each `Format` entry
holds its priority, its reader options, its reference object and a content check that sees the
folder; the "nothing found" message is made from the entries; `.mtok` and `tokenizer.txt` are told
apart by their header line, whatever their names."""

from __future__ import annotations

import dataclasses
import inspect
import shutil
from pathlib import Path

import pytest

from mtok_export.job_options import ReadOptions
from mtok_export import formats as F
from mtok_export.errors import InputError
from mtok_export.readers.formats.gguf import GGUF
from mtok_export.readers.formats.mnn import LEGACY, MTOK
from mtok_export.readers.formats.remote_code import REMOTE_CODE
from mtok_export.readers.formats.tiktoken import TIKTOKEN
from mtok_export.readers.formats.vocab_json import MERGES, VOCAB_JSON, is_vocab_json
from mtok_export.verify.references import Chosen, runner

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO.parent / "shared/corpus/tokenizers"
pytestmark = pytest.mark.skipif(not CORPUS.is_dir(), reason="shared corpus not present")


def test_every_readable_entry_holds_a_reference_that_runs():
    for fmt in F.FORMATS:
        if fmt.read is not None:
            assert isinstance(fmt.reference, F.Reference), fmt.name
            run = runner(fmt.reference)  # a path that resolves, not a name that may be misspelled
            assert callable(run) and inspect.signature(run).return_annotation in (Chosen, "Chosen"), fmt.name
    with pytest.raises(AttributeError):  # the mutant it must catch
        runner(dataclasses.replace(GGUF.reference, runner="mtok_export.verify.references:choose_ggfu"))


def test_the_registry_collects_every_entry_module_and_orders_the_checks_by_priority():
    """Each module of `readers.formats` declares its entries; the content checks are asked by priority,
    the companions last (rank lines are also "two words per line": tiktoken before merges)."""
    import pkgutil

    from mtok_export.readers import formats as entries

    modules = [m.name for m in pkgutil.iter_modules(entries.__path__)]
    assert len(modules) >= 10 and len(F.FORMATS) == len(F.BY_NAME) >= 13
    ordered = [f.priority for f in F.FORMATS if f.priority is not None]
    assert ordered == sorted(ordered) and [f.name for f in F.FORMATS[-2:]] == ["merges", "remote-code"]
    assert F.FORMATS.index(TIKTOKEN) < F.FORMATS.index(MERGES) and F.FORMATS.index(LEGACY) < F.FORMATS.index(MERGES)


def test_priorities_are_a_total_order_and_outputs_come_last():
    chosen = [f for f in F.FORMATS if f.priority is not None]
    assert len({f.priority for f in chosen}) == len(chosen)
    assert sorted(chosen, key=lambda f: f.priority)[-2:] == [LEGACY, MTOK]
    assert MERGES.priority is None and REMOTE_CODE.priority is None  # never chosen themselves


def test_every_reader_option_has_an_owner():
    """Each `ReadOptions` field but chat_template (every reader's) is declared by the formats it applies to."""
    owned = {o for f in F.FORMATS for o in f.options}
    assert owned == {f.name for f in dataclasses.fields(ReadOptions)} - {"chat_template"}
    assert TIKTOKEN.options == ("pattern", "special") and VOCAB_JSON.options == ("family",)


def test_a_reader_is_told_only_its_own_options(tmp_path, monkeypatch):
    seen = []
    gguf = dataclasses.replace(GGUF, read=lambda p, o, folder: seen.append(o) or pytest.skip("told"))
    monkeypatch.setattr(F, "FORMATS", tuple(gguf if f is GGUF else f for f in F.FORMATS))
    (tmp_path / "m.gguf").write_bytes(b"GGUF" + bytes(60))
    with pytest.raises(pytest.skip.Exception):
        F.read_source(tmp_path / "m.gguf", ReadOptions(pattern="x", special=["<s>"], family="gpt2"))
    assert seen == [ReadOptions()]


def test_the_nothing_found_message_is_made_from_the_entries(tmp_path):
    (tmp_path / "README.md").write_text("hello", encoding="utf-8")
    with pytest.raises(InputError) as e:
        F.read_source(tmp_path)
    labels = [f.label for f in sorted(F.FORMATS, key=lambda f: f.priority or 0) if f.priority is not None]
    assert str(e.value).splitlines()[0] == (f"{tmp_path}: no {', '.join(labels[:-1])} or {labels[-1]} found (files "
                                            "are recognized by content); 1 file considered:")
    assert F.listed().startswith("tokenizer.json, tekken.json, SentencePiece model, ")  # the order read


def test_a_content_check_sees_the_files_beside(tmp_path, monkeypatch):
    """A made-up format told apart only by its neighbours: a vocabulary JSON with no merges file beside
    it.  The check asks the folder; the folder classifies each file once, and a check asking of the
    file being classified sees nothing (no endless recursion)."""
    asked = []

    def lone_vocab(head, path, folder):
        if not is_vocab_json(head, path, folder):
            return False
        asked.append(path.name)
        return folder.of(MERGES) is None

    lone = F.Format("lone-vocab", lone_vocab, None)
    monkeypatch.setattr(F, "FORMATS", (lone, *F.FORMATS))
    shutil.copy(CORPUS / "gpt2/vocab.json", tmp_path / "vocab.json")
    assert F.classify(tmp_path / "vocab.json") is lone
    shutil.copy(CORPUS / "gpt2/merges.txt", tmp_path / "merges.txt")
    assert F.classify(tmp_path / "vocab.json") is VOCAB_JSON
    shutil.copy(CORPUS / "gpt2/vocab.json", tmp_path / "encoder.json")
    folder = F.Folder(tmp_path)
    assert [(p.name, f) for p, f in folder.files()] == [("encoder.json", VOCAB_JSON), ("merges.txt", MERGES),
                                                        ("vocab.json", VOCAB_JSON)]
    asked.clear()
    folder.files()
    assert asked == []  # classified once


def test_a_partner_is_needed_beside(tmp_path):
    shutil.copy(CORPUS / "gpt2/vocab.json", tmp_path / "vocab.json")
    assert F.candidates(tmp_path) == []
    shutil.copy(CORPUS / "gpt2/merges.txt", tmp_path / "merges.txt")
    assert F.candidates(tmp_path) == [(tmp_path / "vocab.json", VOCAB_JSON)]


@pytest.mark.parametrize("header, fmt", [(b"430 4\n", MTOK), (b"430 4\r\n", MTOK), (b"430 4 \n", MTOK),
                                         (b"430 0\n", LEGACY), (b"430 3\r\n", LEGACY), (b"430 5\n", None),
                                         (b"431 4\n", None), (b"430 4", None), (b"430\n", None)])
def test_mnn_files_are_told_apart_by_their_header_line(tmp_path, header, fmt):
    """One rule for both the classifier and the reader (`mtok.header.file_type`), whatever the name."""
    from mtok_export.mtok.header import file_type

    for name in ("tokenizer.mtok", "tokenizer.txt", "x.bin"):
        (tmp_path / name).write_bytes(header + b"0 0 0\n\n")
        assert F.classify(tmp_path / name) is fmt
    assert (file_type(header) is not None) == (fmt is not None)


def test_the_path_help_names_the_entries():
    from mtok_export.cli import cmd_export
    from mtok_export.cli.registry_help import filled

    path = inspect.signature(cmd_export.export, eval_str=True).parameters["path"]
    help_text = path.annotation.__metadata__[0].help
    assert "{formats}" in help_text and F.listed() in filled(help_text)


def _unexplained(formats) -> list[str]:
    """Formats a directory is searched for (or companions) that the "nothing found" error would
    leave out: no `why_not`, or neither `kinds` nor `names` (never asked)."""
    return [f.name for f in formats if (f.label or f.partner is not None or f is MERGES)
            and (f.why_not is None or not (f.kinds or f.names))]


def test_every_listed_format_says_why_a_file_is_not_it():
    assert _unexplained(F.FORMATS) == []
    mute = dataclasses.replace(GGUF, why_not=None)  # the mutants it must catch
    unasked = dataclasses.replace(GGUF, kinds=())
    assert _unexplained((mute, unasked, TIKTOKEN)) == ["gguf", "gguf"]
