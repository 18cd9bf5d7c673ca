"""Recognition by content (`mtok_export/formats.py`): what each file is, which one a directory reads,
the note and `--input` when there is a choice, clear errors; and the regression check that no input
of the shared corpus or `samples/` changed reader or output bytes.

`MAIN` was computed once with main's code (`PYTHONPATH=/work/main python scripts/source_hashes.py`,
main at 10e491b): for every input main accepted, the file its reader started from and the sha256 of
`write_mtok(lower(read_source(input)))`."""

from __future__ import annotations

import hashlib
import shutil
from dataclasses import replace
from pathlib import Path

import pytest

from mtok_export import formats as F
from mtok_export.errors import InputError
from mtok_export.formats import choose, classify, read_source
from mtok_export.lower import Forms, lower
from mtok_export.mtok import write_mtok
from mtok_export.targets import DEFAULT, TARGETS

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO.parent / "shared/corpus/tokenizers"
GGUF = REPO.parent / "shared/corpus/gguf"
ROOTS = {"corpus": CORPUS, "samples": REPO / "samples"}
pytestmark = pytest.mark.skipif(not CORPUS.is_dir(), reason="shared corpus not present")

# Reader chosen and sha256 of the .mtok written, as main 77043d9 wrote them (before the format
# registry).  Changed since on purpose, by lowering: the two BERT rows (strip_accents as an exact
# NFD-then-drop-Mn table; then clean_text's deletion, before that table, of the controls and
# zero-width characters it would turn into spaces); the chatglm, t5, t5-unigram and sp-test-models rows (canonical pairs that
# can never match left out of their charsmap normalizers); the bare SentencePiece models (mistral
# .model.v1, sp-test-models): control pieces encoded as text, as sentencepiece does (issue 14); every
# Unigram input (chatglm-6b, sp-test-models, t5-small, samples/t5-unigram): scores written as the f64
# HF holds in memory (issue 14); every NFC/NFKC/charsmap row (chatglm-6b, qwen-7b_tiktoken, qwen2.5,
# sp-test-models, t5-small, samples/qwen-bpe and t5-unigram): the code-point rules as the guarded
# code-6 table (issue 27); roberta-base's vocab.json and merges.txt rows (<mask>'s flags from the
# config, as transformers 5 builds them: issue 31) and the t5-small and samples/t5-unigram rows (the
# Metaspace split as Split(/▁/, MergedWithPrevious, invert), which does not crash MNN: issue 34); the
# two mistral .model.v1 rows (mistral_common's generated template embedded, its control pieces split
# out for it: issue 32); falcon-7b (its numeric runs and groups of three ASCII digits as one Split:
# issue 40).
MAIN = {
    "corpus/bert-base-uncased": ("tokenizer.json", "7dda4df0d3b0092fb1b14cf32eab4509b20cb31fc0c4e32152dd748e20dc068d"),
    "corpus/bert-base-uncased/tokenizer.json": ("vocab.txt", "7dda4df0d3b0092fb1b14cf32eab4509b20cb31fc0c4e32152dd748e20dc068d"),
    "corpus/bert-base-uncased/vocab.txt": ("vocab.txt", "7dda4df0d3b0092fb1b14cf32eab4509b20cb31fc0c4e32152dd748e20dc068d"),
    "corpus/chatglm-6b": ("ice_text.model", "3193da9c575ef7d254bcfb08d82f46a64a8b0ef00a27b9f3aa2c2715f01cc4f9"),
    "corpus/chatglm-6b/ice_text.model": ("ice_text.model", "3193da9c575ef7d254bcfb08d82f46a64a8b0ef00a27b9f3aa2c2715f01cc4f9"),
    "corpus/falcon-7b": ("tokenizer.json", "5a6c445b91121a6c4c1c66b747581c468ceb743690752ccb6d7b317f3ecd001e"),
    "corpus/gpt2": ("tokenizer.json", "8758090b3df5e8503dd73ce04308c704df5335a4096af43e8ca1da8e0ba9c8c6"),
    "corpus/gpt2/merges.txt": ("vocab.json", "8758090b3df5e8503dd73ce04308c704df5335a4096af43e8ca1da8e0ba9c8c6"),
    "corpus/gpt2/tokenizer.json": ("vocab.json", "8758090b3df5e8503dd73ce04308c704df5335a4096af43e8ca1da8e0ba9c8c6"),
    "corpus/gpt2/tokenizer_config.json": ("vocab.json", "8758090b3df5e8503dd73ce04308c704df5335a4096af43e8ca1da8e0ba9c8c6"),
    "corpus/gpt2/vocab.json": ("vocab.json", "8758090b3df5e8503dd73ce04308c704df5335a4096af43e8ca1da8e0ba9c8c6"),
    "corpus/llama2-7b-hf": ("tokenizer.json", "0676d61f086b6adf2be96849f4b19a6654f825b21b9ca4de6317867f71e90a47"),
    "corpus/llama2-7b-hf/tokenizer.model": ("tokenizer.model", "d9c36dbfc0da8ed7a82dab3853580a7dba65a70a9cdcb7e52bf9a4234cad4683"),
    "corpus/meta-llama-3-8b-instruct": ("tokenizer.json", "23df5c3a4940fd9358b96143e7bcc629ca863bd1ae64326d214f3ae8f9623452"),
    "corpus/meta-llama-3-8b-instruct/tiktoken.model": ("tiktoken.model", "23df5c3a4940fd9358b96143e7bcc629ca863bd1ae64326d214f3ae8f9623452"),
    "corpus/mistral-7b-v0.1_mistral-common": ("tokenizer.model.v1", "7b65631c39ab31088b5a552ef76b584d9302c91deaeb4d2c64a950a672f0ec08"),
    "corpus/mistral-7b-v0.1_mistral-common/tokenizer.model.v1": ("tokenizer.model.v1", "7b65631c39ab31088b5a552ef76b584d9302c91deaeb4d2c64a950a672f0ec08"),
    "corpus/phi-3-mini-4k-instruct": ("tokenizer.json", "cfb70ba92e039774d60c7dca2e197cc7699a8195acda698fdbd9bee8369d571f"),
    "corpus/qwen-7b_tiktoken": ("qwen.tiktoken", "4c6a49b3839a9a6b1ca4243a93433fa571881cd16077ad07cd0b5f79af188b37"),
    "corpus/qwen-7b_tiktoken/qwen.tiktoken": ("qwen.tiktoken", "4c6a49b3839a9a6b1ca4243a93433fa571881cd16077ad07cd0b5f79af188b37"),
    "corpus/qwen2.5-instruct": ("tokenizer.json", "1cecce63521a551750e623a1d798d12f0020c4b75746c6fdb14764abefe59e91"),
    "corpus/roberta-base": ("tokenizer.json", "08e650158a1c392377c78df43ceb18c897282501f09c9a03cb8dad22d9e332d3"),
    "corpus/roberta-base/merges.txt": ("vocab.json", "09d5858393845412288c19888e70a1deb7599dd1c8502322492482055dc8bb58"),
    "corpus/roberta-base/tokenizer.json": ("vocab.json", "08e650158a1c392377c78df43ceb18c897282501f09c9a03cb8dad22d9e332d3"),
    "corpus/roberta-base/tokenizer_config.json": ("vocab.json", "08e650158a1c392377c78df43ceb18c897282501f09c9a03cb8dad22d9e332d3"),
    "corpus/roberta-base/vocab.json": ("vocab.json", "09d5858393845412288c19888e70a1deb7599dd1c8502322492482055dc8bb58"),
    "corpus/sp-test-models/test_ja_model.model": ("test_ja_model.model", "ba270fcee7ca314512665f9a5ec9a0e7eeff7ef793c96a6778f4deffcec6fef9"),
    "corpus/sp-test-models/test_model.model": ("test_model.model", "a530f5def0821b7fbb3f3d151415838f084252b6712375bb66854c25679c89b8"),
    "corpus/t5-small": ("tokenizer.json", "c8fc2a85d45726fd4bef4a659484dadb8f8a90602ba6db5576480407d91674c7"),
    "corpus/t5-small/spiece.model": ("spiece.model", "2084e1cad958ddfb48e2e3d3e6b2aad8d51608a8a9b348e5098ee3002ef6951d"),
    "corpus/whisper-large-v3": ("tokenizer.json", "2144494a37836eafd89d4f3a9f0fea941374db908692f6f4cc2d358c7bf0307a"),
    "corpus/whisper-large-v3/added_tokens.json": ("vocab.json", "2144494a37836eafd89d4f3a9f0fea941374db908692f6f4cc2d358c7bf0307a"),
    "corpus/whisper-large-v3/merges.txt": ("vocab.json", "2144494a37836eafd89d4f3a9f0fea941374db908692f6f4cc2d358c7bf0307a"),
    "corpus/whisper-large-v3/normalizer.json": ("vocab.json", "2144494a37836eafd89d4f3a9f0fea941374db908692f6f4cc2d358c7bf0307a"),
    "corpus/whisper-large-v3/special_tokens_map.json": ("vocab.json", "2144494a37836eafd89d4f3a9f0fea941374db908692f6f4cc2d358c7bf0307a"),
    "corpus/whisper-large-v3/tokenizer.json": ("vocab.json", "2144494a37836eafd89d4f3a9f0fea941374db908692f6f4cc2d358c7bf0307a"),
    "corpus/whisper-large-v3/tokenizer_config.json": ("vocab.json", "2144494a37836eafd89d4f3a9f0fea941374db908692f6f4cc2d358c7bf0307a"),
    "corpus/whisper-large-v3/vocab.json": ("vocab.json", "2144494a37836eafd89d4f3a9f0fea941374db908692f6f4cc2d358c7bf0307a"),
    "samples/bert-wordpiece": ("tokenizer.json", "ef8d9a68856aac25f42aa719d17ea6a33ea474600007d559174a1d307f672e2f"),
    "samples/bert-wordpiece/tokenizer.json": ("vocab.txt", "ef8d9a68856aac25f42aa719d17ea6a33ea474600007d559174a1d307f672e2f"),
    "samples/bert-wordpiece/tokenizer_config.json": ("vocab.txt", "ef8d9a68856aac25f42aa719d17ea6a33ea474600007d559174a1d307f672e2f"),
    "samples/bert-wordpiece/vocab.txt": ("vocab.txt", "ef8d9a68856aac25f42aa719d17ea6a33ea474600007d559174a1d307f672e2f"),
    "samples/llama-spm": ("tokenizer.json", "d6441b65bb07f796d3fe9842b47976b6872d26af6e11eb92cfdad691e727d49f"),
    "samples/llama-spm/tokenizer.model": ("tokenizer.model", "5a302f6589d015714677f7224cf91992e05fd7c6feea55ca789866838962d60c"),
    "samples/qwen-bpe": ("tokenizer.json", "849d9e99d4b934630df570c62a9d0222b1caa95cabc5f8524739165c73542657"),
    "samples/t5-unigram": ("tokenizer.json", "70c2e291308bd64848fa9c959affddf975971a3192103d46f0788a889a90be9b"),
    "samples/t5-unigram/spiece.model": ("spiece.model", "b3bb9a24176c2d69d3a28b66e2e30fa779831158b88a4249740552e71cf779fe"),
}


