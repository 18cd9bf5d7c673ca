"""The HF reader on hand-made `tokenizer.json` dicts and model directories: legacy forms, every
component `tokenizers` serializes, error paths, and the config files beside `tokenizer.json`."""

from __future__ import annotations

import json

import pytest
import tokenizers
from tokenizers import Regex
from tokenizers import decoders as hd
from tokenizers import models as hm
from tokenizers import normalizers as hn
from tokenizers import pre_tokenizers as hp
from tokenizers import processors as hr

from mtok_export.errors import InputError, UnsupportedError
from mtok_export.ir import AddedToken, Pattern
from mtok_export.ir import decoders as D
from mtok_export.ir import models as M
from mtok_export.ir import normalizers as N
from mtok_export.ir import pre_tokenizers as P
from mtok_export.ir import processors as R
from mtok_export.readers.hf_json import parse_tokenizer_json
from mtok_export.readers.model_dir import read_model_dir

BPE_MODEL = {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2, "</s>": 3, "<s>": 4}, "merges": ["a b"]}


def tj(**over) -> dict:
    base = {"version": "1.0", "truncation": None, "padding": None, "added_tokens": [], "normalizer": None,
            "pre_tokenizer": None, "post_processor": None, "decoder": None, "model": BPE_MODEL}
    return {**base, **over}


def parse(data: dict) -> dict:
    return parse_tokenizer_json(data, "tokenizer.json")[0]


def make_dir(path, tokenizer=None, **files):
    """A model directory: tokenizer.json plus `name=content` files (dicts are written as JSON)."""
    path.mkdir(parents=True, exist_ok=True)
    (path / "tokenizer.json").write_text(json.dumps(tokenizer or tj()), encoding="utf-8")
    for name, content in files.items():
        name = name.replace("__", ".")
        text = content if isinstance(content, str) else json.dumps(content)
        (path / name).write_text(text, encoding="utf-8")
    return path


# ---------------------------------------------------------------- models and legacy forms

def test_untyped_bpe_model():
    m = parse(tj(model={"vocab": {"a": 0, "b": 1, "ab": 2}, "merges": ["a b"]}))["model"]
    assert m == M.BPE({"a": 0, "b": 1, "ab": 2}, (("a", "b"),))


def test_untyped_wordpiece_model():
    m = parse(tj(model={"vocab": {"[UNK]": 0, "a": 1}, "unk_token": "[UNK]", "continuing_subword_prefix": "@@",
                        "max_input_chars_per_word": 7}))["model"]
    assert m == M.WordPiece({"[UNK]": 0, "a": 1}, "[UNK]", "@@", 7)


def test_untyped_unigram_model():
    m = parse(tj(model={"vocab": [["<unk>", 0.0], ["a", -1.5]], "unk_id": 0}))["model"]
    assert m == M.Unigram((("<unk>", 0.0), ("a", -1.5)), 0)


def test_merges_strings_and_pairs_give_equal_ir():
    vocab = {**BPE_MODEL["vocab"], "ab</s>": 5}  # a merge makes a token of the vocabulary (HF refuses others)
    legacy = parse(tj(model={**BPE_MODEL, "vocab": vocab, "merges": ["a b", "ab </s>"]}))["model"]
    pairs = parse(tj(model={**BPE_MODEL, "vocab": vocab, "merges": [["a", "b"], ["ab", "</s>"]]}))["model"]
    assert legacy == pairs
    assert legacy.merges == (("a", "b"), ("ab", "</s>"))


def test_pair_merges_may_hold_spaces():
    vocab = {"a b": 0, "c": 1, "a bc": 2}
    m = parse(tj(model={"type": "BPE", "vocab": vocab, "merges": [["a b", "c"]]}))["model"]
    assert m.merges == (("a b", "c"),)


def test_legacy_merges_skip_version_line():
    m = parse(tj(model={**BPE_MODEL, "merges": ["#version: 0.2", "a b"]}))["model"]
    assert m.merges == (("a", "b"),)


