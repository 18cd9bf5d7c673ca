"""The reference side for a GGUF file: llama.cpp itself, through llama-cpp-python's bindings of
`llama.h`, with the vocabulary only (no weights, no context).  This is the engine a GGUF is made
for, and it reads the file on its own, so a bug in our GGUF reader shows as a mismatch instead of
being copied into the reference (the IR rebuilt as HF `tokenizers` could not fail that way).

* raw ids: `llama_tokenize(add_special=False, parse_special=True)` (special-token text in the input
  becomes the special id, as HF added tokens do); engine ids the same with `add_special=True` (BOS,
  EOS, BERT's [CLS] ... [SEP] as the file's flags and llama.cpp's defaults for its model add them).
* decoded: llama.cpp's streaming decode, the pieces `llama_token_to_piece(special=True)` gives
  joined as bytes: what llama.cpp prints while it generates, and what the runtime's own streamed
  decode is compared with.  Its whole-text `llama_detokenize` also tidies spaces (`clean_spaces`:
  "you 😁 ?" -> "you 😁?" for GPT-2 and Llama-3) and drops SentencePiece's first prefix space:
  cosmetics no stream has, which would show as mismatches no loss explains.
* chats: the file's own `tokenizer.chat_template` (as llama.cpp reads it) rendered by
  transformers' renderer with the BOS/EOS text llama.cpp gives, then tokenized by llama.cpp.
* normalize: identity (llama.cpp exposes no normalizer; attribution needs one only for
  SentencePiece charsmaps, which a GGUF reader never records).

Measured on llama.cpp's own test vectors (`tests/verify/test_reference_gguf.py`): every vector of the 12
corpus GGUFs that have them.  Beyond them llama.cpp departs from the models' HF tokenizers (which
our reading follows) on edges: spaces around special-token text in SentencePiece vocabularies
("Hello <unk> world": `▁` pieces kept), Hangul under BERT (its jamo dropped).  And it sees what
HF built from our own reading could not: Phi-3's specials eat the newline after them (llama.cpp
and Phi-3's tokenizer.json: `<|end|>` and that newline are one id; the IR: three), and DeepSeek's
user-defined tokens ("ö", id 100003) decode as their text, where the ByteLevel decoder on the IR
gives U+FFFD.

transformers' GGUF tokenizer loader was the other candidate: it has no WordPiece (bert) builder,
its `AutoTokenizer` GGUF path needs torch, and built directly it matched 4 of the 11 vector files
it can load exactly (gpt-2, phi-3, qwen2, qwen35; llama-spm 31/46).

llama-cpp-python is on PyPI as a source distribution only: `pip install llama-cpp-python` compiles
llama.cpp (7.6 CPU-minutes, about 4 on 2 free cores; seconds from pip's wheel cache afterwards).  Results
are cached by content: the file's header and key-value section (the whole tokenizer, not the
tensors after it), the texts and conversations, this module's source and the library versions."""

from __future__ import annotations

import ctypes
import mmap
import os
import struct
from pathlib import Path

from .. import cache
from ..errors import InputError
from .chat_parity import reference_render
from .reference import Reference, ReferenceUnavailable

INSTALL = ("pip install 'mtok-export[gguf-reference]'  (llama-cpp-python: compiles llama.cpp, about 4 min on 2 "
           'free cores; set CMAKE_ARGS="-DGGML_NATIVE=OFF -DLLAMA_CURL=OFF -DLLAVA_BUILD=OFF" for a portable build)')
_CACHED = ("engine", "raw", "decoded", "chat_text", "chat_ids")


