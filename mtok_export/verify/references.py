"""The independent reference of every input format (DESIGN section 4): the runners a format entry's
`Reference.runner` names (`choose_<library>`, run on the source files themselves).

A reference is the library the source was made for, never our reading of it: HF `tokenizers` on a
tokenizer.json (whatever its name), the transformers class a `vocab.json` + `merges.txt` or a
`vocab.txt` was written for, OpenAI CLIP's own `SimpleTokenizer` on its merges `.gz`,
`sentencepiece`, `tiktoken`, `mistral_common`, llama.cpp's view of a GGUF, the MNN runtime a
`.mtok` or legacy `tokenizer.txt` was made for.  `choose(tok)` gives the `Chosen` reference of an
IR (from the format its provenance records); when the library cannot run here it raises
`ReferenceUnavailable`, and `choose_or_self_check` turns that into a self-check (HF built from our
own IR) that says so: a self-check proves nothing about the reader, so the export records it as the
loss `reference-unavailable`, which the policy refuses by default."""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from .. import cache
from ..formats import BY_NAME, Format, classify
from ..ir import normalizers as N
from ..ir import pre_tokenizers as P
from ..readers.formats.bert_vocab import BERT_VOCAB
from ..readers.formats.clip import CLIP_TOKENIZER
from ..readers.formats.gguf import LLAMA_CPP
from ..readers.formats.mnn import MNN_LEGACY, MNN_RUNTIME
from ..readers.formats.sentencepiece import SENTENCEPIECE_LIB
from ..readers.formats.tekken import MISTRAL_COMMON
from ..readers.formats.tiktoken import TIKTOKEN_LIB
from ..readers.formats.tiktoken_json import TIKTOKEN_JSON_LIB
from ..readers.formats.tokenizer_json import TOKENIZERS
from ..readers.formats import TRANSFORMERS
from ..readers.interpretation import FolderInterpretation, bert_casing, config_object, transformers_class
from .reference import CHUNK, Reference, ReferenceUnavailable, hf_encode_seconds, hf_raw_ids, hf_reference, run_hf
from . import mnn341
from .budget import STOP
from .reference_gguf import INSTALL as GGUF_INSTALL
from .reference_gguf import gguf_reference
from .reference_mistral import GENERATED, with_mistral_chats
from .reference_runtime import runtime_reference
from .reference_spm import spm_raw_ids, spm_reference
from .reference_tiktoken import hf_from_ir, js_ranks, nfc, tiktoken_reference


@dataclass(frozen=True)
class Chosen:
    """One source's reference: `run(texts, chats) -> Reference`, and what it is for the report."""

    run: Callable[[list, list], Reference] = field(repr=False, compare=False)
    name: str  # the `verify.references` name, e.g. "transformers"
    library: str  # "tokenizers 0.23.3"; "none" for a self-check
    files: tuple[str, ...]  # what it read
    detail: str = ""  # e.g. "CLIPTokenizer: no config names a class; the vocabulary's tokens end in </w>"
    chat: str = ""  # the library that renders the chat checks' prompts ("": none, those checks are skipped)
    unavailable: ReferenceUnavailable | None = field(default=None, compare=False)  # set: a self-check only
    # (texts, tell=None) -> raw ids only; `tell(done, total)` told as the encodes go
    raw: Callable[..., list] | None = field(default=None, repr=False, compare=False)
    # text -> seconds the library takes to encode it (loading not counted; the robustness phase's
    # comparison); None: not measured for this library
    timer: Callable[[str], float] | None = field(default=None, repr=False, compare=False)

    def raw_ids(self, texts: list[str], tell: Callable[[int, int], None] | None = None) -> list[list[int]]:
        """Ids without special tokens only (the vocabulary sweep): cheaper where the library allows;
        `tell(done, total)`: how far it is, where the library's encodes are counted; when it returns
        `budget.STOP` the library stops there and answers the texts done so far (a prefix of `texts`)."""
        if self.raw is None:
            return self.run(texts, []).raw
        return self.raw(texts, tell) if tell is not None else self.raw(texts)

    @property
    def self_check(self) -> bool:
        return self.unavailable is not None

    def describe(self) -> dict:
        out = {"name": self.name, "library": self.library, "files": list(self.files), "detail": self.detail,
               "chat": self.chat}
        if self.unavailable is not None:
            out.update(self_check=True, why=self.unavailable.why, install=self.unavailable.install)
        return out

    def line(self) -> str:
        """One line for a terminal: what the runtime was compared with."""
        if self.unavailable is not None:
            return f"reference: none, self-check only ({self.unavailable.why})"
        return f"reference: {self.library} ({self.detail})" if self.detail else f"reference: {self.library}"