def test_bpe_fields_from_tokenizers():
    model = hm.BPE({"a": 0, "##b": 1, "ab": 2}, [("a", "##b")], dropout=0.25, unk_token="a",
                   continuing_subword_prefix="##", end_of_word_suffix="</w>", fuse_unk=True, byte_fallback=True,
                   ignore_merges=True)
    m = parse(json.loads(tokenizers.Tokenizer(model).to_str()))["model"]
    assert m == M.BPE({"a": 0, "##b": 1, "ab": 2}, (("a", "##b"),), 0.25, "a", "##", "</w>", True, True, True)


@pytest.mark.parametrize("model,expected", [
    (hm.WordPiece({"a": 0, "[UNK]": 1}, unk_token="[UNK]", max_input_chars_per_word=9),
     M.WordPiece({"a": 0, "[UNK]": 1}, "[UNK]", "##", 9)),
    (hm.Unigram([("a", -1.0), ("<unk>", 0.0)], 1, True), M.Unigram((("a", -1.0), ("<unk>", 0.0)), 1, True)),
    (hm.WordLevel({"a": 0, "<unk>": 1}, "<unk>"), M.WordLevel({"a": 0, "<unk>": 1}, "<unk>")),
], ids=["WordPiece", "Unigram", "WordLevel"])
def test_models_from_tokenizers(model, expected):
    assert parse(json.loads(tokenizers.Tokenizer(model).to_str()))["model"] == expected


# ---------------------------------------------------------------- components

def test_metaspace_legacy_add_prefix_space_and_str_rep():
    old = {"type": "Metaspace", "replacement": "\u2581", "str_rep": "\u2581", "add_prefix_space": True}
    assert parse(tj(pre_tokenizer=old))["pre_tokenizer"] == P.Metaspace("\u2581", "always", True)
    assert parse(tj(decoder=old))["decoder"] == D.Metaspace("\u2581", "always", True)
    only_str_rep = {"type": "Metaspace", "str_rep": "_", "add_prefix_space": False}
    assert parse(tj(pre_tokenizer=only_str_rep))["pre_tokenizer"] == P.Metaspace("_", "never", True)


def test_replace_string_vs_regex():
    s = parse(tj(normalizer={"type": "Replace", "pattern": {"String": "a+"}, "content": "b"}))["normalizer"]
    r = parse(tj(normalizer={"type": "Replace", "pattern": {"Regex": "a+"}, "content": "b"}))["normalizer"]
    assert s == N.Replace(Pattern("a+", regex=False), "b")
    assert r == N.Replace(Pattern("a+", regex=True), "b")
    assert s != r


