"""Split patterns on the runtime's two regex engines (`lower/regex.py`, spec 3.3): each rewrite
checked against HF on the real MNN 3.6.1 runtime (GPT-2's byte-level vocabulary with the pattern
under test as its pre-tokenizer, so a different split shows as different ids), every construct
without an exact form reported, and DeepSeek-LLM's own patterns (GGUF) exact on code, JSON and
whitespace/punctuation variants."""

from __future__ import annotations

from pathlib import Path

import pytest
from tokenizers import Regex
from tokenizers.pre_tokenizers import Split

from mtok_export.lower import lower
from mtok_export.lower.regex import WHITE_SPACE, for_runtime, runs_on_wregex
from mtok_export.mtok import write_mtok
from mtok_export.readers.gguf import read_gguf
from mtok_export.corpus import builtin_corpus
from mtok_export.targets import TARGETS
from mtok_export.verify.reference_tiktoken import hf_from_ir
from mtok_export.verify.runtime import run_runtime

from tests.support.gpt2_patterns import gpt2_with
from tests.support.marks import needs_mnn

REPO = Path(__file__).resolve().parents[2]
CORPUS = REPO.parent / "shared/corpus"
needs_corpus = pytest.mark.skipif(not (CORPUS / "tokenizers/gpt2").is_dir(), reason="shared corpus not present")

DEEPSEEK_PUNCT = "\\s?[!-/:-~\uff01-\uff0f\uff1a-\uff5e\u2018-\u201f\u3000-\u3002]+"
CJK = "[\u4e00-\u9fa5\u0800-\u4e00\uac00-\ud7ff]+"

# Code, JSON, shell and whitespace/punctuation variants around the constructs rewritten.
TEXTS = [
    "const add = (a, b) => a + b;\nconsole.log(`sum: ${add(1, 2)}`);",
    "if [ $? -ne 0 ]; then echo $$\\ fi",
    'echo "${HOME}/bin" && export PATH=$PATH:~/.local/bin  ',
    '{"price": "$5", "tags": ["a", "b"], "ok": true}\n',
    "a $ b $$ c\n$\n $x\t$\r\n",
    "trailing spaces   \nand tabs\t\t\nend  ",
    "x \u2028y \x85z\u2029 ",
    "100\u00a0km and 5\u00a0% \u3000\u3001\u300c\u5f15\u7528\u300d\uff01\uff1f",
    "\u2018quoted\u2019 \u201cdouble\u201d \u2014 dash \u2026 ellipsis \uff08\u5168\u89d2\uff09\uff1a\uff5e",
    "\u4f60\u597d\uff0c\u4e16\u754c\u3002 Hello, world! \ud55c\uad6d\uc5b4 \u65e5\u672c\u8a9e",
    "a\u1680b\u2000c\u200ad\u202fe\u205ff\u3000g",
    "line\r\nline2\rline3\n\n  \n",
]


def runtime_differs(tmp_path: Path, patterns: list[str], texts: list[str]) -> tuple[list[str], object]:
    hf, path, lw = gpt2_with(tmp_path, patterns)
    got = run_runtime(path, texts=texts).encodes
    return [t for t, g in zip(texts, got) if g != hf.encode(t, add_special_tokens=False).ids], lw


@pytest.mark.runtime
def test_white_space_is_onigurumas_s():
    """The spelled-out class is exactly the set HF's \\s matches, over every code point."""
    cps = [c for c in range(0x110000) if not 0xD800 <= c < 0xE000]
    text = "".join(map(chr, cps))
    kept = Split(Regex(r"\s"), "removed").pre_tokenize_str(text)
    # offsets count code points; what no kept piece covers was matched
    covered = set()
    for _, (a, b) in kept:
        covered.update(range(a, b))
    matched = "".join(chr(cps[i]) for i in range(len(cps)) if i not in covered)
    assert matched == WHITE_SPACE


@pytest.mark.parametrize("pattern, written", [
    ("\\p{L}+$", "\\p{L}+(?![^\\n])"),  # fold engine: $ is a literal there
    ("a\\z|b\\Z", "a(?![^\\n]|\\n)|b(?!\\n?[^\\n]|\\n\\n)"),
    ("\u00e9.", "\u00e9[^\\n]"),  # wregex: ECMAScript's . also stops at \r, U+2028, U+2029
    ("\\S\u00e9", "[^\\t\\n\\v\\f\\r \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]\u00e9"),
    ("[\\s\u00e9]", "[\\t\\n\\v\\f\\r \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\u00e9]"),
    ("\\p{L}+|\\$\\{", "\\p{L}+|\\$\\{"),  # escaped $ stays a literal
    ("[$^]", "[$^]"),  # inside a class $ and a non-leading ^ are literals
])
def test_rewrites_keep_the_engine(pattern, written):
    out, why = for_runtime(pattern)
    assert (out, why) == (written, [])
    assert runs_on_wregex(out) == runs_on_wregex(pattern)


