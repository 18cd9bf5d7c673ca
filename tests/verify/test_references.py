"""The independent reference of every input format (`verify/references.py`, DESIGN section 4):
which one each corpus example gets (never our own reading where a library runs), the CLIP layouts
that used to pass against our reading, the self-check refusal, the identity check of `mtok verify`,
and the reader mutation test: deliberately broken readers must each fail verification against the
independent reference, while the honest readers pass."""

from __future__ import annotations

import dataclasses
import gzip
import json
import shutil
import sys
from pathlib import Path

import pytest

from mtok_export import formats
from mtok_export.errors import IdentityError, InputError, LossError, UnsupportedError, VerificationError
from mtok_export.export import export
from mtok_export.formats import read_source
from mtok_export.ir import normalizers as N
from mtok_export.ir.tokenizer import NO_CHAT
from mtok_export.job import Job, VerifyOptions
from mtok_export.job_options import ReadOptions
from mtok_export.policy import Policy
from mtok_export.readers import bert_vocab, gguf, gpt2_files, openai_bpe, tekken
from mtok_export.verify.pipeline import prepare
from mtok_export.verify.reference import ReferenceUnavailable
from mtok_export.verify.references import choose, clip_module
from tests.support.verify_jobs import CORPUS_ONLY

REPO = Path(__file__).resolve().parents[2]
SHARED = REPO.parent / "shared/corpus"
CORPUS = SHARED / "tokenizers"
pytestmark = pytest.mark.skipif(not CORPUS.is_dir(), reason="shared corpus not present")


def _tekken() -> Path:
    import mistral_common

    return Path(mistral_common.__file__).parent / "data" / "tekken_240718.json"


def _clip_gz() -> Path:
    return Path(clip_module().__file__).parent / "bpe_simple_vocab_16e6.txt.gz"


@pytest.fixture(scope="module")
def clip_pair(tmp_path_factory) -> Path:
    """OpenAI CLIP's vocabulary as the HF hub's openai/clip-* repositories ship it (vocab.json +
    merges.txt), written from OpenAI's own SimpleTokenizer (its encoder and its merges), no config."""
    st = clip_module().SimpleTokenizer(str(_clip_gz()))
    d = tmp_path_factory.mktemp("clip-pair")
    (d / "vocab.json").write_text(json.dumps(st.encoder, ensure_ascii=False), encoding="utf-8")
    lines = gzip.decompress(_clip_gz().read_bytes()).decode("utf-8").split("\n")[1:1 + openai_bpe.CLIP_MERGES]
    (d / "merges.txt").write_text("#version: 0.2\n" + "\n".join(lines) + "\n", encoding="utf-8")
    return d


def _copy(tmp_path: Path, *files: Path, names: tuple[str, ...] = ()) -> Path:
    d = tmp_path / "src"
    d.mkdir()
    for i, f in enumerate(files):
        shutil.copy(f, d / (names[i] if i < len(names) else f.name))
    return d


# ------------------------------------------------------------------ which reference each format gets

@pytest.mark.runtime
@pytest.mark.parametrize("case, files, names, name, detail", [
    ("tokenizer.json", ["qwen2.5-instruct/tokenizer.json"], (), "tokenizers", ""),
    ("tokenizer.json renamed", ["falcon-7b/tokenizer.json"], ("20B_tokenizer.json",), "tokenizers", ""),
    ("vocab.json + merges.txt", ["gpt2/vocab.json", "gpt2/merges.txt", "gpt2/tokenizer_config.json"], (),
     "transformers", "GPT2Tokenizer: tokenizer_class in tokenizer_config.json"),
    ("encoder.json + vocab.bpe", ["gpt2/vocab.json", "gpt2/merges.txt"], ("encoder.json", "vocab.bpe"),
     "transformers", "GPT2Tokenizer: no config names a class: GPT-2's"),
    ("roberta, no config", ["roberta-base/vocab.json", "roberta-base/merges.txt"], (), "transformers",
     "RobertaTokenizer: no config names a class"),
    ("vocab.txt", ["bert-base-uncased/vocab.txt"], (), "transformers",
     "BertTokenizer: no config names a class: a vocab.txt is BERT's; uncased: decided from the vocabulary"),
    ("sentencepiece", ["llama2-7b-hf/tokenizer.model"], (), "sentencepiece", ""),
    ("tiktoken", ["qwen-7b_tiktoken/qwen.tiktoken"], (), "tiktoken", "pattern and special tokens"),
    ("GGUF", ["../gguf/ggml-vocab-gpt-2.gguf"], (), "gguf", "llama.cpp, vocabulary only"),
])
def test_reference_of_each_format(tmp_path, case, files, names, name, detail):
    src = _copy(tmp_path, *(CORPUS / f for f in files), names=names)
    chosen = choose(read_source(src))
    assert (chosen.name, chosen.self_check) == (name, False)
    assert chosen.detail.startswith(detail)
    assert chosen.library.split()[0] in ("tokenizers", "transformers", "sentencepiece", "tiktoken", "llama-cpp-python")