NORMALIZERS = [
    (hn.BertNormalizer(clean_text=False, handle_chinese_chars=True, strip_accents=None, lowercase=False),
     N.BertNormalizer(False, True, None, False)),
    (hn.BertNormalizer(strip_accents=True), N.BertNormalizer(True, True, True, True)),
    (hn.Strip(left=False, right=True), N.Strip(False, True)),
    (hn.StripAccents(), N.StripAccents()), (hn.NFC(), N.NFC()), (hn.NFD(), N.NFD()), (hn.NFKC(), N.NFKC()),
    (hn.NFKD(), N.NFKD()), (hn.Lowercase(), N.Lowercase()), (hn.Nmt(), N.Nmt()),
    (hn.Precompiled(b"\x00\x00\x00\x00"), N.Precompiled(b"\x00\x00\x00\x00")),
    (hn.Replace("a", "b"), N.Replace(Pattern("a"), "b")),
    (hn.Replace(Regex(r"\s+"), " "), N.Replace(Pattern(r"\s+", True), " ")),
    (hn.Prepend("_"), N.Prepend("_")), (hn.ByteLevel(), N.ByteLevel()),
    (hn.Sequence([hn.NFC(), hn.Prepend("x")]), N.Sequence((N.NFC(), N.Prepend("x")))),
]
PRE_TOKENIZERS = [
    (hp.BertPreTokenizer(), P.BertPreTokenizer()),
    (hp.ByteLevel(add_prefix_space=False, use_regex=False), P.ByteLevel(False, True, False)),
    (hp.CharDelimiterSplit("|"), P.CharDelimiterSplit("|")),
    (hp.Digits(individual_digits=True), P.Digits(True)),
    (hp.FixedLength(length=3), P.FixedLength(3)),
    (hp.Metaspace(replacement="_", prepend_scheme="first", split=False), P.Metaspace("_", "first", False)),
    (hp.Punctuation("contiguous"), P.Punctuation("Contiguous")),
    (hp.Split("ab", "removed", invert=False), P.Split(Pattern("ab"), "Removed", False)),
    (hp.Split(Regex(r"\d+"), "merged_with_next", invert=True), P.Split(Pattern(r"\d+", True), "MergedWithNext", True)),
    (hp.UnicodeScripts(), P.UnicodeScripts()), (hp.Whitespace(), P.Whitespace()),
    (hp.WhitespaceSplit(), P.WhitespaceSplit()),
    (hp.Sequence([hp.Whitespace(), hp.Digits()]), P.Sequence((P.Whitespace(), P.Digits(False)))),
]
DECODERS = [
    (hd.BPEDecoder(suffix="</x>"), D.BPEDecoder("</x>")), (hd.ByteFallback(), D.ByteFallback()),
    (hd.ByteLevel(), D.ByteLevel()), (hd.CTC("<p>", "#", False), D.CTC("<p>", "#", False)),
    (hd.Fuse(), D.Fuse()), (hd.Metaspace("_", "never", False), D.Metaspace("_", "never", False)),
    (hd.Replace("_", " "), D.Replace(Pattern("_"), " ")), (hd.Strip(" ", 2, 1), D.Strip(" ", 2, 1)),
    (hd.WordPiece("@@", False), D.WordPiece("@@", False)),
    (hd.Sequence([hd.ByteFallback(), hd.Fuse()]), D.Sequence((D.ByteFallback(), D.Fuse()))),
]
PROCESSORS = [
    (hr.BertProcessing(("[SEP]", 3), ("[CLS]", 4)), R.BertProcessing(("[SEP]", 3), ("[CLS]", 4))),
    (hr.RobertaProcessing(("</s>", 3), ("<s>", 4), trim_offsets=False, add_prefix_space=False),
     R.RobertaProcessing(("</s>", 3), ("<s>", 4), False, False)),
    (hr.ByteLevel(trim_offsets=False), R.ByteLevel(True, False, True)),
    (hr.TemplateProcessing(single="<s> $A </s>", pair="<s> $A </s> $B:1 </s>:1",
                           special_tokens=[("<s>", 4), ("</s>", 3)]),
     R.TemplateProcessing(
         single=(R.Piece("<s>", 0, True), R.Piece("A"), R.Piece("</s>", 0, True)),
         pair=(R.Piece("<s>", 0, True), R.Piece("A"), R.Piece("</s>", 0, True), R.Piece("B", 1),
               R.Piece("</s>", 1, True)),
         special_tokens=(R.SpecialToken("</s>", (3,), ("</s>",)), R.SpecialToken("<s>", (4,), ("<s>",))))),
    (hr.Sequence([hr.ByteLevel()]), R.Sequence((R.ByteLevel(),))),
]


def _serialize(attr: str, component) -> dict:
    tok = tokenizers.Tokenizer(hm.BPE({"a": 0, "b": 1, "ab": 2, "</s>": 3, "<s>": 4}, [("a", "b")]))
    setattr(tok, attr, component)
    return json.loads(tok.to_str())


@pytest.mark.parametrize("family,attr,pairs", [
    ("normalizer", "normalizer", NORMALIZERS), ("pre_tokenizer", "pre_tokenizer", PRE_TOKENIZERS),
    ("decoder", "decoder", DECODERS), ("post_processor", "post_processor", PROCESSORS),
], ids=["normalizers", "pre_tokenizers", "decoders", "processors"])
def test_every_serialized_component_parses(family, attr, pairs):
    for hf, expected in pairs:
        got = parse(_serialize(attr, hf))[family]
        assert got == expected, (hf, got)
        assert type(got) is type(expected)


@pytest.mark.parametrize("module,pairs", [
    (hn, NORMALIZERS), (hp, PRE_TOKENIZERS), (hd, DECODERS), (hr, PROCESSORS)],
    ids=["normalizers", "pre_tokenizers", "decoders", "processors"])