WS = "[\\t\\n\\v\\f\\r \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]"


@pytest.mark.parametrize("pattern", ["\\s+", "\\s+$", "\\s+(?!\\S)|\\s+", " (?![\\s\\S])", "[\\r\\n]", "\\s+\\p{L}"])
def test_ascii_patterns_stay_on_the_fold_engine(pattern):
    """Spelling \\s out would move an ASCII pattern to std::wregex (exact \\s there), but that engine
    overflows its stack on long runs (below); the pattern stays on the fold engine."""
    assert not runs_on_wregex(for_runtime(pattern)[0])


@needs_corpus
@needs_mnn
def test_wregex_overflows_on_a_long_run_the_fold_engine_survives(tmp_path):
    """Why: libstdc++'s std::regex recurses per character.  60,000 spaces under /[WS]+/ (std::wregex)
    kill the runtime; under /\\s+/ (fold engine) they are one piece."""
    from mtok_export.errors import RuntimeEngineError

    text = "a" + " " * 60000 + "b"
    (tmp_path / "fold").mkdir()
    (tmp_path / "wide").mkdir()
    differ, _ = runtime_differs(tmp_path / "fold", ["\\s+"], [text])
    assert differ == []
    _, path, _ = gpt2_with(tmp_path / "wide", [WS + "+"])
    with pytest.raises(RuntimeEngineError, match="SIGSEGV"):
        run_runtime(path, texts=[text])


@needs_corpus
@needs_mnn
def test_no_fold_marker_collision_under_wregex(tmp_path):
    """\\x01-\\x07 collide with the fold engine's category markers only; a pre-tokenizer whose every
    regex runs on std::wregex records no regex-control loss, and those bytes split as HF splits them."""
    texts = ["\x01a\x02\u4e00\u4e8c\x03 \x05", "\u4e00\x01\u4e8c\x06!"]
    differ, lw = runtime_differs(tmp_path, ["[\u4e00-\u9fff]+", "\u00e9|[!-/]+"], texts)
    assert differ == []
    assert "regex-control" not in {x.code for x in lw.losses}


@pytest.mark.parametrize("pattern, reason", [
    ("^\\s+", "^ (line start)"),
    ("\\p{N}|\\\u00e9", "non-ASCII '\u00e9' runs on the fold engine"),
    ("\\w+\u00e9", "\\w is the C library's class"),
    ("\\b\u00e9", "anchor \\b"),
    ("(?<=a)\u00e9", "lookbehind"),
    ("(?<!a)b", "lookbehind"),
    ("(?<n>a)b", "named group"),
    ("(?=a)b", "positive lookahead"),
    ("(?i:\u00e9)", "inline flag (?i: (not ECMAScript)"),
    ("(?x)a", "inline flag (?x)"),
    ("(?>a+)\u00e9", "atomic group"),
    ("a?+a", "possessive quantifier"),  # a++ is a+ (possessive.py); this one has no greedy form
    ("a+?", "lazy quantifier"),
    ("(a)\\1", "back-reference"),
    ("[[:alpha:]]", "nested class, POSIX class"),
    ("[\\p{N}\u00e9]+|\\w+", "non-ASCII '\u00e9' runs on the fold engine"),  # \\w has no explicit form
    ("\\d+|\\w", "\\d is the fold engine's class"),
    ("\\p{Lu}+|\\w", "Unicode sub-category"),
    ("\\p{Han}+|\\w", "not a category the fold engine knows"),
    ("[a-z&&[^c]]|\\w", "class intersection"),
    ("\\u3000|\\w", "escape \\u3000"),
    ("[\\S\u00e9]", "\\S inside a class"),
    ("\\h", "escape \\h"),
    ("[a", "unterminated class"),
])
def test_constructs_without_an_exact_form_are_reported(pattern, reason):
    _, why = for_runtime(pattern)
    assert any(reason in w for w in why), why


@pytest.mark.parametrize("pattern", ["\\s+", "\u00e9+?", "(?=a)\u00e9", "(a)\\1\u00e9", "\\u00e9\u00e9", "[\u00e9-\u00ff]+",
                                     "(?i:'s|'t)|\\p{L}+", " (?![\\s\\S])",
                                     # with explicit ranges (lower/explicit.py)
                                     "[\\p{N}\u00e9]+", "\\p{L}|\u00e9", "\\d+", "\\p{Lu}+", "\\p{Han}+", "[a-z&&[^c]]",
                                     "\\u3000"])
def test_exact_constructs_are_not_reported(pattern):
    assert for_runtime(pattern)[1] == []


