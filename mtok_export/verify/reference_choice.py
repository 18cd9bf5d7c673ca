"""Which reference verifies an IR that was not read from a `tokenizer.json`: the library the source
file was made for (sentencepiece, tiktoken), or HF `tokenizers` built from the IR."""

from __future__ import annotations

from pathlib import Path

from ..ir import normalizers as N
from ..ir import pre_tokenizers as P
from ..readers.sentencepiece import is_sentencepiece
from ..readers.tiktoken import looks_like_tiktoken
from .reference import Reference, run_hf
from .reference_spm import spm_reference
from .reference_tiktoken import hf_from_ir, nfc, tiktoken_reference


def reference_for(tok):
    """The reference for an IR not read from a tokenizer.json: `f(texts, chats) -> Reference`
    (sentencepiece for a .model, tiktoken for rank files with the pattern and specials the reader
    chose, HF built from the IR for vocab.json/merges.txt, vocab.txt and legacy .txt), or None when
    HF on the source's tokenizer.json applies.  Only the sentencepiece reference renders chats."""
    inputs = [Path(f.path) for f in tok.provenance.inputs]
    if not inputs or inputs[0].name == "tokenizer.json":
        return None
    first, pre = inputs[0], tok.pre_tokenizer
    if is_sentencepiece(first):
        meta = tok.meta
        return lambda texts, chats: spm_reference(first, texts, add_bos=bool(meta.add_bos_token),
                                                  add_eos=bool(meta.add_eos_token), chats=chats, tok=tok)

    def no_chats(ref: Reference, chats) -> Reference:
        ref.chat_text, ref.chat_ids = [None] * len(chats), [None] * len(chats)
        return ref

    if looks_like_tiktoken(first) and isinstance(pre, P.Sequence) and pre.pretokenizers \
            and isinstance(pre.pretokenizers[0], P.Split):
        pattern = pre.pretokenizers[0].pattern.value
        specials = {t.content: t.id for t in tok.added_tokens}
        norm = nfc if isinstance(tok.normalizer, N.NFC) else None
        return lambda texts, chats: no_chats(tiktoken_reference(first, pattern, specials, texts, normalize=norm),
                                             chats)
    return lambda texts, chats: no_chats(run_hf(hf_from_ir(tok), texts), chats)