def test_every_tokenizers_class_is_covered(module, pairs):
    """A new component class in `tokenizers` must get a parse test above."""
    abstract = {"Normalizer", "PreTokenizer", "Decoder", "PostProcessor", "DecodeStream", "NORMALIZERS"}
    classes = {n for n in dir(module) if n[0].isupper() and n not in abstract}
    assert classes <= {type(hf).__name__ for hf, _ in pairs}


def test_added_tokens_from_tokenizers():
    tok = tokenizers.Tokenizer(hm.BPE({"a": 0}, []))
    tok.add_tokens([tokenizers.AddedToken("x", single_word=True, lstrip=True)])
    tok.add_special_tokens(["<s>"])
    added = parse(json.loads(tok.to_str()))["added_tokens"]
    assert added == (AddedToken(1, "x", single_word=True, lstrip=True, normalized=True, special=False),
                     AddedToken(2, "<s>", normalized=False, special=True))


# ---------------------------------------------------------------- errors name the JSON path

def test_unknown_nested_type_names_json_path():
    data = tj(pre_tokenizer={"type": "Sequence", "pretokenizers": [{"type": "Digits"}, {"type": "Frobnicate"}]})
    with pytest.raises(UnsupportedError) as info:
        parse(data)
    assert info.value.json_path == "$.pre_tokenizer.pretokenizers[1].type"
    assert "$.pre_tokenizer.pretokenizers[1].type" in str(info.value) and "'Frobnicate'" in str(info.value)


def test_mnn_only_kinds_are_not_accepted_from_json():
    with pytest.raises(UnsupportedError, match=r"\$\.normalizer\.type"):
        parse(tj(normalizer={"type": "MnnCodepointMap", "entries": []}))


WRONG_TYPES = [
    ("bool", tj(pre_tokenizer={"type": "Digits", "individual_digits": "yes"}), "$.pre_tokenizer.individual_digits"),
    ("int", tj(decoder={"type": "Strip", "content": " ", "start": "1", "stop": 0}), "$.decoder.start"),
    ("int-not-bool", tj(decoder={"type": "Strip", "content": " ", "start": True, "stop": 0}), "$.decoder.start"),
    ("str", tj(normalizer={"type": "Prepend", "prepend": 5}), "$.normalizer.prepend"),
    ("pattern", tj(normalizer={"type": "Replace", "pattern": "a", "content": "b"}), "$.normalizer.pattern"),
    ("behavior", tj(pre_tokenizer={"type": "Split", "pattern": {"String": "a"}, "behavior": "Sideways",
                                   "invert": False}), "$.pre_tokenizer.behavior"),
    ("children", tj(normalizer={"type": "Sequence", "normalizers": {"type": "NFC"}}), "$.normalizer.normalizers"),
    ("component", tj(decoder=["Fuse"]), "$.decoder"),
    ("model", tj(model=[1, 2]), "$.model"),
    ("vocab-id", tj(model={"type": "BPE", "vocab": {"a": "0"}, "merges": []}), "$.model.vocab"),
    ("merge-shape", tj(model={**BPE_MODEL, "merges": ["a b c"]}), "$.model.merges[0]"),
    ("merge-item", tj(model={**BPE_MODEL, "merges": [["a", "b"], 5]}), "$.model.merges[1]"),
    pytest.param("merge-mixed", tj(model={**BPE_MODEL, "merges": ["a b", ["a", "b"]]}), "$.model.merges[1]"),
    pytest.param("merge-string-in-pairs", tj(model={**BPE_MODEL, "merges": [["a", "b"], "ab"]}),
                 "$.model.merges[1]"),
    ("unigram-vocab", tj(model={"type": "Unigram", "vocab": [["a", "x"]], "unk_id": 0}), "$.model.vocab[0]"),
    ("added-id", tj(added_tokens=[{"id": "1", "content": "x"}]), "$.added_tokens[0]"),
    ("added-flag", tj(added_tokens=[{"id": 1, "content": "x", "special": 1}]), "$.added_tokens[0].special"),
    ("template-piece", tj(post_processor={"type": "TemplateProcessing", "single": ["$A"], "pair": [],
                                          "special_tokens": {}}), "$.post_processor.single[0]"),
    ("pair", tj(post_processor={"type": "BertProcessing", "sep": "[SEP]", "cls": ["[CLS]", 1]}),
     "$.post_processor.sep"),
    pytest.param("type-not-str", tj(normalizer={"type": ["NFC"]}), "$.normalizer.type"),
    pytest.param("model-type-not-str", tj(model={"type": ["BPE"], "vocab": {}}), "$.model.type"),
    pytest.param("template-type-id", tj(post_processor={
        "type": "TemplateProcessing", "single": [{"Sequence": {"id": "A", "type_id": "x"}}], "pair": [],
        "special_tokens": {}}), "$.post_processor.single[0]"),
]