def _path(name: str) -> Path:
    prefix, rest = name.split("/", 1)
    return ROOTS[prefix] / rest


@pytest.fixture(scope="module")
def digests():
    """(chosen file) -> sha256 of the written .mtok, computed once per file read."""
    cache: dict[Path, str] = {}

    def digest(path: Path) -> tuple[str, str]:
        file, _, _ = choose(path)
        if file not in cache:
            # every special in the header and the template as read, as main wrote them: header pruning
            # and template lowering are lowering changes, not reader ones (the digests hold the
            # reader regression only)
            # (and the forms main wrote by default: the explicit split, ignore_merges merged pair by pair)
            main_forms = Forms(header_specials="all", regex_form="explicit", ignore_merges_form="merge")
            low = lower(read_source(file), TARGETS[DEFAULT], forms=main_forms)[0]
            low = replace(low, chat=replace(low.chat, text=read_source(file).chat.text))  # not the lowered one
            cache[file] = hashlib.sha256(write_mtok(low)).hexdigest()
        return file.name, cache[file]
    return digest


@pytest.mark.runtime
@pytest.mark.parametrize("name", sorted(MAIN))
def test_no_reader_choice_or_output_byte_changed(name, digests):
    main_first, main_digest = MAIN[name]
    first, digest = digests(_path(name))
    assert digest == main_digest
    if _path(name).is_dir():  # a file given directly is now read itself (main fell back to the folder)
        assert first == main_first