# The command that installs every reference that needs no compiler (pyproject's `references` extra)
REFERENCES_INSTALL = "pip install 'mtok-export[references]'"


def _lib(dist: str) -> str:
    return f"{dist} {cache.version(dist)}"


def _need(module: str, dist: str, install: str | None = None) -> None:
    if importlib.util.find_spec(module) is None:
        raise ReferenceUnavailable(f"{dist} is not installed", install or f"pip install {dist}")


def _no_chats(ref: Reference, chats) -> Reference:
    ref.chat_text, ref.chat_ids = [None] * len(chats), [None] * len(chats)
    return ref


# ------------------------------------------------------------------ tokenizer.json: HF tokenizers

def choose_tokenizers(file: Path, tok) -> Chosen:
    _need("tokenizers", "tokenizers")
    run = lambda texts, chats: hf_reference(file.parent, texts, chats, template=tok.chat.text,  # noqa: E731
                                            tokenizer_file=file)
    # transformers renders the chats; their ids are the file's engine's, like every other check's
    return Chosen(run, TOKENIZERS.name, _lib("tokenizers"), (str(file),), "",
                  f"{_lib('transformers')}'s render, {_lib('tokenizers')}'s ids", raw=lambda texts, tell=None: hf_raw_ids(file, texts, tell),
                  timer=lambda text: hf_encode_seconds(file, text))


# ------------------------------------------------------------------ sentencepiece, tiktoken, tekken

def choose_sentencepiece(file: Path, tok) -> Chosen:
    _need("sentencepiece", "sentencepiece")
    meta = tok.meta
    run = lambda texts, chats: spm_reference(file, texts, add_bos=bool(meta.add_bos_token),  # noqa: E731
                                             add_eos=bool(meta.add_eos_token), chats=chats, tok=tok)
    raw = lambda texts, tell=None: spm_raw_ids(file, texts, tell)  # noqa: E731  the sweep's question: no decode, no normalizer
    if tok.chat.kind == GENERATED:  # a mistral_common SentencePiece file: mistral_common's chats
        spm = run
        run = lambda texts, chats: with_mistral_chats(spm(texts, []), file, tok, chats)  # noqa: E731
        return Chosen(run, SENTENCEPIECE_LIB.name, _lib("sentencepiece"), (str(file),), "",
                      _mistral_chat(tok, "jinja2"), raw=raw)
    return Chosen(run, SENTENCEPIECE_LIB.name, _lib("sentencepiece"), (str(file),), "", _lib("transformers"),
                  raw=raw)


def choose_tiktoken(file: Path, tok) -> Chosen:
    _need("tiktoken", "tiktoken")
    pre = tok.pre_tokenizer
    if not (isinstance(pre, P.Sequence) and pre.pretokenizers and isinstance(pre.pretokenizers[0], P.Split)):
        raise ReferenceUnavailable("the rank file's split pattern is not known", "pass --pattern")
    pattern = pre.pretokenizers[0].pattern.value
    specials = {t.content: t.id for t in tok.added_tokens}
    norm = nfc if isinstance(tok.normalizer, N.NFC) else None
    run = lambda texts, chats: _no_chats(tiktoken_reference(file, pattern, specials, texts,  # noqa: E731
                                                            normalize=norm), chats)
    # The ranks are tiktoken's own reading; the pattern and specials are not in the file (the
    # reader's notes say where each came from).
    return Chosen(run, TIKTOKEN_LIB.name, _lib("tiktoken"), (str(file),),
                  "pattern and special tokens as the export chose")


def choose_tiktoken_json(file: Path, tok) -> Chosen:
    _need("tiktoken", "tiktoken")
    ranks, pattern, specials = js_ranks(file)  # the file's own pattern and specials, never the export's
    norm = nfc if isinstance(tok.normalizer, N.NFC) else None
    run = lambda texts, chats: _no_chats(tiktoken_reference(file, pattern, specials, texts,  # noqa: E731
                                                            normalize=norm, ranks=ranks), chats)
    return Chosen(run, TIKTOKEN_JSON_LIB.name, _lib("tiktoken"), (str(file),),
                  "ranks as js-tiktoken reads bpe_ranks; the file's pat_str and special_tokens")


