"""The reference side for a bare SentencePiece model: the `sentencepiece` library itself.

SentencePiece knows nothing of added tokens, so wherever the IR (like transformers) splits a
control or user-defined piece out of the text, SentencePiece encodes the same text as pieces.
Those differences belong to the *reader*, not to MNN: the reader records them as `sp-*` losses,
which `verify` uses like any other loss.  (The parity tables over SentencePiece models are
`tests/support/spm_parity.py`.)"""

# function-local imports: sentencepiece (~15 ms, ~30 with protobuf) loads only when a SentencePiece
# model is verified: verify.references imports every format's reference module

from __future__ import annotations

import json
from pathlib import Path

from .. import cache
from ..ir import normalizers as N
from ..readers.sentencepiece import read_sentencepiece
from . import emulate
from .budget import STOP
from .reference import CHUNK, Reference, _chats
from .spm_unigram import Lattice


def charsmap_normalizer(model_path) -> object:
    """SentencePiece's own normalizer reduced to the charsmap (no dummy prefix, whitespace
    clean-up or escaping): str -> str."""
    import sentencepiece as spm
    from sentencepiece import sentencepiece_model_pb2 as pb

    m = pb.ModelProto()
    m.ParseFromString(Path(model_path).read_bytes())
    if not m.normalizer_spec.precompiled_charsmap:
        return lambda s: s
    ns = m.normalizer_spec
    ns.add_dummy_prefix = ns.remove_extra_whitespaces = ns.escape_whitespaces = False
    sp = spm.SentencePieceProcessor(model_proto=m.SerializeToString())
    return sp.normalize


def _normalize_with(n, text: str, charsmap) -> str:
    """The IR normalizer with its `Precompiled` step done by SentencePiece itself (other steps as
    `emulate` does them): what `_explain_ids` compares the runtime's table emulation with."""
    if n is None:
        return text
    if isinstance(n, N.Sequence):
        for c in n.normalizers:
            text = _normalize_with(c, text, charsmap)
        return text
    if isinstance(n, N.Precompiled):
        return charsmap(text)
    return emulate.normalize(n, text)


def spm_reference(model_path, texts, *, add_bos: bool, add_eos: bool, chats=(), bos_id: int | None = None,
                  eos_id: int | None = None, tok=None) -> Reference:
    """`sentencepiece` on `texts`: raw ids, engine ids (`bos_id`/`eos_id`, default the model's, around
    them per `add_bos`/`add_eos`) and decode.  Chats are rendered with transformers only when a
    `tokenizer_config.json` chat template sits beside the model (else `None`s).  `normalize` is the
    IR normalizer (`tok`, default read from the model) with SentencePiece's own charsmap."""
    import sentencepiece as spm

    model_path = Path(model_path)
    sp = spm.SentencePieceProcessor(model_file=str(model_path))
    texts = list(texts)
    raw = [list(x) for x in sp.encode(texts)]
    bos = sp.bos_id() if bos_id is None else bos_id
    eos = sp.eos_id() if eos_id is None else eos_id
    pre = [bos] if add_bos and bos >= 0 else []
    post = [eos] if add_eos and eos >= 0 else []
    engine = [pre + r + post for r in raw]
    decoded = [sp.decode(r) for r in raw]
    chat_text: list = [None] * len(chats)
    chat_ids: list = [None] * len(chats)
    if chats and _has_template(model_path.parent):
        chat_text, chat_ids = _chats(model_path.parent, list(chats))
    if tok is None:
        tok = read_sentencepiece(model_path)
    charsmap = charsmap_normalizer(model_path)
    norm = tok.normalizer
    return Reference(engine, raw, decoded, chat_text, chat_ids, lambda s: _normalize_with(norm, s, charsmap),
                     unigram=lambda: library_lattice(sp))


def library_lattice(sp) -> Lattice | None:
    """The Unigram lattice of the pieces and scores `sp` (a loaded `SentencePieceProcessor`) holds,
    from the model it loaded; None for a BPE model."""
    from sentencepiece import sentencepiece_model_pb2 as pb

    m = pb.ModelProto()
    m.ParseFromString(sp.serialized_model_proto())
    return Lattice.of_proto(m) if m.trainer_spec.model_type == pb.TrainerSpec.UNIGRAM else None


def spm_raw_ids(model_path, texts, tell=None) -> list[list[int]]:
    """`sentencepiece`'s ids of `texts` (batch calls of `CHUNK` texts, `tell(done, total)` told
    between them), cached by the model and the texts: the vocabulary sweep's question, without
    `spm_reference`'s decodes and normalizer."""
    import sentencepiece as spm

    texts = list(texts)
    digest = cache.key("reference-raw-spm", files=[Path(model_path)], dists=("sentencepiece",),
                       blobs=(cache.strings_blob(texts),))

    def compute() -> list:
        sp = spm.SentencePieceProcessor(model_file=str(model_path))
        out: list = []
        for k in range(0, len(texts), CHUNK):
            if tell is not None and tell(k, len(texts)) == STOP:  # the budget: the texts done so far
                break
            out += [list(x) for x in sp.encode(texts[k:k + CHUNK])]
        return out
    return cache.computed("reference-raw-spm", digest, compute,
                          valid=lambda v: isinstance(v, list) and len(v) == len(texts))


def _has_template(directory: Path) -> bool:
    p = directory / "tokenizer_config.json"
    if (directory / "chat_template.jinja").is_file() or (directory / "chat_template.json").is_file():
        return True
    try:
        return bool(p.is_file() and json.loads(p.read_bytes()).get("chat_template"))
    except ValueError:
        return False