def gguf_reference(path: Path, texts: list[str], chats: list) -> Reference:
    """llama.cpp's ids and decodes of `texts`, and its tokenization of `chats` rendered with the
    file's template (None for a conversation without the generation prompt, which the renderer
    always adds, or one the template refuses; all None without a template).  Raises
    `ReferenceUnavailable` when llama-cpp-python is missing or its llama.cpp cannot load this
    tokenizer, `InputError` when the file is not a readable GGUF."""
    path, texts, chats = Path(path), list(texts), list(chats)
    header, strings = _metadata(path)
    digest = cache.key("reference-gguf", texts,
                       [[c.id, list(c.messages), c.add_generation_prompt, c.tools] for c in chats],
                       blobs=(header,), files=(__file__,),  # this module's source: a changed derivation is recomputed
                       dists=("llama-cpp-python",) + (("transformers", "jinja2") if chats else ()))

    def compute() -> dict:
        with _Vocab(path, strings) as vocab:
            raw = [vocab.tokenize(t, add_special=False) for t in texts]
            value = {"engine": [vocab.tokenize(t, add_special=True) for t in texts], "raw": raw,
                     "decoded": [vocab.stream(ids) for ids in raw],
                     "chat_text": [None] * len(chats), "chat_ids": [None] * len(chats)}
            template = vocab.meta("tokenizer.chat_template")
            if template and chats:
                bos, eos = vocab.special_text()
                for j, chat in enumerate(chats):
                    text = reference_render(template, chat, bos=bos, eos=eos) if chat.add_generation_prompt else None
                    if text is not None:
                        value["chat_text"][j] = text
                        value["chat_ids"][j] = vocab.tokenize(text, add_special=False)
        return value

    value = cache.computed("reference-gguf", digest, compute,
                           valid=lambda v: isinstance(v, dict) and set(v) == set(_CACHED))
    return Reference(*(value[k] for k in _CACHED), _identity)


def _identity(text: str) -> str:
    return text


class _Vocab:
    """A GGUF's vocabulary loaded by llama.cpp (`vocab_only`), freed on exit.  While it is loaded
    llama.cpp's log lines are collected instead of printed ("Added a BOS token to the prompt ...
    2 BOS tokens" is stderr noise here), so a refused file is named with llama.cpp's reason."""

    def __init__(self, path: Path, strings: dict[str, str]):
        self.path, self.strings = path, strings

    def __enter__(self):
        try:
            import llama_cpp  # optional (the `gguf-reference` extra, compiles): missing, the reference is unavailable
        except ImportError as e:
            raise ReferenceUnavailable(f"the GGUF reference is llama.cpp, and llama-cpp-python is not installed ({e})",
                                       INSTALL) from None
        self.lib, log = llama_cpp, []
        params = llama_cpp.llama_model_default_params()
        params.vocab_only = True
        self.log = _collected_log(llama_cpp, log)
        self.log.__enter__()
        self.model = llama_cpp.llama_model_load_from_file(str(self.path).encode(), params)
        if not self.model:
            self.log.__exit__()
            said = " ".join(line.strip() for line in log if "error" in line.lower() or "unknown" in line.lower())
            model = self.strings.get("tokenizer.ggml.model", "?")
            pre = self.strings.get("tokenizer.ggml.pre", "")
            raise ReferenceUnavailable(
                f"llama.cpp (llama-cpp-python {cache.version('llama-cpp-python')}) cannot load the tokenizer of "
                f"{self.path.name} (tokenizer.ggml.model {model!r}" + (f", pre {pre!r}" if pre else "") + ")"
                + (f": {said[:300]}" if said else ""), "pip install -U llama-cpp-python")
        self.vocab = llama_cpp.llama_model_get_vocab(self.model)
        return self

    def __exit__(self, *exc):
        self.lib.llama_model_free(self.model)
        self.log.__exit__()

    def tokenize(self, text: str, *, add_special: bool) -> list[int]:
        data = text.encode("utf-8", "surrogatepass")
        size = len(data) + 8
        for _ in range(2):  # a negative count is the size needed
            out = (self.lib.llama_token * size)()
            n = self.lib.llama_tokenize(self.vocab, data, len(data), out, size, add_special, True)
            if n >= 0:
                return list(out[:n])
            size = -n
        raise RuntimeError(f"llama_tokenize asked for {size} tokens twice")

    def stream(self, ids: list[int]) -> str:
        """Each id's piece (special tokens as their text), joined as bytes, then read as UTF-8."""
        buf = ctypes.create_string_buffer(256)
        out = []
        for i in ids:
            n = self.lib.llama_token_to_piece(self.vocab, i, buf, len(buf), 0, True)
            if n < 0:  # a negative count is the size needed
                buf = ctypes.create_string_buffer(-n)
                n = self.lib.llama_token_to_piece(self.vocab, i, buf, len(buf), 0, True)
            out.append(buf.raw[:n])
        return b"".join(out).decode("utf-8", "replace")

    def meta(self, key: str) -> str | None:
        size = 1 << 16
        for _ in range(2):
            buf = ctypes.create_string_buffer(size)
            n = self.lib.llama_model_meta_val_str(self.model, key.encode(), buf, size)
            if n < 0:
                return None
            if n < size:
                return buf.raw[:n].decode("utf-8", "replace")
            size = n + 1
        return None

    def special_text(self) -> tuple[str, str]:
        """The text of BOS and EOS as llama.cpp names them ("" for none)."""
        def text(i: int) -> str:
            return self.lib.llama_vocab_get_text(self.vocab, i).decode("utf-8", "replace") if i >= 0 else ""
        return text(self.lib.llama_vocab_bos(self.vocab)), text(self.lib.llama_vocab_eos(self.vocab))


