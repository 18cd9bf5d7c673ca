"""`mtok stats`: the statistics checked against numbers worked out by hand on a tiny tokenizer,
token counts against HF `tokenizers` run directly, the built-in slices, the plot and the errors."""

from __future__ import annotations

import json

import pytest

from mtok_export.compare.stats import SLICES, builtin_samples, percentile

from tests.support.corpus_dirs import CORPUS
from tests.support.installed import import_installed

# A BPE with byte fallback: "ab" merges, "é" (C3 A9) falls back to two byte pieces, "z" (0x7A has
# no byte piece) is unknown.  WhitespaceSplit drops the spaces.  encode() adds <s> in front.
TINY = {
    "version": "1.0", "truncation": None, "padding": None,
    "added_tokens": [{"id": 6, "content": "<s>", "single_word": False, "lstrip": False, "rstrip": False,
                      "normalized": False, "special": True}],
    "normalizer": None,
    "pre_tokenizer": {"type": "WhitespaceSplit"},
    "post_processor": {"type": "TemplateProcessing",
                       "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}],
                       "pair": [{"SpecialToken": {"id": "<s>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
                                {"Sequence": {"id": "B", "type_id": 1}}],
                       "special_tokens": {"<s>": {"id": "<s>", "ids": [6], "tokens": ["<s>"]}}},
    "decoder": {"type": "Sequence", "decoders": [{"type": "ByteFallback"}, {"type": "Fuse"}]},
    "model": {"type": "BPE", "dropout": None, "unk_token": "<unk>", "continuing_subword_prefix": None,
              "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": True, "ignore_merges": False,
              "vocab": {"<unk>": 0, "<0xC3>": 1, "<0xA9>": 2, "a": 3, "b": 4, "ab": 5, "<s>": 6},
              "merges": [["a", "b"]]},
}
# No messages: just the generation prompt "ab" (1 token); one empty user turn: "<s>" + "ab" (2 tokens).
TEMPLATE = "{% for m in messages %}<s>{{ m['content'] }}{% endfor %}{% if add_generation_prompt %}ab{% endif %}"


@pytest.fixture
def tiny(tmp_path):
    d = tmp_path / "tiny"
    d.mkdir()
    (d / "tokenizer.json").write_text(json.dumps(TINY), encoding="utf-8")
    (d / "tokenizer_config.json").write_text(json.dumps({"bos_token": "<s>", "chat_template": TEMPLATE}),
                                             encoding="utf-8")
    corpus = tmp_path / "tiny.jsonl"
    corpus.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in [
        {"slice": "s1", "text": "ab ab"},  # 5 bytes, 5 chars, 2 words -> ab ab: 2 tokens
        {"slice": "s1", "text": "é"},  # 2 bytes, 1 char, 1 word -> <0xC3> <0xA9>: 2 tokens, both fallback
        {"slice": "s2", "text": "ab z b"},  # 6 bytes, 6 chars, 3 words -> ab <unk> b: 3 tokens, 1 unknown
    ]) + "\n", encoding="utf-8")
    return d, corpus


def test_statistics_match_a_hand_computed_case(cli, tiny):  # noqa: F811
    d, corpus = tiny
    code, out, err = cli("mtok", "stats", d, "--corpus", corpus, "--json")
    assert code == 0, err
    (r,) = json.loads(out)["tokenizers"]
    s1, s2 = r["slices"]
    assert (s1["slice"], s1["samples"], s1["bytes"], s1["chars"], s1["words"], s1["tokens"]) == ("s1", 2, 7, 6, 3, 4)
    assert s1["tokens_per_byte"] == pytest.approx(4 / 7)
    assert s1["tokens_per_char"] == pytest.approx(4 / 6)
    assert s1["tokens_per_word"] == pytest.approx(4 / 3)
    # per-sample expansions 2/5 and 2/2
    assert s1["expansion_mean"] == pytest.approx(0.7)
    assert s1["expansion_p50"] == pytest.approx(0.4)  # nearest rank: ceil(0.5 * 2) = 1st
    assert s1["expansion_p95"] == pytest.approx(1.0) and s1["expansion_p99"] == pytest.approx(1.0)
    assert (s1["byte_fallback_tokens"], s1["byte_fallback_rate"], s1["unknown_tokens"]) == (2, 0.5, 0)
    assert (s2["slice"], s2["bytes"], s2["words"], s2["tokens"], s2["unknown_tokens"]) == ("s2", 6, 3, 3, 1)
    assert s2["unknown_rate"] == pytest.approx(1 / 3) and s2["byte_fallback_rate"] == 0
    t = r["total"]
    assert (t["bytes"], t["tokens"], t["byte_fallback_tokens"], t["unknown_tokens"]) == (13, 7, 2, 1)
    # expansions sorted: 0.4, 0.5, 1.0
    assert t["expansion_mean"] == pytest.approx(1.9 / 3)
    assert t["expansion_p50"] == pytest.approx(0.5)  # ceil(1.5) = 2nd
    assert t["expansion_p95"] == pytest.approx(1.0)  # ceil(2.85) = 3rd
    assert (r["bos_eos_tokens"], r["chat_empty_tokens"], r["chat_user_turn_tokens"]) == (1, 1, 2)