@pytest.mark.runtime
def test_reference_of_tekken_and_clip(clip_pair):
    assert choose(read_source(_tekken())).library.startswith("mistral_common ")
    gz = choose(read_source(_clip_gz()))
    assert (gz.name, gz.detail) == ("clip", "OpenAI CLIP's SimpleTokenizer")
    pair = choose(read_source(clip_pair))
    assert pair.detail.startswith("CLIPTokenizer: no config names a class: the vocabulary's tokens end in </w>")


def test_bert_casing_from_the_vocabulary(tmp_path):
    """A cased vocab.txt (upper-case letters outside the [SPECIALS]) gets a cased BertTokenizer."""
    words = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "Hello", "hello", "H", "h", "##ello"]
    (tmp_path / "vocab.txt").write_text("\n".join(words) + "\n", encoding="utf-8")
    chosen = choose(read_source(tmp_path))
    assert "cased: decided from the vocabulary" in chosen.detail and "uncased" not in chosen.detail
    ref = chosen.run(["Hello hello"], [])
    assert ref.raw == [[5, 6]]


@pytest.mark.runtime
def test_a_reference_that_cannot_run_is_a_self_check(tmp_path, monkeypatch):
    """Without llama.cpp, GGUF's reference cannot run: the export is refused by default as
    reference-unavailable, accepting it ships the file, and the manifest says it was a self-check."""
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda n, *a: None if n == "llama_cpp" else real(n, *a))
    gguf = SHARED / "gguf/ggml-vocab-gpt-2.gguf"
    with pytest.raises(LossError) as e:
        export(Job(gguf, read=ReadOptions(chat_template=NO_CHAT), verify=VerifyOptions(sweep=False)), tmp_path / "a")
    assert [d.code for d in e.value.decisions if not d.accepted] == ["reference-unavailable"]
    assert e.value.result.verify.reference["self_check"] is True
    r = export(Job(gguf, read=ReadOptions(chat_template=NO_CHAT), policy=Policy.from_options(["reference-unavailable"])), tmp_path / "b")
    ref = r.manifest["verification"]["reference"]
    assert (ref["name"], ref["library"], ref["self_check"]) == ("self-check", "none", True)
    assert r.manifest["verification"]["checks"]["raw ids"]["reference"] == "none (self-check)"


@pytest.mark.runtime
def test_unavailable_reference_names_the_install(monkeypatch):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda n, *a: None if n == "mistral_common" else real(n, *a))
    with pytest.raises(ReferenceUnavailable) as e:
        choose(read_source(_tekken()))
    assert (e.value.why, e.value.install) == ("mistral_common is not installed", "pip install 'mtok-export[references]'")


def test_unavailable_clip_reference_names_the_extra(monkeypatch):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.delitem(sys.modules, "mtok_clip_simple_tokenizer", raising=False)
    monkeypatch.setattr(importlib.util, "find_spec", lambda n, *a: None if n == "clip" else real(n, *a))
    with pytest.raises(ReferenceUnavailable) as e:
        clip_module()
    assert e.value.install.startswith("pip install 'mtok-export[references]'")


