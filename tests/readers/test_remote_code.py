"""tiktoken repositories whose split regex and special tokens are in their `tokenization_*.py`,
read statically (`readers/remote_code.py`): Qwen-1's real file (from the installed qwen-agent, which
`make setup` installs) beside the corpus ranks gives the IR the verified known-vocabulary entry gives; small
files in the shapes of Kimi-K2, GLM-4 and Llama-3 code; nothing is executed; every value that is
not a literal is named in the error.  Also the known-vocabulary table's Whisper entry against
openai-whisper's own `get_encoding()` (sdist fetched at test time)."""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path

import pytest

from mtok_export.job_options import ReadOptions
from mtok_export.errors import InputError
from mtok_export.formats import classify, read_source
from mtok_export.readers.remote_code import read_code
from mtok_export.readers.tiktoken import read_tiktoken
from mtok_export.corpus import builtin_corpus
from mtok_export.verify.reference_tiktoken import tiktoken_reference

from tests.support.installed import package_file

REPO = Path(__file__).resolve().parents[2]
QWEN = REPO.parent / "shared/corpus/tokenizers/qwen-7b_tiktoken/qwen.tiktoken"
pytestmark = pytest.mark.skipif(not QWEN.is_file(), reason="shared corpus not present")


def _unknown_copy(tmp_path: Path) -> Path:
    """The Qwen ranks with one more blank line: same ranks, a sha256 the known table does not hold."""
    p = tmp_path / "qwen.tiktoken"
    p.write_bytes(QWEN.read_bytes() + b"\n")
    return p


@pytest.mark.runtime
def test_qwen_code_gives_the_known_entry(tmp_path):
    code = package_file("qwen-agent", "qwen_agent/utils/tokenization_qwen.py")
    shutil.copy(code, tmp_path / "tokenization_qwen.py")
    assert classify(tmp_path / "tokenization_qwen.py").name == "remote-code"
    tok = read_source(_unknown_copy(tmp_path))
    known = read_tiktoken(QWEN)
    assert tok.pre_tokenizer == known.pre_tokenizer
    assert tok.added_tokens == known.added_tokens and len(tok.added_tokens) == 208
    assert tok.model == known.model
    assert "split regex from qwen-7b_tiktoken/tokenization_qwen.py:28 (PAT_STR)".replace(
        "qwen-7b_tiktoken", tmp_path.name) in tok.meta.notes
    assert f"special tokens from {tmp_path.name}/tokenization_qwen.py:77 (special_tokens)" in tok.meta.notes


@pytest.mark.runtime
def test_without_code_the_unknown_copy_is_refused(tmp_path):
    with pytest.raises(InputError, match="unknown vocabulary .* give the split regex"):
        read_source(_unknown_copy(tmp_path))


KIMI_LIKE = '''
import tiktoken
from typing import Dict

class TikTokenTokenizer:
    special_tokens: Dict[str, int]
    num_reserved_special_tokens = 256
    pat_str = "|".join(
        [
            r"""[\\p{Han}]+""",
            r"""\\p{N}{1,3}""",
            r"""\\s+(?!\\S)""",
            r"""\\s+""",
        ]
    )

    def __init__(self, vocab_file):
        self.model = tiktoken.Encoding(name="x", pat_str=self.pat_str, mergeable_ranks={}, special_tokens={})
'''

GLM_LIKE = '''
import tiktoken

class ChatGLM4Tokenizer:
    def __init__(self, vocab_file):
        self.pat_str = "(?i:'s|'t)|\\\\p{N}{1,3}|\\\\s+"
        special_tokens = ["<|endoftext|>", "[MASK]", "[gMASK]"]
        self.special_tokens = {}
        for token in special_tokens:
            self.special_tokens[token] = len(self.special_tokens)
'''

LLAMA3_LIKE = '''
import tiktoken

class Tokenizer:
    num_reserved_special_tokens = 8
    pat_str = r"(?i:'s|'t|'re)|\\p{L}+|\\s+"

    def __init__(self, path):
        mergeable_ranks = load_tiktoken_bpe(path)
        num_base_tokens = len(mergeable_ranks)
        special_tokens = [
            "<|begin_of_text|>",
            "<|end_of_text|>",
        ] + [f"<|reserved_special_token_{i}|>" for i in range(2, self.num_reserved_special_tokens)]
        self.special_tokens = {token: num_base_tokens + i for i, token in enumerate(special_tokens)}
'''