@pytest.mark.parametrize("case,data,json_path", WRONG_TYPES, ids=[
    c.values[0] if hasattr(c, "marks") else c[0] for c in WRONG_TYPES])
def test_wrong_typed_value_names_json_path(case, data, json_path):
    with pytest.raises(UnsupportedError) as info:
        parse(data)
    assert info.value.json_path == json_path
    assert str(info.value).startswith(f"tokenizer.json {json_path}: ")


def test_not_a_tokenizer_json():
    with pytest.raises(UnsupportedError, match=r"\$: not a tokenizer\.json"):
        parse({"foo": 1})


def test_malformed_json_names_the_file(tmp_path):
    tmp_path.joinpath("tokenizer.json").write_text('{"model": ', encoding="utf-8")
    with pytest.raises(InputError, match="tokenizer.json: not valid JSON"):
        read_model_dir(tmp_path)


def test_malformed_config_names_the_file(tmp_path):
    make_dir(tmp_path, tokenizer_config__json="{oops")
    with pytest.raises(InputError, match=r"tokenizer_config\.json: not valid JSON at line 1 column 2"):
        read_model_dir(tmp_path)


# ---------------------------------------------------------------- tokenizer_config.json and friends

def test_chat_template_string(tmp_path):
    tok = read_model_dir(make_dir(tmp_path, tokenizer_config__json={"chat_template": "{{ messages }}"}))
    assert tok.chat.text == "{{ messages }}" and tok.chat.others == ()
    assert tok.chat.source == "tokenizer_config.json:chat_template"


def test_chat_template_named_list_default_first(tmp_path):
    cfg = {"chat_template": [{"name": "tool_use", "template": "T"}, {"name": "default", "template": "D"},
                             {"name": "rag", "template": "R"}]}
    tok = read_model_dir(make_dir(tmp_path, tokenizer_config__json=cfg))
    assert tok.chat.text == "D" and tok.chat.name == "default"
    assert tok.chat.others == (("tool_use", "T"), ("rag", "R"))


def test_chat_template_named_list_choose_other(tmp_path):
    cfg = {"chat_template": [{"name": "default", "template": "D"}, {"name": "rag", "template": "R"}]}
    tok = read_model_dir(make_dir(tmp_path, tokenizer_config__json=cfg), chat_template="rag")
    assert tok.chat.text == "R" and tok.chat.others == (("default", "D"),)


def test_chat_template_named_list_malformed(tmp_path):
    make_dir(tmp_path, tokenizer_config__json={"chat_template": [{"name": "default"}]})
    with pytest.raises(UnsupportedError, match=r"\$\.chat_template\[0\]"):
        read_model_dir(tmp_path)


def test_chat_template_jinja_file_wins(tmp_path):
    tok = read_model_dir(make_dir(tmp_path, tokenizer_config__json={"chat_template": "CONFIG"},
                                  chat_template__json={"chat_template": "JSON"}, chat_template__jinja="JINJA\n"))
    assert tok.chat.text == "JINJA\n" and tok.chat.source == "chat_template.jinja"
    assert any(f.path.endswith("chat_template.jinja") for f in tok.provenance.inputs)


