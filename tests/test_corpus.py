"""The built-in verification corpus, user corpus files and llama.cpp test vectors."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import unicodedata
from collections import Counter
from pathlib import Path

import pytest

from mtok_export.errors import InputError
from mtok_export.corpus import (
    CHAT_TAGS, TAGS, TESTVECTOR_TAG, Chat, Sample, builtin_chats, builtin_corpus, load_corpus_file,
    testvector_corpus,
)

REPO = Path(__file__).resolve().parents[1]
TESTVECTORS = REPO.parent / "shared/corpus/testvectors"

# Minimum number of samples per tag for the categories the verification relies on.
MIN_PER_TAG = {
    "latin": 15, "code": 15, "markup": 5, "web": 6, "numbers": 15, "punctuation": 8, "contractions": 6,
    "cjk": 12, "japanese": 6, "korean": 6, "rtl": 8, "indic": 5, "sea": 3, "vietnamese": 4,
    "cyrillic": 4, "greek": 4, "mixed-script": 5, "emoji": 12, "combining": 15, "compat": 15,
    "spaces": 6, "whitespace": 25, "control": 8, "zero-width": 10, "bidi": 4, "special": 72,
    "partial-special": 15, "byte-like": 8, "rare": 8, "long": 8, "empty": 1, "single-char": 10,
}


@pytest.fixture(scope="module")
def corpus() -> tuple[Sample, ...]:
    return builtin_corpus()


@pytest.fixture(scope="module")
def by_id(corpus) -> dict[str, Sample]:
    return {s.id: s for s in corpus}


# --- built-in corpus -----------------------------------------------------------------------------

def test_corpus_size_and_types(corpus):
    assert len(corpus) >= 200
    assert all(isinstance(s, Sample) and isinstance(s.text, str) and isinstance(s.tags, tuple) for s in corpus)


def test_ids_unique_and_slug_like(corpus):
    ids = [s.id for s in corpus]
    assert len(ids) == len(set(ids))
    assert all(re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", i) for i in ids)


def test_texts_unique(corpus):
    dupes = [t for t, n in Counter(s.text for s in corpus).items() if n > 1]
    assert not dupes


def test_tags_documented_and_nonempty(corpus):
    for s in corpus:
        assert s.tags, s.id
        assert set(s.tags) <= set(TAGS), (s.id, set(s.tags) - set(TAGS))
    assert all(desc for desc in TAGS.values())


def test_every_documented_tag_is_used(corpus):
    used = {t for s in corpus for t in s.tags}
    assert used == set(TAGS) - {"document"}  # that one tags the fetched long documents (`documents`)


@pytest.mark.parametrize("tag,minimum", sorted(MIN_PER_TAG.items()))
def test_minimum_per_tag(corpus, tag, minimum):
    assert sum(tag in s.tags for s in corpus) >= minimum


def test_texts_round_trip_utf8(corpus):
    for s in corpus:
        assert s.text.encode("utf-8").decode("utf-8") == s.text, s.id
        assert not any(0xD800 <= ord(c) <= 0xDFFF for c in s.text), s.id


def test_empty_string_and_single_whitespace(corpus):
    texts = {s.text for s in corpus}
    for t in ("", " ", "\n", "\t", "\r\n", "\r"):
        assert t in texts, repr(t)


def test_zwj_sequence(by_id):
    family = by_id["emoji-zwj-family"].text
    assert family.count("\u200d") == 3 and len(family) == 7


def test_decomposed_korean_jamo(corpus):
    jamo = [s for s in corpus if "korean" in s.tags and any(0x1100 <= ord(c) <= 0x11FF for c in s.text)]
    assert len(jamo) >= 3
    word = next(s.text for s in jamo if s.id == "ko-jamo-word")
    assert not unicodedata.is_normalized("NFC", word)
    assert unicodedata.normalize("NFC", word) == "한국어"
    assert all(0x1100 <= ord(c) <= 0x11FF for c in word)


def test_precomposed_korean(corpus):
    assert any("korean" in s.tags and any(0xAC00 <= ord(c) <= 0xD7A3 for c in s.text) for s in corpus)


def test_vietnamese_nfc_and_nfd(corpus):
    vi = [s for s in corpus if "vietnamese" in s.tags]
    nfd = [s for s in vi if not unicodedata.is_normalized("NFC", s.text)]
    nfc = [s for s in vi if unicodedata.is_normalized("NFC", s.text)]
    assert len(nfd) >= 2 and len(nfc) >= 2
    assert any(unicodedata.is_normalized("NFD", s.text) for s in nfd)
    texts = {s.text for s in vi}
    assert any(unicodedata.normalize("NFD", t) in texts and unicodedata.normalize("NFD", t) != t for t in texts)


def test_crlf_and_lone_cr(corpus):
    assert any("\r\n" in s.text for s in corpus)
    assert any(re.search(r"\r(?!\n)", s.text) for s in corpus)


@pytest.mark.parametrize("token", [
    "<s>", "</s>", "<unk>", "<pad>", "[CLS]", "[SEP]", "[MASK]", "<|endoftext|>", "<|im_start|>",
    "<|im_end|>", "<|begin_of_text|>", "<|eot_id|>", "<|start_header_id|>", "<think>", "</think>",
    "<extra_id_0>", "<|end|>", "<|assistant|>",
])
def test_special_token_forms(corpus, token):
    texts = {s.text for s in corpus if "special" in s.tags}
    assert token in texts                                      # alone
    assert token + token in texts                              # twice in a row
    assert any(f" {token} " in t and t.strip() != token for t in texts)   # mid-sentence, spaced
    assert any(re.search(rf"\w{re.escape(token)}\w", t) for t in texts)  # mid-sentence, unspaced


def test_partial_special_tokens(corpus):
    texts = {s.text for s in corpus if "partial-special" in s.tags}
    for t in ("<|im_", "<s", "[CL", "<|endoftext|"):
        assert t in texts


def test_required_characters_present(corpus):
    joined = "".join(s.text for s in corpus)
    required = {
        "NBSP": "\u00a0", "EN QUAD": "\u2000", "HAIR SPACE": "\u200a", "IDEOGRAPHIC SPACE": "\u3000",
        "NARROW NBSP": "\u202f", "SOH": "\x01", "BEL": "\x07", "ESC": "\x1b", "DEL": "\x7f", "NEL": "\x85",
        "ZWSP": "\u200b", "ZWNJ": "\u200c", "ZWJ": "\u200d", "WORD JOINER": "\u2060", "BOM": "\ufeff",
        "LRM": "\u200e", "RLO": "\u202e", "ANGSTROM": "\u212b", "KELVIN": "\u212a", "OHM": "\u2126",
        "FI LIGATURE": "\ufb01", "FULLWIDTH A": "\uff21", "ONE HALF": "\u00bd", "SUPERSCRIPT TWO": "\u00b2",
        "KM": "\u339e", "ROMAN XII": "\u216b", "CIRCLED ONE": "\u2460", "HALFWIDTH KA": "\uff76",
        "U+10FFFF": "\U0010ffff", "PUA": "\ue000", "U+FFFD": "\ufffd", "U+FFFE": "\ufffe",
        "LOWER ONE EIGHTH BLOCK": "\u2581", "G DOT": "\u0120", "C DOT": "\u010a",
        "SKIN TONE": "\U0001f3fd", "REGIONAL INDICATOR U": "\U0001f1fa", "KEYCAP": "\u20e3",
        "VS16": "\ufe0f", "VS15": "\ufe0e", "COMBINING ACUTE": "\u0301", "VIRAMA": "\u094d",
        "ARABIC FATHA": "\u064e", "HEBREW": "\u05e9", "THAI": "\u0e01", "CYRILLIC": "\u0416",
        "GREEK": "\u03a9", "CURLY APOSTROPHE": "\u2019", "HIRAGANA": "\u3042", "KATAKANA": "\u30ab",
        "TRADITIONAL": "\u9ad4",
    }
    missing = [name for name, ch in required.items() if ch not in joined]
    assert not missing


def test_required_strings_present(corpus):
    texts = {s.text for s in corpus}
    for t in ("1", "12", "123", "1234567890", "<0x41>", "\u2581", "\u0120", "\u010a", "##ing", "e\u0301"):
        assert t in texts, repr(t)
    joined = "\n".join(texts)
    for frag in ("1,000,000", "'s", "'t", "'re", "'ve", "'m", "'ll", "'d", "'S", "...", "---", "!!!", "???",
                 "\t\t", "        ", "\n\n\n"):
        assert frag in joined, frag


def test_long_paragraph(by_id):
    assert 1800 <= len(by_id["long-paragraph"].text) <= 2300


def test_control_chars_are_escaped_in_data_file():
    from importlib import resources
    raw = resources.files("mtok_export").joinpath("data", "corpus.jsonl").read_bytes().decode("utf-8")
    for line in raw.split("\n"):
        assert not any(unicodedata.category(c) in ("Cc", "Cf", "Zl", "Zp") for c in line), line[:60]
    assert raw.splitlines() == raw.split("\n")[:-1]  # no exotic line breaks anywhere


def test_generator_reproduces_data_files():
    script = REPO / "scripts" / "make_corpus.py"
    if not script.exists():
        pytest.skip("scripts/make_corpus.py not present")
    r = subprocess.run([sys.executable, str(script), "--check"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


# --- built-in chats -------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def chats() -> tuple[Chat, ...]:
    return builtin_chats()


def test_chats_shapes(chats):
    assert len(chats) >= 12
    assert len({c.id for c in chats}) == len(chats)
    for c in chats:
        assert isinstance(c, Chat) and isinstance(c.add_generation_prompt, bool)
        assert c.messages and all(isinstance(m["content"], str) for m in c.messages)
        assert all(m["role"] in ("system", "user", "assistant", "tool") for m in c.messages)
        assert set(c.tags) <= set(CHAT_TAGS), c.id
        assert c.tools is None or isinstance(c.tools, list)
        json.dumps({"messages": list(c.messages), "tools": c.tools})  # stays JSON-like


def test_chats_cover_required_cases(chats):
    roles = {c.id: [m["role"] for m in c.messages] for c in chats}
    assert any(r == ["user"] for r in roles.values())
    assert any(r == ["system", "user"] for r in roles.values())
    assert any(r[:3] == ["user", "assistant", "user"] for r in roles.values())
    assert any(m["content"] == "" for c in chats for m in c.messages)
    assert any(c.messages[-1]["role"] == "assistant" and not c.add_generation_prompt for c in chats)
    assert {c.add_generation_prompt for c in chats} == {True, False}
    assert any(ord(ch) > 0x2E80 for c in chats for m in c.messages for ch in m["content"])
    assert any("<|im_end|>" in m["content"] for c in chats for m in c.messages)
    assert any(len(m["content"]) > 2000 for c in chats for m in c.messages)


def test_chat_with_tools(chats):
    with_tools = [c for c in chats if c.tools]
    assert with_tools
    fn = with_tools[0].tools[0]
    assert fn["type"] == "function" and fn["function"]["parameters"]["type"] == "object"


def test_chat_with_tool_calls(chats):
    c = next(c for c in chats if "tool-calls" in c.tags)
    call_msgs = [m for m in c.messages if m["role"] == "assistant" and m.get("tool_calls")]
    assert call_msgs
    call = call_msgs[0]["tool_calls"][0]
    assert call["function"]["name"] == "get_weather" and isinstance(call["function"]["arguments"], dict)
    assert any(m["role"] == "tool" for m in c.messages)


def test_builtin_chats_are_fresh_objects():
    a, b = builtin_chats(), builtin_chats()
    a[0].messages[0]["content"] = "mutated"
    assert b[0].messages[0]["content"] != "mutated"


# --- user corpus files ------------------------------------------------------------------------------

def _write(tmp_path, content: str | bytes) -> Path:
    p = tmp_path / "user.jsonl"
    if isinstance(content, str):
        content = content.encode("utf-8")
    p.write_bytes(content)
    return p


def test_load_both_line_forms(tmp_path):
    p = _write(tmp_path, '"plain string"\n{"text": "obj text", "id": "mine", "tags": ["x"]}\n\n'
                         '{"text": ""}\n"\\u2028 and \\r\\n"\n')
    got = load_corpus_file(p)
    assert got == (Sample("user-1", "plain string", ()), Sample("mine", "obj text", ("x",)),
                   Sample("user-4", "", ()), Sample("user-5", "\u2028 and \r\n", ()))


def test_load_raw_line_separator_and_bom_and_crlf(tmp_path):
    p = _write(tmp_path, b'\xef\xbb\xbf"a\xe2\x80\xa8b"\r\n{"text": "c\xc2\x85d", "extra": 1}\r\n')
    assert [s.text for s in load_corpus_file(p)] == ["a\u2028b", "c\x85d"]


def _error(tmp_path, content) -> str:
    p = _write(tmp_path, content)
    with pytest.raises(InputError) as ei:
        load_corpus_file(p)
    msg = str(ei.value)
    assert str(p) in msg
    return msg


def test_error_invalid_json(tmp_path):
    msg = _error(tmp_path, '"ok"\n{"text": "unterminated\n')
    assert ":2:" in msg and "not valid JSON" in msg


def test_error_wrong_top_level_type(tmp_path):
    msg = _error(tmp_path, '"ok"\n"ok"\n42\n')
    assert ":3:" in msg and "a number" in msg


def test_error_array_line(tmp_path):
    msg = _error(tmp_path, '["a", "b"]\n')
    assert ":1:" in msg and "an array" in msg


def test_error_missing_text(tmp_path):
    msg = _error(tmp_path, '{"txt": "typo"}\n')
    assert ":1:" in msg and '"text"' in msg


def test_error_text_not_string(tmp_path):
    msg = _error(tmp_path, '"a"\n{"text": null}\n')
    assert ":2:" in msg and "null" in msg


def test_error_bad_id(tmp_path):
    msg = _error(tmp_path, '{"text": "a", "id": 7}\n')
    assert ":1:" in msg and '"id"' in msg


def test_error_bad_tags(tmp_path):
    msg = _error(tmp_path, '{"text": "a", "tags": "latin"}\n')
    assert ":1:" in msg and '"tags"' in msg


def test_error_duplicate_id(tmp_path):
    msg = _error(tmp_path, '{"text": "a", "id": "x"}\n"b"\n{"text": "c", "id": "x"}\n')
    assert ":3:" in msg and "duplicate id 'x'" in msg and "line 1" in msg


def test_error_id_collides_with_generated(tmp_path):
    msg = _error(tmp_path, '"a"\n{"text": "b", "id": "user-1"}\n')
    assert ":2:" in msg and "duplicate id" in msg


def test_error_lone_surrogate(tmp_path):
    msg = _error(tmp_path, '"fine"\n"bad \\ud800 surrogate"\n')
    assert ":2:" in msg and "surrogate" in msg


def test_error_not_utf8(tmp_path):
    msg = _error(tmp_path, b'"fine"\n"bad \xff byte"\n')
    assert ":2:" in msg and "UTF-8" in msg


def test_error_empty_file(tmp_path):
    msg = _error(tmp_path, "\n\n")
    assert "no samples" in msg


def test_error_missing_file(tmp_path):
    with pytest.raises(InputError, match="cannot read"):
        load_corpus_file(tmp_path / "nope.jsonl")


# --- llama.cpp test vectors ------------------------------------------------------------------------

def test_testvector_format(tmp_path):
    p = tmp_path / "ggml-vocab-demo.gguf.inp"
    p.write_bytes("a b\n__ggml_vocab_test__\n\n__ggml_vocab_test__\n\n\n__ggml_vocab_test__\n"
                  " x\n\n__ggml_vocab_test__\n".encode())
    got = testvector_corpus(p)
    assert [s.text for s in got] == ["a b", "", "\n", " x\n"]
    assert [s.id for s in got] == [f"ggml-vocab-demo.gguf-{n}" for n in (1, 2, 3, 4)]
    assert all(s.tags == (TESTVECTOR_TAG,) for s in got)


def test_testvector_without_final_separator(tmp_path):
    p = tmp_path / "t.inp"
    p.write_text("one\n__ggml_vocab_test__\ntwo", encoding="utf-8")
    assert [s.text for s in testvector_corpus(p)] == ["one", "two"]


def test_testvector_missing_file(tmp_path):
    with pytest.raises(InputError):
        testvector_corpus(tmp_path / "missing.inp")


def test_testvector_gpt2_matches_out_file():
    inp = TESTVECTORS / "ggml-vocab-gpt-2.gguf.inp"
    if not inp.exists():
        pytest.skip(f"test vectors not available at {TESTVECTORS}")
    samples = testvector_corpus(inp)
    out_lines = inp.with_suffix(".out").read_bytes().decode("utf-8").split("\n")
    if out_lines[-1] == "":
        out_lines.pop()
    assert len(samples) == len(out_lines) == 46
    assert samples[0].id == "ggml-vocab-gpt-2.gguf-1"
    by_text = {s.text: s for s in samples}
    assert "" in by_text and " " in by_text and "\n\n" in by_text and "\t\n" in by_text
    assert samples[1].text == "\u00c4pfel"


def test_testvector_directory():
    if not TESTVECTORS.exists():
        pytest.skip(f"test vectors not available at {TESTVECTORS}")
    samples = testvector_corpus(TESTVECTORS)
    assert len({s.id for s in samples}) == len(samples)
    assert len(samples) >= 46 * 10