def choose_mistral_common(file: Path, tok) -> Chosen:
    _need("mistral_common", "mistral_common", REFERENCES_INSTALL)

    def run(texts, chats):
        from mistral_common.tokens.tokenizers.tekken import Tekkenizer  # optional (`references`): after _need

        tk = Tekkenizer.from_file(str(file))
        raw = [tk.encode(t, bos=False, eos=False) for t in texts]
        engine = [tk.encode(t, bos=True, eos=False) for t in texts]
        decoded = [_tekken_decode(tk, ids) for ids in raw]
        return with_mistral_chats(Reference(engine, raw, decoded, [], [], lambda s: s), file, tok, chats)

    def raw(texts, tell=None):  # the sweep's question: one encode per text instead of run's three (raw, engine, decode)
        from mistral_common.tokens.tokenizers.tekken import Tekkenizer  # optional (`references`): after _need

        digest = cache.key("reference-raw-tekken", files=[file], dists=("mistral_common",),
                           blobs=(cache.strings_blob(texts),))

        def compute() -> list:
            tk = Tekkenizer.from_file(str(file))
            out = []
            for k, t in enumerate(texts):
                if tell is not None and not k % CHUNK and tell(k, len(texts)) == STOP:  # the budget
                    break
                out.append(tk.encode(t, bos=False, eos=False))
            return out
        return cache.computed("reference-raw-tekken", digest, compute,
                              valid=lambda v: isinstance(v, list) and len(v) == len(texts))

    return Chosen(run, MISTRAL_COMMON.name, _lib("mistral_common"), (str(file),), "Tekkenizer", _mistral_chat(tok),
                  raw=raw)


def _mistral_chat(tok, text: str = "") -> str:
    """The chat checks' reference of a file whose template mistral_common generated: its own
    encode_chat_completion (`reference_mistral`; `text`: where the text comes from when not from
    it); "" for any other template."""
    if tok.chat.kind != GENERATED:
        return ""
    return f"{_lib('mistral_common')} encode_chat_completion" + (f" (ids; text: {text})" if text else "")


def _tekken_decode(tk, ids) -> str:
    from mistral_common.tokens.tokenizers.base import SpecialTokenPolicy  # optional: loaded by the Tekkenizer's caller

    return tk.decode(ids, special_token_policy=SpecialTokenPolicy.KEEP)


# ------------------------------------------------------------------ vocab.json + merges, vocab.txt: transformers

_SIDE_FILES = ("tokenizer_config.json", "special_tokens_map.json", "added_tokens.json", "config.json",
               "generation_config.json", "chat_template.jinja", "chat_template.json")


def decided(tok, files: list[Path]) -> FolderInterpretation:
    """The folder's interpretation the reader built `tok` by (`Metadata.interpretation`), with the
    class and casing a vocab.json/merges or vocab.txt reference needs: the reader's decisions where it
    took them, else the same functions' (never a second rule)."""
    it = tok.meta.interpretation or FolderInterpretation()
    txt = _format_of(tok) is BERT_VOCAB  # by content, as read: never by the file's name
    if it.tokenizer_class is None:
        it = it.with_(tokenizer_class=transformers_class(files[0].parent, txt, tok.model.vocab))
    if txt and it.lowercase is None:
        it = it.with_(lowercase=bert_casing(tok.model.vocab, config_object(files[0].parent, "tokenizer_config.json")))
    return it