def test_the_references_extra_brings_the_references_that_need_no_compiler():
    """pyproject's `references` extra names the distributions of the tekken and CLIP references (and
    the test extra brings it), so `pip install 'mtok-export[references]'` is the install command."""
    import tomllib

    project = tomllib.loads((Path(__file__).resolve().parents[2] / "pyproject.toml").read_text())["project"]
    extras = project["optional-dependencies"]
    names = {r.split("==")[0] for r in extras["references"]}
    assert {"mistral_common", "openai-clip", "ftfy", "regex"} <= names
    assert "mtok-export[references]" in extras["test"]


# ------------------------------------------------------------------ CLIP: the case that used to pass

def test_clip_pair_reference_is_transformers_clip(clip_pair):
    from transformers import CLIPTokenizer

    ref = choose(read_source(clip_pair)).run(["a photo of a cat"], [])
    assert ref.raw == [[320, 1125, 539, 320, 2368]]  # the CLIPTokenizer ids
    assert ref.raw == [CLIPTokenizer.from_pretrained(str(clip_pair))("a photo of a cat",
                                                                      add_special_tokens=False)["input_ids"]]


@pytest.mark.runtime
@pytest.mark.parametrize("layout", ["pair", "openai names", "gz"])
def test_clip_layouts_are_refused_with_named_losses(clip_pair, tmp_path, layout):
    """Every CLIP layout reads as CLIP's pipeline; the runtime cannot run `</w>`, so the export is
    refused naming it (exit 3), never "verify passed" with GPT-2's reading."""
    if layout == "gz":
        src = _copy(tmp_path, _clip_gz())
    else:
        names = ("clip_encoder.json", "clip_vocab.bpe") if layout == "openai names" else ()
        src = _copy(tmp_path, clip_pair / "vocab.json", clip_pair / "merges.txt", names=names)
    with pytest.raises(LossError) as e:
        export(Job(src, verify=VerifyOptions(sweep=False)), tmp_path / "out")
    assert e.value.result.verify.ok  # every mismatch reproduced by a named loss
    decided = {d.code: d for d in e.value.decisions}
    assert not decided["bpe-field"].accepted
    # CLIP's decode differs too, but its text tower never decodes (the usage, issue 39)
    assert decided["clip-decode"].accepted_by == "usage" and "CLIP" in decided["clip-decode"].why
    assert not (tmp_path / "out/tokenizer.mtok").exists()


# ------------------------------------------------------------------ identity: the file is what the source gives

@pytest.fixture
def exported(tmp_path) -> tuple[Path, Path]:
    src = _copy(tmp_path, CORPUS / "gpt2/tokenizer.json")
    export(Job(src, policy=Policy(allow_lossy=True), verify=None), tmp_path / "out")
    return src, tmp_path / "out/tokenizer.mtok"


def test_identity_holds_for_an_untouched_export(exported):
    src, out = exported
    manifest, *_ = prepare(out)
    assert manifest["source"] == str(src.resolve())


@pytest.mark.runtime
def test_identity_names_a_changed_source(exported):
    src, out = exported
    data = json.loads((src / "tokenizer.json").read_text(encoding="utf-8"))
    data["added_tokens"].append({"id": 50257, "content": "<|new|>", "single_word": False, "lstrip": False,
                                 "rstrip": False, "normalized": False, "special": True})
    (src / "tokenizer.json").write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(IdentityError) as e:
        prepare(out)
    assert e.value.exit_code == 1
    assert f"{src / 'tokenizer.json'} changed since the export" in str(e.value)
    assert "'<|new|>' 50257 is in what the source gives, not in the file" in str(e.value)