def test_percentile_nearest_rank():
    values = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0]
    assert [percentile(values, p) for p in (50, 95, 99, 100)] == [5.0, 10.0, 10.0, 10.0]
    assert percentile([], 50) == 0.0


def test_text_table_side_by_side_with_ratios(cli, tiny):  # noqa: F811
    d, corpus = tiny
    code, out, _ = cli("mtok", "stats", d, d, "--corpus", corpus)
    assert code == 0
    row = next(line for line in out.splitlines() if line.split()[:1] == ["s1"])
    assert row.split()[2:] == ["0.571", "0.571", "×1.00"]  # 4/7 for both, the second as a ratio to the first
    assert "tiny#1" in out and "tiny#2" in out


def test_builtin_slices():
    samples = builtin_samples()
    by_slice: dict[str, list[str]] = {}
    for s in samples:
        by_slice.setdefault(s.slice, []).append(s.text)
    assert list(by_slice) == list(SLICES)
    assert sum(1 for k in by_slice if k.startswith("prose-")) >= 12
    for name, texts in by_slice.items():
        assert len(texts) >= 4, name
        assert sum(len(t.encode()) for t in texts) >= 900, name
        assert all(t and t == t.strip("\n") and "~~~" not in t for t in texts), name


@pytest.mark.runtime
def test_token_counts_agree_with_tokenizers_directly(cli):  # noqa: F811
    from tokenizers import Tokenizer

    names = ("qwen2.5-instruct", "llama2-7b-hf")
    code, out, err = cli("mtok", "stats", *(CORPUS / n for n in names), "--json")
    assert code == 0, err
    results = json.loads(out)["tokenizers"]
    samples = builtin_samples()
    for name, r in zip(names, results):
        hf = Tokenizer.from_file(str(CORPUS / name / "tokenizer.json"))
        for s in r["slices"]:
            texts = [x.text for x in samples if x.slice == s["slice"]]
            assert s["tokens"] == sum(len(e.ids) for e in hf.encode_batch(texts, add_special_tokens=False))
        # byte-level BPE never falls back; Llama-2 (byte_fallback) does on scripts it lacks
        rare = next(s for s in r["slices"] if s["slice"] == "rare-scripts")
        assert (rare["byte_fallback_tokens"] > 0) == (name == "llama2-7b-hf")
    assert results[1]["bos_eos_tokens"] == 1 and results[0]["bos_eos_tokens"] == 0  # Llama-2 adds <s>


@pytest.mark.parametrize("suffix, magic", [(".png", b"\x89PNG\r\n\x1a\n"), (".svg", b"<?xml")])
def test_plot(cli, tiny, tmp_path, suffix, magic):  # noqa: F811
    import_installed("matplotlib")
    d, corpus = tiny
    path = tmp_path / f"stats{suffix}"
    code, out, err = cli("mtok", "stats", d, "--corpus", corpus, "--plot", path)
    assert code == 0, err
    assert path.read_bytes().startswith(magic) and f"wrote {path}" in out


# ---------------------------------------------------------------- errors: one line, exit 2

@pytest.mark.parametrize("lines, message", [
    (['{"text": "a"}'], ':1: expected an object with a string "text" and a non-empty string "slice"'),
    (['{"text": "a", "slice": "x"}', "{oops"], ":2: not valid JSON"),
    ([""], "corpus file contains no samples"),
])
def test_bad_corpus(cli, tiny, tmp_path, lines, message):  # noqa: F811
    d, _ = tiny
    corpus = tmp_path / "bad.jsonl"
    corpus.write_text("\n".join(lines), encoding="utf-8")
    code, out, err = cli("mtok", "stats", d, "--corpus", corpus)
    assert code == 2 and out == "" and err.startswith("error:") and message in err


@pytest.mark.parametrize("args, message", [
    (["--plot", "chart.pdf"], "--plot chart.pdf: the file name must end in .png or .svg"),
    (["--metric", "speed"], "--metric 'speed': choose one of"),
])
def test_bad_options(cli, tiny, args, message):  # noqa: F811
    d, _ = tiny
    code, out, err = cli("mtok", "stats", d, *args)
    assert code == 2 and out == "" and message in err and "Traceback" not in err


def test_missing_source(cli, tmp_path):  # noqa: F811
    code, _, err = cli("mtok", "stats", tmp_path / "nope")
    assert code == 2 and err.startswith("error:") and "nope: no such file or directory" in err