def choose_transformers(file: Path, tok) -> Chosen:
    _need("transformers", "transformers")
    files = [Path(f.path) for f in tok.provenance.inputs[:1 if _format_of(tok) is BERT_VOCAB else 2]]
    it = decided(tok, files)
    name, how = it.tokenizer_class.value, it.tokenizer_class.how
    import transformers  # ~0.7 s: only for this reference, after _need says whether it is there

    cls = getattr(transformers, name, None)
    standard = getattr(cls, "vocab_files_names", None) or {}
    kinds = [k for k in ("vocab_file", "merges_file") if k in standard]
    if cls is None or len(kinds) != len(files):
        raise ReferenceUnavailable(f"transformers {cache.version('transformers')} has no {name} built from "
                                   f"{' + '.join(f.name for f in files)}", "pass --family, or a tokenizer.json")
    kwargs, detail = {}, f"{name}: {how}"
    directory = files[0].parent
    if name == "BertTokenizer" and it.lowercase is not None:  # the folder's one casing decision
        kwargs["do_lower_case"] = it.lowercase.value
        detail += f"; {'uncased' if it.lowercase.value else 'cased'}: {it.lowercase.how}"
    side = [directory / n for n in _SIDE_FILES if (directory / n).is_file()]

    def run(texts, chats):
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
        digest = cache.key("reference-transformers", name, kwargs, list(texts),
                           [[c.id, list(c.messages), c.add_generation_prompt, c.tools] for c in chats],
                           files=[*files, *side], dists=("transformers", "tokenizers"))

        def compute() -> dict:
            # transformers reads its files by their standard names: the source's under those names
            with tempfile.TemporaryDirectory(prefix="mtok-ref-") as tmp:
                for kind, f in zip(kinds, files):
                    os.symlink(f.resolve(), Path(tmp) / standard[kind])
                for f in side:
                    os.symlink(f.resolve(), Path(tmp) / f.name)
                tk = cls.from_pretrained(tmp, **kwargs)
                ref = _run_transformers(tk, texts, chats)
            return {k: getattr(ref, k) for k in ("engine", "raw", "decoded", "chat_text", "chat_ids")}

        v = cache.computed("reference-transformers", digest, compute, valid=lambda v: isinstance(v, dict))
        return Reference(v["engine"], v["raw"], v["decoded"], v["chat_text"], v["chat_ids"], _IrNormalizer(tok))

    return Chosen(run, TRANSFORMERS.name, _lib("transformers"), tuple(str(f) for f in files), detail,
                  _lib("transformers"))


def _run_transformers(tk, texts, chats) -> Reference:
    texts = list(texts)
    engine = tk(texts, add_special_tokens=True)["input_ids"] if texts else []
    raw = tk(texts, add_special_tokens=False)["input_ids"] if texts else []
    decoded = [tk.decode(ids, skip_special_tokens=False, clean_up_tokenization_spaces=False) for ids in raw]
    chat_text, chat_ids = [None] * len(chats), [None] * len(chats)
    if chats and getattr(tk, "chat_template", None):
        for i, c in enumerate(chats):
            try:
                chat_text[i] = tk.apply_chat_template(list(c.messages), tokenize=False,
                                                      add_generation_prompt=c.add_generation_prompt, tools=c.tools)
                chat_ids[i] = tk(chat_text[i], add_special_tokens=False)["input_ids"]
            except Exception:  # noqa: BLE001  templates raise on shapes they reject; not our failure
                pass
    return Reference([list(x) for x in engine], [list(x) for x in raw], decoded, chat_text, chat_ids, lambda s: s)


class _IrNormalizer:
    """The IR's normalizer, run by HF (what reader-difference attribution compares against)."""

    def __init__(self, tok):
        self.tok, self.fn = tok, None

    def __call__(self, text: str) -> str:
        if self.fn is None:
            n = hf_from_ir(self.tok).normalizer
            self.fn = n.normalize_str if n is not None else (lambda s: s)
        return self.fn(text)


# ------------------------------------------------------------------ CLIP's merges .gz: OpenAI's SimpleTokenizer

CLIP_INSTALL = f"{REFERENCES_INSTALL}  (OpenAI CLIP's own tokenizer, package openai-clip; no torch needed)"
# The distributions that install OpenAI's `clip` package with its simple_tokenizer.py: the extra's
# (its metadata asks no torch), then clip-anytorch (same tokenizer file; its metadata pulls torch)
CLIP_DISTS = ("openai-clip", "clip-anytorch")


def clip_dist() -> str:
    """The installed distribution of OpenAI's `clip` package (the first of CLIP_DISTS when none is)."""
    return next((d for d in CLIP_DISTS if cache.version(d) != "absent"), CLIP_DISTS[0])


def clip_module():
    """OpenAI CLIP's `simple_tokenizer` module (PyPI `openai-clip` or `clip-anytorch`), loaded from its
    file: the package's `__init__` imports torch, the tokenizer does not."""
    if "mtok_clip_simple_tokenizer" in sys.modules:
        return sys.modules["mtok_clip_simple_tokenizer"]
    spec = importlib.util.find_spec("clip")
    where = [Path(p) / "simple_tokenizer.py" for p in (spec.submodule_search_locations or ())] if spec else []
    if not where or not where[0].is_file():
        raise ReferenceUnavailable("OpenAI CLIP's tokenizer (openai-clip) is not installed", CLIP_INSTALL)
    for module in ("ftfy", "regex"):
        _need(module, module, CLIP_INSTALL)
    loaded = importlib.util.spec_from_file_location("mtok_clip_simple_tokenizer", where[0])
    module = importlib.util.module_from_spec(loaded)
    loaded.loader.exec_module(module)
    sys.modules["mtok_clip_simple_tokenizer"] = module
    return module