# ------------------------------------------------------------------ classification by content

@pytest.mark.parametrize("rel, expected", [
    ("gpt2/tokenizer.json", "tokenizer.json"), ("gpt2/vocab.json", "vocab.json"), ("gpt2/merges.txt", "merges"),
    ("gpt2/tokenizer_config.json", None), ("whisper-large-v3/added_tokens.json", None),
    ("whisper-large-v3/vocab.json", "vocab.json"), ("bert-base-uncased/vocab.txt", "bert-vocab.txt"),
    ("t5-small/spiece.model", "sentencepiece"), ("chatglm-6b/ice_text.model", "sentencepiece"),
    ("mistral-7b-v0.1_mistral-common/tokenizer.model.v1", "sentencepiece"),
    ("meta-llama-3-8b-instruct/tiktoken.model", "tiktoken"), ("qwen-7b_tiktoken/qwen.tiktoken", "tiktoken"),
    ("qwen-7b_tiktoken/NOTES.md", None),
])
def test_classify_corpus_files(rel, expected):
    fmt = classify(CORPUS / rel)
    assert (fmt.name if fmt else None) == expected


def test_classify_ignores_names(tmp_path):
    """The same bytes under misleading names are still what they are."""
    pairs = {"vocab.joint.spm": CORPUS / "t5-small/spiece.model", "tokenizer.model": CORPUS / "qwen-7b_tiktoken/qwen.tiktoken",
             "20B_tokenizer.json": CORPUS / "gpt2/tokenizer.json", "notes.txt": CORPUS / "bert-base-uncased/vocab.txt",
             "x.bin": GGUF / "ggml-vocab-gpt-2.gguf"}
    for name, src in pairs.items():
        shutil.copy(src, tmp_path / name)
    assert {n: classify(tmp_path / n).name for n in pairs} == {
        "vocab.joint.spm": "sentencepiece", "tokenizer.model": "tiktoken", "20B_tokenizer.json": "tokenizer.json",
        "notes.txt": "bert-vocab.txt", "x.bin": "gguf"}