def _py(tmp_path, text: str) -> Path:
    p = tmp_path / "tokenization_x.py"
    p.write_text(text, encoding="utf-8")
    return p


def test_kimi_shape_join_at_class_level(tmp_path):
    facts = read_code(_py(tmp_path, KIMI_LIKE))
    assert facts.pattern.value == r"[\p{Han}]+|\p{N}{1,3}|\s+(?!\S)|\s+"
    assert facts.pattern.where == "tokenization_x.py:8 (pat_str)"
    assert facts.special is None


def test_glm_shape_self_attribute(tmp_path):
    facts = read_code(_py(tmp_path, GLM_LIKE))
    assert facts.pattern.value == r"(?i:'s|'t)|\p{N}{1,3}|\s+"
    assert facts.pattern.where == "tokenization_x.py:6 (pat_str)"
    assert facts.special.value == ["<|endoftext|>", "[MASK]", "[gMASK]"]  # ids follow the ranks


def test_llama3_shape_list_plus_range_comprehension(tmp_path):
    facts = read_code(_py(tmp_path, LLAMA3_LIKE))
    assert facts.special.value == ["<|begin_of_text|>", "<|end_of_text|>",
                                   *(f"<|reserved_special_token_{i}|>" for i in range(2, 8))]
    assert facts.special.where == "tokenization_x.py:11 (special_tokens)"
    assert any("special_tokens: BinOp of int" in s or "num_base_tokens is not bound" in s for s in facts.skipped)


def test_code_is_never_executed(tmp_path):
    marker = tmp_path / "ran"
    _py(tmp_path, f"import tiktoken\nopen({str(marker)!r}, 'w').write('x')\n"
                  f"PAT_STR = open({str(marker)!r}).read()\nclass T:\n    pass\n")
    facts = read_code(tmp_path / "tokenization_x.py")
    assert not marker.exists()
    assert facts.pattern is None
    assert [x[:44] for x in facts.skipped] == ["tokenization_x.py:3 PAT_STR: a call to open("]


@pytest.mark.runtime
def test_unreadable_value_is_named_in_the_error(tmp_path):
    ranks = _unknown_copy(tmp_path)
    _py(tmp_path, "import tiktoken\nimport os\nPAT_STR = os.environ['PAT']\nclass T:\n    pass\n")
    with pytest.raises(InputError, match=r"give the split regex .*; the repository code could not be read "
                                         r"statically: tokenization_x.py:3 PAT_STR: Subscript is not a literal$"):
        read_source(ranks)


def test_invalid_python(tmp_path):
    _py(tmp_path, "import tiktoken\ndef f(:\n")
    with pytest.raises(InputError, match="tokenization_x.py: not valid Python"):
        read_code(tmp_path / "tokenization_x.py")


@pytest.mark.runtime
def test_arguments_and_configs_win_over_code(tmp_path):
    ranks = _unknown_copy(tmp_path)
    _py(tmp_path, KIMI_LIKE)
    tok = read_source(ranks, ReadOptions(pattern=r"\s+|\S+", special={}))
    assert "split regex from the pattern argument" in tok.meta.notes


# ------------------------------------------------------------------ Kimi-K2: the module auto_map names is not there


def _kimi_folder(tmp_path: Path, *, specials: bool = True) -> Path:
    """A Kimi-K2-shaped download: `tiktoken.model` (ranks of no known vocabulary) and a
    tokenizer_config.json whose auto_map names `tokenization_kimi.TikTokenTokenizer`, without that module."""
    import json

    src = tmp_path / "kimi"
    src.mkdir()
    (src / "tiktoken.model").write_bytes(_unknown_copy(tmp_path).read_bytes())
    cfg = {"tokenizer_class": "TikTokenTokenizer", "auto_map": {"AutoTokenizer": ["tokenization_kimi.TikTokenTokenizer", None]}}
    if specials:
        cfg["added_tokens_decoder"] = {"151643": {"content": "[BOS]", "special": True, "normalized": False,
                                                  "lstrip": False, "rstrip": False, "single_word": False}}
    (src / "tokenizer_config.json").write_text(json.dumps(cfg), encoding="utf-8")
    return src