@needs_corpus
@needs_mnn
def test_rewritten_patterns_match_hf_on_the_runtime(tmp_path):
    """Each rewrite on the real runtime: $ and \\z/\\Z on the fold engine; \\s, \\S and . under
    std::wregex (the non-ASCII literal keeps each of those patterns there)."""
    patterns = ["\\p{N}+$", "\\s+$", "[!-/]+\\z", "x\\Z", "\\s?[A-Za-z\u00e9]+", "\\S+\u3002", "\u00e9.|[\u4e00-\u9fff]+"]
    texts = TEXTS + ["x", "ax\n", "x\n\n", "!!", "a!!\n", "\u00e9\u2028\u00e9\r\u00e9a", "\u3000\u3002 \u4e2d\u6587\u3002",
                     "12  \n34 \n56"]
    differ, lw = runtime_differs(tmp_path, patterns, texts)
    assert not differ
    assert "regex-rewrite" in lw.applied
    assert not [x for x in lw.losses if x.code == "regex-unsupported"]


@needs_corpus
@needs_mnn
def test_no_exact_form_shows_on_the_runtime(tmp_path):
    """What the reported constructs cost, on the runtime: a non-ASCII literal beside \\p{..} matches
    its whole category (`é` = every non-ASCII letter), `^` is a literal caret, `\\w` under std::wregex is
    ASCII (a lookbehind and \\w have no explicit form, so these stay as written)."""
    cases = [("[\\p{N}\u00e9]+|(?<=q)q", " \u00fcber"), ("^a", "aa"), ("\\w+|\u00e9", " \u0663\u0664")]
    for pattern, text in cases:
        assert for_runtime(pattern)[1]
        (tmp_path / pattern.encode().hex()).mkdir()
        differ, _ = runtime_differs(tmp_path / pattern.encode().hex(), [pattern], [text])
        assert differ == [text], pattern


@needs_corpus
@needs_mnn
def test_deepseek_llm_patterns_are_exact_on_the_runtime():
    """DeepSeek-LLM (GGUF): its punctuation-run and letter patterns stay on std::wregex with \\s
    spelled out, its `\\s+$` gets a real end-of-line; no regex loss, and the runtime's raw ids equal
    HF's on the built-in corpus, the code/JSON strings above and the llama.cpp strings."""
    tok = read_gguf(CORPUS / "gguf/ggml-vocab-deepseek-llm.gguf")
    low, lw = lower(tok, TARGETS["mnn-3.6"])
    assert not [x for x in lw.losses if x.code == "regex-unsupported"]
    texts = [s.text for s in builtin_corpus() if "\x00" not in s.text] + TEXTS
    inp = (CORPUS / "testvectors/ggml-vocab-deepseek-llm.gguf.inp").read_text(encoding="utf-8")
    texts += inp.split("\n__ggml_vocab_test__\n")[:-1]
    hf = hf_from_ir(tok)
    prefix = [hf.token_to_id("<\uff5cbegin\u2581of\u2581sentence\uff5c>")]
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "tokenizer.mtok"
        path.write_bytes(write_mtok(low))
        got = run_runtime(path, texts=texts).encodes
    wrong = [t for t, g in zip(texts, got) if g != prefix + hf.encode(t, add_special_tokens=False).ids]
    assert not wrong, wrong[:3]


@pytest.mark.parametrize("pattern, written", [
    ("[\\x01\\x02a]?[b]+", "[a]?[b]+"),
    ("[^\\x07 ]+", "[^ ]+"),
    ("[-\\x03x]", "[-x]"),
    ("[\\x01]", "[\\x01]"),  # nothing else in the class: kept (an empty class is no class)
    ("[\\x01-\\x05b]", "[\\x01-\\x05b]"),  # a range end is not a single member
    ("[a-\\x03]", "[a-\\x03]"),
    ("\\x01|[\\x08]", "\\x01|[\\x08]"),  # outside a class, and other controls: as written
])
def test_fold_marker_members_are_left_out(pattern, written):
    assert for_runtime(pattern) == (written, [])


@needs_corpus
@needs_mnn
def test_fold_marker_members_admit_no_non_ascii_on_the_runtime(tmp_path):
    """On the fold engine \\x01-\\x07 in a class also stood for every non-ASCII character of a
    category: the legacy type-3 pattern's optional letter-run prefix, which lists them, made
    "naïve" one piece ("ïve") where HF (and MNN 3.4.1 on the type-3 file) split "ï" off."""
    prefix = "[\\x00\\x01\\x02\\x03\\x04\\x05\\x06\\x07\\x08 -/]?[A-Za-z]+| ?[^\\sA-Za-z0-9]+|\\s+"
    texts = ["naïve café", "Zürich", "日本go", "a-b (c)"]
    differ, lw = runtime_differs(tmp_path, [prefix], texts)
    assert differ == []
    assert any(x.code == "regex-control" for x in lw.losses)  # what is left: input \x01-\x07 itself