@pytest.mark.runtime
def test_identity_names_a_renamed_rare_token(exported, tmp_path):
    """A file exported from a copy with one rare entry renamed, verified against the original."""
    src, _ = exported
    copy = tmp_path / "copy"
    copy.mkdir()
    data = json.loads((src / "tokenizer.json").read_text(encoding="utf-8"))
    vocab = data["model"]["vocab"]
    rare = next(t for t, i in vocab.items() if i == 50000)
    vocab[rare + "X"] = vocab.pop(rare)
    data["model"]["merges"] = [m for m in data["model"]["merges"] if "".join(m.split(" ") if isinstance(m, str)
                                                                              else m) != rare]
    (copy / "tokenizer.json").write_text(json.dumps(data), encoding="utf-8")
    export(Job(copy, policy=Policy(allow_lossy=True), verify=None), tmp_path / "renamed")
    with pytest.raises(IdentityError, match=r"section vocab differs first \(1 added, 1 removed\)") as e:
        prepare(tmp_path / "renamed/tokenizer.mtok", against=src)
    assert repr(rare) + " 50000 is in what the source gives" in str(e.value)


@pytest.mark.runtime
def test_identity_names_an_edited_file(exported):
    src, out = exported
    data = bytearray(out.read_bytes())
    i = data.index(b"<|endoftext|>")
    data[i + 2:i + 5] = b"END"  # same length: the strict reader still accepts the file
    out.write_bytes(bytes(data))
    with pytest.raises(IdentityError, match="differs first"):
        prepare(out)


# ------------------------------------------------------------------ reader invariants

def test_merges_must_name_vocabulary_tokens(tmp_path):
    data = json.loads((CORPUS / "gpt2/tokenizer.json").read_text(encoding="utf-8"))
    data["model"]["merges"][7] = "Ġt qqqzz"
    (tmp_path / "tokenizer.json").write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises((InputError, UnsupportedError), match=r"\$\.model\.merges\[7\].*'qqqzz', which is not in"):
        read_source(tmp_path)


# ------------------------------------------------------------------ the reader mutation test

# The exports below leave the sweep out (the corpus kills every mutant; the sweep has its own test
# at the end): with it, CLIP's pure-Python reference and tekken's 131k vocabulary cost minutes of CI.


def _replace_model(tok, **changes):
    return dataclasses.replace(tok, model=dataclasses.replace(tok.model, **changes))


def _wrap(monkeypatch, module, name, mutate, calls: list | None = None):
    real = getattr(module, name)

    def broken(*a, **k):
        if calls is not None:
            calls.append(name)
        return mutate(real(*a, **k))
    monkeypatch.setattr(module, name, broken)


def _no_lowercase(tok):
    seq = tok.normalizer
    return dataclasses.replace(tok, normalizer=dataclasses.replace(
        seq, normalizers=tuple(n for n in seq.normalizers if not isinstance(n, N.Lowercase))))


def _flip_bert_casing(tok):
    n = tok.normalizer
    return dataclasses.replace(tok, normalizer=dataclasses.replace(n, lowercase=not n.lowercase))


def _rotate_specials(parsed):
    """tekken's special ranks shifted by one (the reader's special count read one off); the one
    finishing derives the header and stop ids from the moved tokens."""
    s = len(parsed.added)
    moved = lambda i: (i + 1) % s if i < s else i  # noqa: E731
    added = tuple(dataclasses.replace(t, id=moved(t.id)) for t in parsed.added)
    post = parsed.post_processor
    post = dataclasses.replace(post, special_tokens=tuple(dataclasses.replace(t, ids=tuple(map(moved, t.ids)))
                                                          for t in post.special_tokens))
    return dataclasses.replace(parsed, added=added, post_processor=post)


MUTANTS = {
    # (input, module, function, mutation)
    "clip-suffix-dropped": ("gz", openai_bpe, "clip_tokenizer", lambda t: _replace_model(t, end_of_word_suffix="")),
    "clip-lowercase-dropped": ("gz", openai_bpe, "clip_tokenizer", _no_lowercase),
    "bert-casing-flipped": ("vocab.txt", bert_vocab, "parse_bert_vocab", _flip_bert_casing),
    "merges-one-line-off": ("vocab.json", gpt2_files, "read_merges_txt", lambda m: m[1:]),
    "tekken-special-ranks-shifted": ("tekken", tekken, "parse_tekken", _rotate_specials),
    # the GGUF token types ignored: control and user-defined tokens read as ordinary vocabulary
    "gguf-token-types-ignored": ("gguf", gguf, "_added", lambda added: ()),
    # BERT's lowercasing lost: llama.cpp's own departures (the `gguf-wpm` reader difference, which
    # the honest reading records) must not explain a reader bug
    "gguf-bert-casing-flipped": ("gguf-bert", gguf, "_wordpiece", _flip_bert_casing),
}