def test_chat_template_json_file_beats_config(tmp_path):
    tok = read_model_dir(make_dir(tmp_path, tokenizer_config__json={"chat_template": "CONFIG"},
                                  chat_template__json={"chat_template": "JSON"}))
    assert tok.chat.text == "JSON" and tok.chat.source == "chat_template.json"


@pytest.mark.parametrize("bos,eos", [("<s>", "</s>"), ({"content": "<s>", "lstrip": False},
                                                       {"__type": "AddedToken", "content": "</s>"})])
def test_bos_eos_string_or_object(tmp_path, bos, eos):
    tok = read_model_dir(make_dir(tmp_path, tokenizer_config__json={"bos_token": bos, "eos_token": eos}))
    assert (tok.chat.bos_token, tok.chat.eos_token) == ("<s>", "</s>")
    assert tok.stop_ids == (3,)  # eos is in the vocab
    assert tok.meta.stop_sources == ((3, "tokenizer_config.json eos_token"),)


def test_bad_eos_names_key(tmp_path):
    make_dir(tmp_path, tokenizer_config__json={"eos_token": 7})
    with pytest.raises(UnsupportedError, match=r"\$\.eos_token"):
        read_model_dir(tmp_path)


@pytest.mark.parametrize("value,flag", [(True, True), (False, False), ("true", False), (None, False)])
def test_clean_up_tokenization_spaces(tmp_path, value, flag):
    tok = read_model_dir(make_dir(tmp_path, tokenizer_config__json={"clean_up_tokenization_spaces": value}))
    assert tok.chat.clean_up_tokenization_spaces is flag


def test_add_bos_token(tmp_path):
    assert read_model_dir(make_dir(tmp_path / "a", tokenizer_config__json={"add_bos_token": True})
                          ).meta.add_bos_token is True
    assert read_model_dir(make_dir(tmp_path / "b", tokenizer_config__json={})).meta.add_bos_token is None


def test_generation_config_eos_int(tmp_path):
    tok = read_model_dir(make_dir(tmp_path, generation_config__json={"eos_token_id": 4}))
    assert tok.stop_ids == (4,)
    assert tok.meta.stop_sources == ((4, "generation_config.json eos_token_id"),)


def test_generation_config_eos_list_and_sources(tmp_path):
    tok = read_model_dir(make_dir(tmp_path, tokenizer_config__json={"eos_token": "</s>"},
                                  generation_config__json={"eos_token_id": [3, 1]},
                                  config__json={"eos_token_id": 2}))
    assert tok.stop_ids == (3, 1, 2)
    assert tok.meta.stop_sources == ((3, "tokenizer_config.json eos_token"),
                                     (1, "generation_config.json eos_token_id"),
                                     (2, "config.json eos_token_id"))


def test_generation_config_eos_wrong_type(tmp_path):
    make_dir(tmp_path, generation_config__json={"eos_token_id": "2"})
    with pytest.raises(UnsupportedError, match=r"generation_config\.json \$\.eos_token_id"):
        read_model_dir(tmp_path)


def test_config_vocab_size_smaller_than_ids_is_noted(tmp_path):
    tok = read_model_dir(make_dir(tmp_path, config__json={"vocab_size": 3}))
    assert tok.meta.model_vocab_size == 3
    assert any("[3, 4]" in n and "config.json vocab_size 3" in n for n in tok.meta.notes), tok.meta.notes
    ok = read_model_dir(make_dir(tmp_path / "ok", config__json={"vocab_size": 8}))
    assert not any("vocab_size" in n for n in ok.meta.notes)


def test_added_tokens_decoder_only_tokens_are_added(tmp_path):
    data = tj(added_tokens=[{"id": 4, "content": "<s>", "special": True, "normalized": False}])
    cfg = {"added_tokens_decoder": {
        "4": {"content": "<s>", "special": True},
        "6": {"content": "<extra>", "special": True, "normalized": False, "lstrip": True},
        "5": {"content": "<tool>", "special": False},
    }}
    tok = read_model_dir(make_dir(tmp_path, data, tokenizer_config__json=cfg))
    assert tok.added_tokens == (
        AddedToken(4, "<s>", normalized=False, special=True),
        AddedToken(5, "<tool>", normalized=True, special=False),
        AddedToken(6, "<extra>", lstrip=True, normalized=False, special=True),
    )
    assert tok.special_ids == (6, 4)  # longest content first
    assert sum("only in tokenizer_config.json" in n for n in tok.meta.notes) == 2