def test_mtok_and_legacy_headers(tmp_path):
    (tmp_path / "a").write_bytes(b"430 4\n\x00")
    (tmp_path / "b").write_bytes(b"430 2\n3\n")
    (tmp_path / "c").write_bytes(b"430 9\n")
    assert [getattr(classify(tmp_path / n), "name", None) for n in "abc"] == ["mtok", "legacy-txt", None]


# ------------------------------------------------------------------ choosing in a directory

@pytest.mark.runtime
def test_tokenizer_json_under_another_name_is_read(tmp_path):
    shutil.copy(CORPUS / "gpt2/tokenizer.json", tmp_path / "20B_tokenizer.json")
    shutil.copy(CORPUS / "gpt2/tokenizer_config.json", tmp_path / "tokenizer_config.json")
    tok = read_source(tmp_path)
    assert Path(tok.provenance.inputs[0].path).name == "20B_tokenizer.json"
    assert write_mtok(lower(tok, TARGETS[DEFAULT])[0]) == write_mtok(lower(read_source(CORPUS / "gpt2/tokenizer.json"), TARGETS[DEFAULT])[0])


@pytest.mark.runtime
def test_sentencepiece_under_another_name(tmp_path):
    shutil.copy(CORPUS / "t5-small/spiece.model", tmp_path / "vocab.joint.spm")
    tok = read_source(tmp_path)
    assert Path(tok.provenance.inputs[0].path).name == "vocab.joint.spm"
    assert tok.model.vocab == read_source(CORPUS / "t5-small/spiece.model").model.vocab


def test_several_candidates_choice_is_noted_and_deterministic():
    tok = read_source(CORPUS / "sp-test-models")
    assert Path(tok.provenance.inputs[0].path).name == "test_ja_model.model"
    assert tok.meta.notes[0] == ("read test_ja_model.model (sentencepiece); also here: test_model.model "
                                 "(sentencepiece); --input FILE reads another")


