"""Regression tests for the fuzz defects of issue 13: each malformed input is a clean `MtokError`
(exit 2) naming the file and the JSON path or byte offset, never a traceback, and never a file
that our own strict reader (or MNN) would read differently.

Each case starts from a real sample directory and changes one value, as the fuzzer did."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from mtok_export.errors import MtokError
from mtok_export.formats import read_source
from mtok_export.targets import build

SAMPLES = Path(__file__).resolve().parents[2] / "samples"


def sample(tmp_path: Path, name: str) -> Path:
    d = tmp_path / name
    shutil.copytree(SAMPLES / name, d)
    return d


def edit_json(path: Path, change):
    data = json.loads(path.read_text(encoding="utf-8"))
    change(data)
    path.write_text(json.dumps(data), encoding="utf-8")


def refused(path: Path, *must_contain: str) -> str:
    with pytest.raises(MtokError) as info:
        tok = read_source(path)
        build(tok)
    msg = str(info.value)
    assert info.value.exit_code == 2, msg
    for part in must_contain:
        assert part in msg, msg
    return msg


# ---------------------------------------------------------------- values of the wrong type

def test_bool_as_added_token_id(tmp_path):
    # Was exit 0 with the header "103 0 True 100 101 101", which MNN read as [PAD] for [CLS].
    d = sample(tmp_path, "bert-wordpiece")
    edit_json(d / "tokenizer.json", lambda j: j["added_tokens"][3].update(id=True))
    refused(d, "tokenizer.json", "$.added_tokens[3]", "integer id")


def test_empty_unigram_vocab(tmp_path):
    # Was exit 0 with a file our reader rejects ("unk_id 2 is outside the vocab of 0").
    d = sample(tmp_path, "t5-unigram")
    edit_json(d / "tokenizer.json", lambda j: j["model"].update(vocab=[]))
    refused(d, "$.model.unk_id", "outside the vocab of 0")


def test_dict_as_post_processor_special_id(tmp_path):
    d = sample(tmp_path, "bert-wordpiece")
    edit_json(d / "tokenizer.json", lambda j: j["post_processor"]["special_tokens"]["[CLS]"].update(id={"a": 1}))
    refused(d, "$.post_processor.special_tokens['[CLS]']")


def test_template_single_not_a_list(tmp_path):
    d = sample(tmp_path, "bert-wordpiece")
    edit_json(d / "tokenizer.json", lambda j: j["post_processor"].update(single=-1))
    refused(d, "$.post_processor.single", "must be a list")


def test_bool_as_bert_processing_id(tmp_path):
    d = sample(tmp_path, "bert-wordpiece")
    edit_json(d / "tokenizer.json",
              lambda j: j.update(post_processor={"type": "BertProcessing", "sep": ["[SEP]", True],
                                                 "cls": ["[CLS]", 101]}))
    refused(d, "$.post_processor.sep", "[token, id] pair")


def test_number_as_tokenizer_class(tmp_path):
    d = sample(tmp_path, "llama-spm")
    edit_json(d / "tokenizer_config.json", lambda j: j.update(tokenizer_class=1))
    refused(d, "tokenizer_config.json", "$.tokenizer_class", "must be str")


def test_superscript_digit_as_added_tokens_decoder_key(tmp_path):
    # "²".isdigit() is true but int("²") fails.
    d = sample(tmp_path, "qwen-bpe")
    edit_json(d / "tokenizer_config.json", lambda j: j["added_tokens_decoder"].update({"²": {"content": "x"}}))
    refused(d, "$.added_tokens_decoder['²']", "not a decimal token id")


# ---------------------------------------------------------------- values out of range

def test_lone_surrogate_in_special_token(tmp_path):
    d = sample(tmp_path, "qwen-bpe")
    p = d / "tokenizer.json"
    text = p.read_text(encoding="utf-8")
    assert '"<|im_end|>"' in text
    p.write_text(text.replace('"<|im_end|>"', '"<|im_end\\ud800|>"', 1), encoding="utf-8")
    refused(d, "tokenizer.json", "$.added_tokens[", ".content", "lone surrogate U+D800")


@pytest.mark.parametrize("score", ["1e400", "-1e400", "NaN", "Infinity", "1" + "0" * 400])
def test_unigram_score_out_of_range(tmp_path, score):
    d = sample(tmp_path, "t5-unigram")
    p = d / "tokenizer.json"
    data = json.loads(p.read_text(encoding="utf-8"))
    data["model"]["vocab"][5][1] = 12345.5
    p.write_text(json.dumps(data).replace("12345.5", score, 1), encoding="utf-8")
    msg = refused(d, "tokenizer.json")
    assert "$.model.vocab[5][1]" in msg or "is not a JSON number" in msg, msg


def test_json_nested_1000_deep(tmp_path):
    d = sample(tmp_path, "qwen-bpe")
    p = d / "tokenizer.json"
    text = p.read_text(encoding="utf-8").rstrip()
    p.write_text(text[:-1] + ', "extra": ' + "[" * 1000 + "]" * 1000 + "}", encoding="utf-8")
    refused(d, "tokenizer.json", "nested too deeply")


def test_json_nested_100_deep_in_a_component(tmp_path):
    # Below the json module's limit, above ours: the path of the first too-deep level is named.
    d = sample(tmp_path, "qwen-bpe")
    nested = {"type": "Sequence", "normalizers": []}
    for _ in range(100):
        nested = {"type": "Sequence", "normalizers": [nested]}
    edit_json(d / "tokenizer.json", lambda j: j.update(normalizer=nested))
    refused(d, "$.normalizer.normalizers[0]", "nested deeper than 64 levels")


def test_chat_template_nested_5000_parentheses(tmp_path):
    d = sample(tmp_path, "qwen-bpe")
    edit_json(d / "tokenizer_config.json",
              lambda j: j.update(chat_template="{{ " + "(" * 5000 + "1" + ")" * 5000 + " }}"))
    refused(d, "tokenizer_config.json", "nests 5000 levels deep")


def test_chat_template_depth_counts_blocks_and_brackets():
    from mtok_export.chat.nesting import template_depth

    assert template_depth("plain text (with parentheses)") == 0
    assert template_depth("{{ ((1)) }}") == 2
    assert template_depth("{% if a %}{%- for x in [b] %}{{ x }}{% endfor %}{% endif %}") == 3
    assert template_depth("{% if a %}") == 1  # unclosed: the parser reports it, not this


# ---------------------------------------------------------------- binary inputs

def test_sentencepiece_piece_not_utf8(tmp_path):
    # protobuf hands back bytes for such a piece; sorting bytes with str was a TypeError.
    src = (SAMPLES / "llama-spm/tokenizer.model").read_bytes()
    at = src.index("▁in".encode())
    p = tmp_path / "tokenizer.model"
    p.write_bytes(src[:at] + b"\xff" + src[at + 1:])
    refused(p, "tokenizer.model", "is not valid UTF-8")


def test_lone_surrogate_in_special_tokens_given_from_python(tmp_path):
    # Found by tests/support/fuzzing.py: `special=` from the API (or --special) skips the JSON loader.
    from mtok_export.readers.tiktoken import read_tiktoken

    from tests.support.fuzzing import tiktoken_seed

    p = tmp_path / "ranks.tiktoken"
    p.write_bytes(tiktoken_seed())
    with pytest.raises(MtokError, match=r"lone surrogate U\+D800") as info:
        read_tiktoken(p, pattern=r"\w+", special={"\ud800": 264})
    assert info.value.exit_code == 2


@pytest.mark.parametrize("value, strings, clean", [
    ({"model": {"vocab": {"a": 0, "b": 1}, "merges": [["a", "b"]]}}, True, True),
    ({"merges": [["a", "b"], ["a", 1.5]]}, True, True),
    ({"merges": [["a", "b"], ["a", float("inf")]]}, False, False),  # a non-finite float one level down
    ({"merges": [["a", "b"], ["a", "\ud800"]]}, True, False),  # a lone surrogate one level down
    ({"merges": [["a", "b"], ["a", "\ud800"]]}, False, True),  # strings not asked for
    ({"vocab": {"a": 0, "b": float("nan")}}, False, False),
    ({"vocab": {"\udfff": 0}}, True, False),
])
def test_json_value_checks_whole_levels_exactly(value, strings, clean):
    """The C-level fast path over plain levels (ids, merge pairs) misses nothing the per-value walk finds."""
    from mtok_export.json_value import _is_clean

    assert _is_clean(value, strings) is clean


def test_json_depth_limit_holds_for_lists_of_lists():
    from mtok_export.json_value import MAX_DEPTH, _is_clean

    def nest(n):
        v = ["x"]
        for _ in range(n):
            v = [v, ["y"]]
        return v
    assert _is_clean(nest(MAX_DEPTH - 2), True)
    assert not _is_clean(nest(MAX_DEPTH + 1), True)


# ---------------------------------------------------------------- issue 25: null members, duplicate keys,
# regexes the reference cannot compile, damaged cache entries

@pytest.mark.parametrize("family, key, member", [
    ("normalizer", "normalizers", {"type": "NFC"}),
    ("pre_tokenizer", "pretokenizers", {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True,
                                        "use_regex": True}),
    ("decoder", "decoders", {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True,
                             "use_regex": True}),
    ("post_processor", "processors", {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": False,
                                      "use_regex": True}),
])
def test_null_sequence_member(tmp_path, family, key, member):
    # Was an AttributeError (decoder, normalizer) or accepted silently (pre_tokenizer, post_processor).
    d = sample(tmp_path, "qwen-bpe")
    edit_json(d / "tokenizer.json", lambda j: j.update({family: {"type": "Sequence", key: [member, None]}}))
    with pytest.raises(Exception, match="did not match any variant|missing field"):  # the reference refuses it too
        import tokenizers
        tokenizers.Tokenizer.from_str((d / "tokenizer.json").read_text(encoding="utf-8"))
    refused(d, "tokenizer.json", f"$.{family}.{key}[1]", f"a {family} Sequence member must be an object, got null")


def test_null_top_level_component_stays_accepted(tmp_path):
    d = sample(tmp_path, "qwen-bpe")
    edit_json(d / "tokenizer.json", lambda j: j.update(normalizer=None))
    assert read_source(d).normalizer is None


def _with_text(d: Path, change) -> Path:
    p = d / "tokenizer.json"
    p.write_text(change(p.read_text(encoding="utf-8")), encoding="utf-8")
    return d


def test_duplicate_model_key(tmp_path):
    # Was exit 0: the second, empty model won and MNN encoded every text to [].
    d = _with_text(sample(tmp_path, "qwen-bpe"),
                   lambda t: t.rstrip()[:-1] + ', "model": {"type": "BPE", "vocab": {}, "merges": []}}')
    refused(d, "tokenizer.json", "$.model: duplicate key 'model'")


def test_duplicate_key_deep_inside(tmp_path):
    d = _with_text(sample(tmp_path, "qwen-bpe"), lambda t: t.replace('"vocab": {', '"vocab": {"a": 5, "a": 6, ', 1))
    refused(d, "tokenizer.json", "$.model.vocab.a: duplicate key 'a'")


def test_duplicate_key_in_tokenizer_config(tmp_path):
    d = sample(tmp_path, "qwen-bpe")
    p = d / "tokenizer_config.json"
    p.write_text(p.read_text(encoding="utf-8").rstrip()[:-1] + ', "eos_token": "<|endoftext|>"}', encoding="utf-8")
    refused(d, "tokenizer_config.json", "$.eos_token: duplicate key 'eos_token'")


def test_duplicate_key_named_as_json_path_when_not_an_identifier():
    from mtok_export.json_value import parse_json

    with pytest.raises(MtokError, match=r"x\.json \$\.added\['<s> x'\]: duplicate key '<s> x'") as info:
        parse_json('{"added": {"<s> x": 1, "b": 2, "<s> x": 3}}', "x.json")
    assert info.value.exit_code == 2
    assert parse_json('{"a": {"k": 1}, "b": {"k": 2}}', "x.json") == {"a": {"k": 1}, "b": {"k": 2}}  # not a duplicate
    # A duplicate before a syntax error: the syntax error, from the second parse too.
    with pytest.raises(MtokError, match="x.json: not valid JSON at line 1 column 25: Expecting property name"):
        parse_json('{"a": {"k": 1, "k": 2}, }', "x.json")


def test_duplicate_key_in_tekken(tmp_path):
    from mtok_export.readers.tekken import read_tekken

    p = tmp_path / "tekken.json"
    p.write_text('{"config": {"pattern": "a", "pattern": "b"}, "vocab": []}', encoding="utf-8")
    with pytest.raises(MtokError, match=r"\$\.config\.pattern: duplicate key 'pattern'") as info:
        read_tekken(p)
    assert info.value.exit_code == 2


def test_duplicate_key_in_mnn_llm_config(tmp_path):
    # MNN's rapidjson keeps the first, Python the last: what the engine uses would be a guess.
    from mtok_export.model_folder import find

    (tmp_path / "config.json").write_text('{"llm_model": "a.mnn", "llm_model": "b.mnn"}', encoding="utf-8")
    with pytest.raises(MtokError, match=r"config\.json \$\.llm_model: duplicate key") as info:
        find(tmp_path)
    assert info.value.exit_code == 2


def test_deep_json_in_mnn_config_and_chat_messages(tmp_path, monkeypatch, capsys):
    # Were RecursionError tracebacks ("internal error").
    from mtok_export.model_folder import find

    deep = "[" * 100_000 + "]" * 100_000
    (tmp_path / "config.json").write_text(deep, encoding="utf-8")
    with pytest.raises(MtokError, match="config.json: JSON nested too deeply"):
        find(tmp_path)
    import sys

    from mtok_export.cli import main
    (tmp_path / "m.json").write_text(deep, encoding="utf-8")
    monkeypatch.setattr(sys, "argv", ["mtok", "chat", str(tmp_path / "x.mtok"), "--messages", str(tmp_path / "m.json")])
    with pytest.raises(SystemExit) as info:
        main()
    assert info.value.code == 2 and "m.json: JSON nested too deeply" in capsys.readouterr().err


def test_deep_json_in_a_corpus_file_and_a_vocab_json(tmp_path):
    from mtok_export.corpus import load_corpus_file

    p = tmp_path / "c.jsonl"
    p.write_text('{"text": "a", "slice": "s"}\n' + "[" * 100_000 + "]" * 100_000 + "\n", encoding="utf-8")
    with pytest.raises(MtokError, match=r"c\.jsonl:2: JSON nested too deeply"):
        load_corpus_file(p)
    # Sniffing a file that starts like vocab.json parses it: that was the RecursionError.
    v = tmp_path / "vocab.json"
    v.write_text('{"a": 0, "b": ' + "[" * 100_000 + "]" * 100_000 + "}", encoding="utf-8")
    refused(v)


@pytest.mark.parametrize("family, component", [
    ("pre_tokenizer", {"type": "Split", "pattern": {"Regex": "[z-a]"}, "behavior": "Isolated", "invert": False}),
    ("normalizer", {"type": "Sequence", "normalizers": [
        {"type": "NFC"}, {"type": "Replace", "pattern": {"Regex": "\\p{Bogus}"}, "content": "x"}]}),
])
def test_regex_oniguruma_rejects(tmp_path, monkeypatch, family, component):
    # Was exit 0 with no loss: MNN then encoded every text to [].
    monkeypatch.setenv("MTOK_CACHE_DIR", str(tmp_path / "cache"))
    d = sample(tmp_path, "qwen-bpe")
    edit_json(d / "tokenizer.json", lambda j: j.update({family: component}))
    with pytest.raises(Exception, match="Oniguruma error"):
        import tokenizers
        tokenizers.Tokenizer.from_str((d / "tokenizer.json").read_text(encoding="utf-8"))
    where = "$.pre_tokenizer.pattern" if family == "pre_tokenizer" else "$.normalizer.normalizers[1].pattern"
    for _ in range(2):  # computed, then answered from the cache
        msg = refused(d, "tokenizer.json", where, "does not compile in HF tokenizers (Oniguruma)")
    assert ("empty range in char class" if family == "pre_tokenizer" else "invalid character property name") in msg
    assert len(list((tmp_path / "cache" / "regex-rejected").iterdir())) == 1


def test_regex_oniguruma_accepts_what_python_re_rejects(tmp_path, monkeypatch):
    # \p{L} and possessive quantifiers are Oniguruma, not `re`: the check must not be Python's.
    monkeypatch.setenv("MTOK_CACHE_DIR", str(tmp_path / "cache"))
    from mtok_export.readers.regex_check import rejected

    assert rejected("oniguruma", [r"\p{L}++", "[[:alpha:]]", "[z-a]", "("]) == {
        "[z-a]": "Oniguruma error: empty range in char class",
        "(": "Oniguruma error: end pattern with unmatched parenthesis"}


def test_tiktoken_pattern_the_reference_rejects(tmp_path, monkeypatch):
    monkeypatch.setenv("MTOK_CACHE_DIR", str(tmp_path / "cache"))
    import regex
    import tiktoken
    from mtok_export.readers.tiktoken import read_tiktoken

    from tests.support.fuzzing import tiktoken_seed

    with pytest.raises(ValueError):
        tiktoken.Encoding(name="x", pat_str=r"\p{Bogus}", mergeable_ranks={b"a": 0}, special_tokens={})
    with pytest.raises(regex.error):
        regex.compile(r"\p{Bogus}")
    p = tmp_path / "ranks.tiktoken"
    p.write_bytes(tiktoken_seed())
    with pytest.raises(MtokError, match=r"ranks\.tiktoken \(the pattern argument\): split regex '\\\\p\{Bogus\}' "
                                        r"does not compile in tiktoken.*the regex module: unknown property") as info:
        read_tiktoken(p, pattern=r"\p{Bogus}", special={})
    assert info.value.exit_code == 2
    assert read_tiktoken(p, pattern=r"\p{L}+| ?\S", special={}).model is not None  # a good one still reads


def test_tekken_pattern_the_reference_rejects(tmp_path, monkeypatch):
    # mistral_common encodes tekken files with tiktoken: the same engine decides.
    monkeypatch.setenv("MTOK_CACHE_DIR", str(tmp_path / "cache"))
    from mtok_export.readers.tekken import read_tekken

    p = tmp_path / "tekken.json"
    p.write_text(json.dumps({"config": {"pattern": "[z-a]"}, "vocab": []}), encoding="utf-8")
    with pytest.raises(MtokError, match=r"tekken\.json: \$\.config\.pattern: split regex '\[z-a\]' does not "
                                        r"compile in tiktoken") as info:
        read_tekken(p)
    assert info.value.exit_code == 2


def test_damaged_cache_entries_are_misses_and_replaced(tmp_path, monkeypatch):
    # A deeply nested entry was "internal error: RecursionError".
    monkeypatch.setenv("MTOK_CACHE_DIR", str(tmp_path))
    from mtok_export import cache

    damaged = ["[" * 100_000 + "]" * 100_000, "{not json", "\udcff", "[[[[1]]]]"]
    for i, text in enumerate(damaged):
        p = cache.path("kind", f"d{i}")
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(text.encode("utf-8", "surrogateescape"))
        assert cache.load("kind", f"d{i}") == (None if i < 3 else [[[[1]]]])
        assert cache.computed("kind", f"d{i}", lambda: {"fresh": i}, valid=lambda v: isinstance(v, dict)) == {"fresh": i}
        assert json.loads(p.read_text(encoding="utf-8")) == {"fresh": i}  # replaced


@pytest.mark.runtime
def test_damaged_cache_entry_during_an_export(tmp_path, monkeypatch):
    monkeypatch.setenv("MTOK_CACHE_DIR", str(tmp_path / "cache"))
    d = sample(tmp_path, "qwen-bpe")
    first = build(read_source(d))[0]
    entries = sorted((tmp_path / "cache").rglob("*.json"))
    assert {p.parent.name for p in entries} >= {"regex-rejected", "chat-depth"}
    for p in entries:
        p.write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
    assert build(read_source(d))[0] == first
    assert all(not p.read_text(encoding="utf-8").startswith("[[[") for p in entries)