def test_end_of_turn_tokens_become_stops(tmp_path):
    data = tj(added_tokens=[{"id": 5, "content": "<|im_end|>", "special": True}])
    tok = read_model_dir(make_dir(tmp_path, data))
    assert tok.stop_ids == (5,)
    assert tok.meta.stop_sources == ((5, "end-of-turn token <|im_end|>"),)


def test_missing_tokenizer_json(tmp_path):
    with pytest.raises(InputError, match="no tokenizer.json"):
        read_model_dir(tmp_path)


@pytest.mark.parametrize("value", [{"x": {"content": "<x>"}}, [{"content": "<x>"}]], ids=["key", "list"])
def test_bad_added_tokens_decoder_names_key(tmp_path, value):
    make_dir(tmp_path, tokenizer_config__json={"added_tokens_decoder": value})
    with pytest.raises(UnsupportedError, match=r"\$\.added_tokens_decoder"):
        read_model_dir(tmp_path)


# An entry of tokenizer_config.json's added_tokens_decoder that leaves out flags: a plain token,
# a special one, and one with neither flag (ids past every vocabulary used below).
UNFLAGGED = {"100000": {"content": "<plain>", "special": False}, "100001": {"content": "<spec>", "special": True},
             "100002": {"content": "<bare>"}}


def _flags(tokens) -> dict:
    """content -> (single_word, lstrip, rstrip, normalized, special) of the UNFLAGGED entries (by content:
    transformers gives an id past its vocabulary the next free one)."""
    contents = {e["content"] for e in UNFLAGGED.values()}
    return {t.content: (t.single_word, t.lstrip, t.rstrip, t.normalized, t.special) for t in tokens
            if t.content in contents}


def test_unflagged_decoder_entries_read_as_transformers_loads_them(tmp_path):
    """Differential: the flags transformers gives `added_tokens_decoder` entries without `normalized`
    (and without `special`) are what every reader gives them: the model directory, the side-file
    readers (vocab.txt) and SentencePiece without a dummy prefix (with one, transformers' rule
    `normalized=False` applies, tested with the SentencePiece reader)."""
    import shutil

    from sentencepiece import sentencepiece_model_pb2 as pb
    from transformers import AutoTokenizer

    from tests.support.corpus_dirs import SAMPLES
    from mtok_export.formats import read_source

    cfg = {"tokenizer_class": "PreTrainedTokenizerFast", "added_tokens_decoder": UNFLAGGED}
    model_dir = make_dir(tmp_path / "hf", tj(model={"type": "WordLevel", "vocab": {"[UNK]": 0, "a": 1},
                                                    "unk_token": "[UNK]"}),
                         tokenizer_config__json=cfg)
    hf = AutoTokenizer.from_pretrained(str(model_dir))
    expected = _flags(hf.added_tokens_decoder.values())
    assert expected["<plain>"][3:] == (True, False) and expected["<spec>"][3:] == (False, True)  # the library's rule
    assert len(expected) == 3

    bert = tmp_path / "bert"
    bert.mkdir()
    shutil.copy(SAMPLES / "bert-wordpiece/vocab.txt", bert / "vocab.txt")
    (bert / "tokenizer_config.json").write_text(json.dumps({"added_tokens_decoder": UNFLAGGED}))
    spm = tmp_path / "spm"
    spm.mkdir()
    m = pb.ModelProto()
    m.ParseFromString((SAMPLES / "llama-spm/tokenizer.model").read_bytes())
    m.normalizer_spec.add_dummy_prefix = False
    (spm / "tokenizer.model").write_bytes(m.SerializeToString())
    (spm / "tokenizer_config.json").write_text(json.dumps({"added_tokens_decoder": UNFLAGGED}))
    for source in (model_dir, bert, spm):
        assert _flags(read_source(source).added_tokens) == expected, source.name
