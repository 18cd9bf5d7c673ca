"""`mtok convert` and `mtok-export --format txt` through the CLI: every direction writes something
the next step reads back, with the IR kept for what each format carries."""

from __future__ import annotations

from pathlib import Path


import pytest

from mtok_export.formats import read_source
from mtok_export.ir.models import vocab_of
from mtok_export.mtok import read_mtok
from tests.support.commands import run_process

SAMPLES = Path(__file__).resolve().parents[2] / "samples"


def run(*args) -> tuple[int, str]:
    """The real entry point (error handling and exit codes included), in a subprocess."""
    r = run_process("mtok", *args)
    return r.returncode, r.stdout + r.stderr


@pytest.mark.runtime
@pytest.mark.parametrize("sample", ["qwen-bpe", "llama-spm", "bert-wordpiece", "t5-unigram"])
def test_mtok_txt_mtok_keeps_what_txt_carries(sample, tmp_path):
    code, out = run("convert", SAMPLES / sample, tmp_path / "a.mtok", "--allow-lossy")
    assert code == 0, out
    code, out = run("convert", tmp_path / "a.mtok", tmp_path / "a.txt", "--to", "txt", "--allow-lossy")
    assert code == 0, out
    code, out = run("convert", tmp_path / "a.txt", tmp_path / "b.mtok", "--allow-lossy")
    assert code == 0, out
    a, _ = read_mtok((tmp_path / "a.mtok").read_bytes())
    b, _ = read_mtok((tmp_path / "b.mtok").read_bytes())
    # the vocabulary, ids and header lists survive both legs; but the .txt holds the Unigram as a
    # SentencePiece BPE without byte fallback, whose unk the second lowering writes as "\u2047" (the
    # unk table maps characters outside the alphabet to it: losses unk-surface)
    va, vb = vocab_of(a.model), vocab_of(b.model)
    if sample == "t5-unigram":
        assert vb.pop("\u2047") == va.pop("<unk>")
    assert va == vb
    # the header list is the lowering's choice (the template's turn mark, `lower.models.header_specials`):
    # a .txt carries no template, so the second lowering keeps at most what the first kept
    assert a.stop_ids == b.stop_ids and set(b.special_ids) <= set(a.special_ids)


@pytest.mark.runtime
def test_mtok_to_hf_loads_and_encodes_like_the_source(tmp_path):
    from tokenizers import Tokenizer

    assert run("convert", SAMPLES / "qwen-bpe", tmp_path / "q.mtok", "--allow-lossy")[0] == 0
    code, out = run("convert", tmp_path / "q.mtok", tmp_path / "hf", "--to", "hf")
    assert code == 0, out
    written = Tokenizer.from_file(str(tmp_path / "hf" / "tokenizer.json"))
    source = Tokenizer.from_file(str(SAMPLES / "qwen-bpe" / "tokenizer.json"))
    for text in ("Hello world", "def f(x):\n\treturn x + 1", "中文 123", "<|im_start|>user\nhi<|im_end|>"):
        assert written.encode(text).ids == source.encode(text).ids, text


def test_convert_refuses_lossy_without_flag_and_writes_nothing(tmp_path):
    code, out = run("convert", SAMPLES / "qwen-bpe", tmp_path / "x.txt", "--to", "txt")
    assert code == 3 and "--allow-lossy" in out
    assert not (tmp_path / "x.txt").exists() and not list(tmp_path.iterdir())


def test_convert_bad_choice_is_usage_error(tmp_path):
    code, out = run("convert", SAMPLES / "qwen-bpe", tmp_path / "x", "--to", "gguf")
    assert code == 2 and "--to 'gguf'" in out


def test_inspect_txt_shows_the_same_view(tmp_path):
    assert run("convert", SAMPLES / "bert-wordpiece", tmp_path / "b.txt", "--to", "txt", "--allow-lossy")[0] == 0
    code, out = run("inspect", tmp_path / "b.txt")
    assert code == 0, out
    for heading in ("header lists", "sections", "components", "model WordPiece", "added tokens"):
        assert heading in out
    assert "type 2 (BERT)" in out
    tok = read_source(tmp_path / "b.txt")
    assert len(tok.model.vocab) == len(read_source(SAMPLES / "bert-wordpiece").model.vocab)


def test_export_format_txt_names_the_type_and_why(tmp_path):
    code, out = run("export", "--path", SAMPLES / "qwen-bpe", "-o", tmp_path, "--format", "txt",
                    "--allow-lossy", "--no-verify")
    assert code == 0, out
    assert (tmp_path / "tokenizer.txt").read_bytes().startswith(b"430 3\n")
    assert "type 3 (HUGGINGFACE)" in out and "byte-level BPE" in out


@pytest.mark.runtime
def test_mtok_to_hf_keeps_the_bos_of_a_gemma_style_template(tmp_path, monkeypatch):
    """A template that renders `{{ bos_token }}` first (Gemma's) over a tokenizer whose post-processor
    adds BOS: the .mtok keeps BOS in the header prefix and an empty bos_token (bos-field-cleared).
    `--to hf` wrote `"bos_token": null`, so transformers' chat ids lost BOS; they must equal the
    source's."""
    import json
    import shutil

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    transformers = pytest.importorskip("transformers")
    from mtok_export.corpus import builtin_chats

    src = tmp_path / "gemma-style"
    shutil.copytree(SAMPLES / "llama-spm", src)
    template = (SAMPLES.parents[1] / "shared/corpus/chat_templates/llama.cpp/google-gemma-2-2b-it.jinja").read_text()
    assert template.startswith("{{ bos_token }}")
    cfg = json.loads((src / "tokenizer_config.json").read_text())
    (src / "tokenizer_config.json").write_text(json.dumps({**cfg, "chat_template": template}))
    code, out = run("convert", src, tmp_path / "g.mtok", "--allow-lossy")
    assert code == 0 and "pass bos-field-cleared" in out, out
    tok, _ = read_mtok((tmp_path / "g.mtok").read_bytes())
    assert tok.chat.bos_token == "" and tok.prefix_ids == (1,)
    code, out = run("convert", tmp_path / "g.mtok", tmp_path / "hf", "--to", "hf")
    assert code == 0, out
    assert json.loads((tmp_path / "hf" / "tokenizer_config.json").read_text())["bos_token"] == "<s>"
    ours = transformers.AutoTokenizer.from_pretrained(str(tmp_path / "hf"))
    theirs = transformers.AutoTokenizer.from_pretrained(str(src))
    def ids(tk, chat):  # transformers 5 returns a BatchEncoding, 4 a list
        x = tk.apply_chat_template(list(chat.messages), tokenize=True, add_generation_prompt=True)
        return list(x["input_ids"] if hasattr(x, "keys") else x)

    compared = 0
    for chat in builtin_chats():
        try:
            want = ids(theirs, chat)
        except Exception:  # noqa: BLE001  the template raises on a system turn: nothing to compare
            continue
        assert want[0] == 1, chat.id  # BOS first (the special-text chat has "<s>" in a message too)
        assert ids(ours, chat) == want, chat.id
        compared += 1
    assert compared >= 3