def choose_clip(file: Path, tok) -> Chosen:
    module = clip_module()

    def run(texts, chats):
        digest = cache.key("reference-clip", list(texts), files=[file], dists=(clip_dist(), "ftfy", "regex"))

        def compute() -> dict:
            st = module.SimpleTokenizer(str(file))
            sot, eot = st.encoder["<|startoftext|>"], st.encoder["<|endoftext|>"]
            raw = [st.encode(t) for t in texts]
            # CLIP's own decode joins the tokens with `</w>` as a space (and strips nothing else)
            return {"engine": [[sot, *r, eot] for r in raw], "raw": raw,
                    "decoded": [st.decode(r) for r in raw]}

        v = cache.computed("reference-clip", digest, compute, valid=lambda v: isinstance(v, dict))
        return _no_chats(Reference(v["engine"], v["raw"], v["decoded"], [], [], _IrNormalizer(tok)), chats)

    return Chosen(run, CLIP_TOKENIZER.name, _lib(clip_dist()), (str(file),), "OpenAI CLIP's SimpleTokenizer")


# ------------------------------------------------------------------ .mtok and legacy tokenizer.txt: the runtime they were made for

def choose_mnn(file: Path, tok) -> Chosen:
    _need("MNN", "MNN")
    lib = f"MNN {cache.version('MNN')}"
    return Chosen(lambda texts, chats: runtime_reference(file, None, texts, chats), MNN_RUNTIME.name, lib,
                  (str(file),), "the runtime on the source .mtok", lib)


def choose_mnn_legacy(file: Path, tok) -> Chosen:
    python = mnn341.find()
    return Chosen(lambda texts, chats: runtime_reference(file, python, texts, chats), MNN_LEGACY.name,
                  f"MNN {mnn341.VERSION}", (str(file),), f"the legacy runtime on the source tokenizer.txt ({python})")


# ------------------------------------------------------------------ GGUF: llama.cpp


def choose_gguf(file: Path, tok) -> Chosen:
    _need("llama_cpp", "llama-cpp-python", GGUF_INSTALL)
    return Chosen(lambda texts, chats: gguf_reference(file, texts, chats), LLAMA_CPP.name, _lib("llama-cpp-python"),
                  (str(file),), "llama.cpp, vocabulary only", f"transformers' renderer {cache.version('transformers')} "
                  "on the file's template, llama.cpp's ids")


# ------------------------------------------------------------------ the registry


def choose(tok) -> Chosen:
    """The independent reference of the source `tok` was read from (its format as `read_source`
    recorded it, else as its first input file classifies); `ReferenceUnavailable` when it cannot run
    here."""
    inputs = tok.provenance.inputs
    fmt = _format_of(tok)
    if fmt is None or fmt.reference is None:
        raise ReferenceUnavailable("the IR records no input format (it was not read by `formats.read_source`)",
                                   "read the source with formats.read_source")
    return runner(fmt.reference)(Path(inputs[0].path), tok)


def runner(reference) -> Callable[[Path, object], Chosen]:
    """What runs a format entry's reference (`Reference.runner`, `module:function`): imported here,
    on first use, because the entries sit below `verify` and name it."""
    module, _, name = reference.runner.partition(":")
    return getattr(importlib.import_module(module), name)


def _format_of(tok) -> Format | None:
    """The format `tok` was read as (`read_source` records it), else its first input's."""
    inputs = tok.provenance.inputs
    return BY_NAME.get(tok.provenance.format) or (classify(Path(inputs[0].path)) if inputs else None)


def self_check(tok, unavailable: ReferenceUnavailable) -> Chosen:
    """HF `tokenizers` built from our own IR: it runs the runtime's checks but cannot see a reader bug."""
    run = lambda texts, chats: _no_chats(run_hf(hf_from_ir(tok), texts), chats)  # noqa: E731
    files = tuple(f.path for f in tok.provenance.inputs)
    return Chosen(run, "self-check", "none", files, "HF tokenizers built from this tool's own reading",
                  unavailable=unavailable)


def choose_or_self_check(tok) -> Chosen:
    try:
        return choose(tok)
    except ReferenceUnavailable as e:
        return self_check(tok, e)