@pytest.mark.parametrize("specials", [True, False])
def test_kimi_without_its_module_names_what_is_missing(tmp_path, specials):
    src = _kimi_folder(tmp_path, specials=specials)
    with pytest.raises(InputError) as e:
        read_source(src)
    msg = str(e.value)
    assert "tokenizer_config.json beside it holds no split regex" in msg
    assert "no tokenizer.json / tokenizer_config.json beside it" not in msg  # the old message's claim was false
    assert ("and no special tokens" in msg) is not specials and ("the special tokens (special=" in msg) is not specials
    assert "auto_map names tokenization_kimi.py (class TikTokenTokenizer)" in msg
    assert "put tokenization_kimi.py from the model repository beside it" in msg
    assert "--pattern and --special" in msg


def test_kimi_with_its_module_beside_reads_the_pattern(tmp_path):
    """The fix the message names: the module beside the rank file, read statically."""
    src = _kimi_folder(tmp_path)
    (src / "tokenization_kimi.py").write_text(KIMI_LIKE, encoding="utf-8")
    tok = read_source(src)
    assert tok.pre_tokenizer.pretokenizers[0].pattern.value == r"[\p{Han}]+|\p{N}{1,3}|\s+(?!\S)|\s+"
    assert "split regex from kimi/tokenization_kimi.py:8 (pat_str)" in tok.meta.notes


def test_kimi_with_the_flags_reads(tmp_path):
    """The other fix it names: --pattern (the specials come from the config)."""
    tok = read_source(_kimi_folder(tmp_path), ReadOptions(pattern=r"\s+|\S+"))
    assert "split regex from the pattern argument" in tok.meta.notes
    assert [t.content for t in tok.added_tokens] == ["[BOS]"]


def test_kimi_cli_exits_2_naming_the_module(tmp_path):
    import subprocess
    import sys

    src = _kimi_folder(tmp_path)
    code = "import sys; from mtok_export.cli import export_main; sys.argv[0] = 'mtok-export'; export_main()"
    done = subprocess.run([sys.executable, "-c", code, "--path", str(src), "--output", str(tmp_path / "o")],
                          capture_output=True, text=True, stdin=subprocess.DEVNULL, cwd=REPO)
    assert done.returncode == 2, done.stderr
    err = " ".join((done.stdout + done.stderr).split())
    assert "tokenization_kimi.py" in err and "Traceback" not in err and not (tmp_path / "o").exists()


# ------------------------------------------------------------------ known table: Whisper


@pytest.mark.runtime
def test_whisper_multilingual_known_entry_equals_get_encoding(tmp_path):
    ranks = package_file("openai-whisper", "whisper/assets/multilingual.tiktoken")
    source = package_file("openai-whisper", "whisper/tokenizer.py")
    (tmp_path / "assets").mkdir()
    shutil.copy(ranks, tmp_path / "assets/multilingual.tiktoken")
    shutil.copy(source, tmp_path / "tokenizer.py")
    spec = importlib.util.spec_from_file_location("whisper_tokenizer", tmp_path / "tokenizer.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # openai-whisper's own code, the reference
    enc = module.get_encoding("multilingual")
    tok = read_source(ranks)
    assert {t.content: t.id for t in tok.added_tokens} == enc._special_tokens
    pattern = tok.pre_tokenizer.pretokenizers[0].pattern.value
    assert pattern == enc._pat_str
    texts = [s.text for s in builtin_corpus()][:200]
    from mtok_export.verify.reference_tiktoken import hf_from_ir
    hf = hf_from_ir(tok)
    ref = tiktoken_reference(ranks, pattern, enc._special_tokens, texts)
    assert [e.ids for e in hf.encode_batch(texts, add_special_tokens=False)] == ref.raw