def _input(kind: str, tmp_path: Path) -> Path:
    if kind == "gz":
        return _copy(tmp_path, _clip_gz())
    if kind == "vocab.txt":
        return _copy(tmp_path, CORPUS / "bert-base-uncased/vocab.txt")
    if kind == "vocab.json":
        return _copy(tmp_path, *(CORPUS / "gpt2" / f for f in ("vocab.json", "merges.txt", "tokenizer_config.json")))
    if kind == "gguf":
        return SHARED / "gguf/ggml-vocab-llama-bpe.gguf"
    if kind == "gguf-bert":
        return SHARED / "gguf/ggml-vocab-bert-bge.gguf"
    return _tekken()


@pytest.mark.runtime
@pytest.mark.parametrize("kind", sorted({k for k, *_ in MUTANTS.values()}))
def test_honest_readers_pass(kind, tmp_path):
    # allow_crash: what a reader reads is the question, not whether a long run crashes the runtime
    r = export(Job(_input(kind, tmp_path), policy=Policy(allow_lossy=True, allow_crash=True),
                   verify=VerifyOptions(sweep=False)), tmp_path / "out")
    assert r.verify.ok and not r.verify.reference.get("self_check")


@pytest.mark.runtime
@pytest.mark.parametrize("mutant", sorted(MUTANTS))
def test_broken_readers_are_killed(mutant, tmp_path, monkeypatch):
    kind, module, name, mutate = MUTANTS[mutant]
    calls: list[str] = []  # a mutant of a function the export no longer calls would pass unnoticed
    _wrap(monkeypatch, module, name, mutate, calls)
    if module is openai_bpe:  # the reader calls it by its module global; gpt2_files imported it by name
        _wrap(monkeypatch, gpt2_files, name, mutate, calls)
    with pytest.raises(VerificationError) as e:
        export(Job(_input(kind, tmp_path), policy=Policy(allow_lossy=True, allow_crash=True),
                   verify=VerifyOptions(sweep=False)), tmp_path / "out")
    assert calls and e.value.result.verify.unexplained > 0


# ------------------------------------------------------------------ the vocabulary sweep

@pytest.mark.runtime
def test_sweep_finds_what_the_corpus_misses(tmp_path):
    """Two rare tokens with their ids swapped in the file: the 470-string corpus never reaches them,
    the sweep (each token's own text) does, and no loss explains it."""
    from mtok_export.corpus import builtin_corpus
    from mtok_export.lower import lower
    from mtok_export.mtok import write_mtok
    from mtok_export.targets import DEFAULT, TARGETS
    from mtok_export.verify.check import VerifyJob, verify

    src = _copy(tmp_path, CORPUS / "gpt2/tokenizer.json")
    tok = read_source(src)
    low, lw = lower(tok, TARGETS[DEFAULT])
    vocab = dict(low.model.vocab)
    names = {i: t for t, i in vocab.items()}
    a, b = names[50000], names[50001]
    vocab[a], vocab[b] = 50001, 50000
    path = tmp_path / "tokenizer.mtok"
    path.write_bytes(write_mtok(_replace_model(low, vocab=vocab)))
    samples = list(builtin_corpus())
    job, reference = VerifyJob(tok, low, lw, samples, [], CORPUS_ONLY), choose(tok)
    assert verify(job, path, reference).ok  # the corpus alone passes the wrong file
    report = verify(dataclasses.replace(job, options=dataclasses.replace(CORPUS_ONLY, sweep=True)), path, reference)
    sweep = report.check("vocab sweep")
    assert sweep.total > 49000 and not report.ok
    assert {m.text for m in sweep.mismatches if not m.explanation} >= {
        t.replace("\u0120", " ") for t in (a, b)}  # the byte-level surfaces of the two tokens