def test_sources_win_over_our_own_outputs(tmp_path):
    """A .mtok written beside a rank file must not be re-read as the source."""
    shutil.copy(CORPUS / "qwen-7b_tiktoken/qwen.tiktoken", tmp_path / "qwen.tiktoken")
    (tmp_path / "tokenizer.mtok").write_bytes(b"430 4\n")
    assert choose(tmp_path)[0].name == "qwen.tiktoken"


def test_config_file_reads_its_directory():
    file, fmt, note = choose(CORPUS / "roberta-base/tokenizer_config.json")
    assert (file.name, fmt.name) == ("tokenizer.json", "tokenizer.json")
    assert note.startswith("tokenizer_config.json is no tokenizer file: read tokenizer.json (tokenizer.json); "
                           "also here: vocab.json (vocab.json)")


@pytest.mark.runtime
def test_merges_file_reads_its_pair(tmp_path):
    shutil.copy(CORPUS / "gpt2/vocab.json", tmp_path / "encoder.json")
    shutil.copy(CORPUS / "gpt2/merges.txt", tmp_path / "vocab.bpe")
    a, b = read_source(tmp_path / "vocab.bpe"), read_source(tmp_path)
    assert a.model == b.model == read_source(CORPUS / "gpt2/vocab.json").model


def test_no_candidate_is_an_error(tmp_path):
    (tmp_path / "README.md").write_text("hello", encoding="utf-8")
    with pytest.raises(InputError, match="no tokenizer.json, tekken.json, SentencePiece model, .* found"):
        read_source(tmp_path)
    with pytest.raises(InputError, match="no such file or directory"):
        read_source(tmp_path / "missing")


def test_an_empty_tokenizer_json_is_named_as_empty(tmp_path):
    (tmp_path / "tokenizer.json").write_bytes(b"")
    (tmp_path / "README.md").write_text("hello", encoding="utf-8")
    with pytest.raises(InputError) as e:
        read_source(tmp_path)
    assert str(e.value) == (f"{tmp_path}: tokenizer.json is empty (0 bytes: an interrupted download or copy?), and "
                            "no other tokenizer file is here")


def test_vocab_json_without_merges_is_not_a_candidate(tmp_path):
    shutil.copy(CORPUS / "gpt2/vocab.json", tmp_path / "vocab.json")
    with pytest.raises(InputError, match="found"):
        read_source(tmp_path)
    with pytest.raises(InputError, match="needs a merges file beside it"):
        read_source(tmp_path / "vocab.json")


def test_resolve_input(tmp_path):
    (tmp_path / "a.model").write_bytes(b"x")
    assert F.resolve_input(tmp_path, Path("a.model")) == tmp_path / "a.model"
    assert F.resolve_input(tmp_path, None) == tmp_path
    with pytest.raises(InputError, match="--input nope: no such file"):
        F.resolve_input(tmp_path, Path("nope"))


@pytest.mark.runtime
def test_cli_input_overrides_the_choice(tmp_path, monkeypatch, capsys):
    import sys

    from mtok_export.cli import export_main

    for n in ("test_model.model", "test_ja_model.model"):
        shutil.copy(CORPUS / "sp-test-models" / n, tmp_path / n)
    for args, first in (([], "test_ja_model.model"), (["--input", "test_model.model"], "test_model.model")):
        monkeypatch.setattr(sys, "argv", ["mtok-export", "--path", str(tmp_path), "--no-verify", "--allow-lossy",
                                          "--json", *args])
        with pytest.raises(SystemExit) as info:
            export_main()
        out = capsys.readouterr().out
        assert info.value.code in (0, None)
        import json
        report = json.loads(out)["export"]
        assert Path(report["inputs"][0]["path"]).name == first
        assert report["output"] == str(tmp_path / "tokenizer.mtok")
        assert any(n.startswith("read test_ja_model.model") for n in report["notes"]) == (not args)


def test_unrecognized_file_without_a_source_beside_it(tmp_path):
    (tmp_path / "notes.md").write_text("# hello", encoding="utf-8")
    with pytest.raises(InputError, match=r"notes.md: not a tokenizer file this tool recognizes \(not tokenizer.json, "
                       r"tekken, .*\), and none is beside it; it looks like text starting '# hello'\n  as tiktoken rank file: "):
        read_source(tmp_path / "notes.md")