class _collected_log:
    """llama.cpp's log callback replaced by one appending to `lines`, and llama-cpp-python's own
    put back afterwards."""

    def __init__(self, lib, lines: list[str]):
        self.lib, self.lines = lib, lines

    def __enter__(self):
        def collect(level, text, user_data):
            self.lines.append((text or b"").decode("utf-8", "replace"))
        self.callback = self.lib.llama_log_callback(collect)  # kept referenced while installed
        self.lib.llama_log_set(self.callback, ctypes.c_void_p(0))

    def __exit__(self, *exc):
        from llama_cpp import _logger  # optional: __enter__ imported llama_cpp

        self.lib.llama_log_set(_logger.llama_log_callback, ctypes.c_void_p(0))


# ------------------------------------------------------------------ the bytes that hold the tokenizer

_FIXED = {0: 1, 1: 1, 7: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 10: 8, 11: 8, 12: 8}  # GGUF value type -> bytes
_STRING, _ARRAY = 8, 9


# The last file's metadata, by its identity: one verification asks for the same file's several
# times (the corpus, the sweep, the special tokens, the robustness inputs), and a 262k vocabulary's
# walk is seconds each time.
_LAST: dict[tuple, tuple[bytes, dict[str, str]]] = {}


def _metadata(path: Path) -> tuple[bytes, dict[str, str]]:
    """The bytes of a GGUF's header and key-value section (everything llama.cpp's tokenizer reads;
    the tensor table and data after it are left out), and its string values by key."""
    try:
        st = os.stat(path)
        identity = (os.path.realpath(path), st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
        if identity in _LAST:
            return _LAST[identity]
        with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as m:
            found = _walk(m, path)
        _LAST.clear()
        _LAST[identity] = found
        return found
    except OSError as e:
        raise InputError(f"{path}: cannot read ({e.strerror or e})") from None
    except ValueError as e:  # mmap of an empty file
        raise InputError(f"{path}: not a GGUF file ({e})") from None


def _walk(m, path: Path) -> tuple[bytes, dict[str, str]]:
    pos = 0

    def need(n: int) -> None:
        if n < 0 or pos + n > len(m):
            raise InputError(f"{path}: GGUF metadata ends at offset {pos:#x}: {n} more bytes needed, "
                             f"the file has {len(m)}")

    def unpack(fmt: str):
        nonlocal pos
        need(struct.calcsize(fmt))
        out = struct.unpack_from(fmt, m, pos)
        pos += struct.calcsize(fmt)
        return out

    def string() -> bytes:
        nonlocal pos
        (n,) = unpack("<Q")
        need(n)
        pos += n
        return m[pos - n:pos]

    def skip(kind: int, where: str) -> None:
        nonlocal pos
        if kind in _FIXED:
            need(_FIXED[kind])
            pos += _FIXED[kind]
        elif kind == _STRING:
            string()
        elif kind == _ARRAY:
            item, count = unpack("<IQ")
            if item in _FIXED:
                need(count * _FIXED[item])
                pos += count * _FIXED[item]
            elif item == _STRING:  # a vocabulary: the common case, without a call per string
                size, unpack_from = len(m), struct.unpack_from
                for _ in range(count):
                    if pos + 8 > size:
                        need(8)
                    n = unpack_from("<Q", m, pos)[0]
                    pos += 8
                    if pos + n > size:
                        need(n)
                    pos += n
            else:
                for _ in range(count):
                    skip(item, where)
        else:
            raise InputError(f"{path}: {where}: unknown GGUF value type {kind} at offset {pos - 4:#x}")

    need(4)
    if m[:4] != b"GGUF":
        raise InputError(f"{path}: not a GGUF file (no GGUF magic at offset 0)")
    pos = 4
    (version,) = unpack("<I")
    if version < 2:
        raise InputError(f"{path}: GGUF version {version} (llama.cpp reads 2 and later)")
    _, n_kv = unpack("<QQ")
    strings = {}
    for _ in range(n_kv):
        key = string().decode("utf-8", "replace")
        (kind,) = unpack("<I")
        if kind == _STRING:
            strings[key] = string().decode("utf-8", "replace")
        else:
            skip(kind, key)
    return m[:pos], strings
