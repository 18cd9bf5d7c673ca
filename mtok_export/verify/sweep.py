"""The vocabulary sweep (DESIGN section 4): every token's own text and every added token alone and
in whitespace contexts, encoded by the runtime and by the reference.  A 470-string corpus samples
the vocabulary; the sweep asks each entry once, so a rare merge, an unreachable token or an
`ignore_merges` word cannot hide, and each loss gets an exact count over the vocabulary."""

from __future__ import annotations

from operator import itemgetter

from .. import cache
from ..errors import UnsupportedError
from ..ir import models as M
from .reference_tiktoken import hf_from_ir

# Where an added token meets other text: after a space, before a newline, between letters.
CONTEXTS = ("{}", " {}", "{}\n", "a{}b")


def sweep_texts(source, skip=frozenset(), fillers=()) -> tuple[list[str], str]:
    """(the sweep's strings, a note on what was left out): each id's text as HF decodes it alone on
    the IR (the surface a user types to get that token; ids whose text is not whole UTF-8 on its
    own, or holds NUL, cannot be typed), each added token in `CONTEXTS`; sorted, without `skip`
    (the corpus's own strings).  Cached by the vocabulary, the decoder and this module.
    `fillers`: the texts of the entries the file holds only to fill id gaps (`lower.models.
    fill_id_gaps`), each typed in `CONTEXTS` too: the reference knows no such token, so any gap id
    the runtime produces for them is a mismatch."""
    tokens = [t for t, _ in sorted(M.vocab_of(source.model).items(), key=itemgetter(1))]
    added = [t.content for t in source.added_tokens]
    digest = cache.key("sweep-texts", repr(source.decoder), repr(source.normalizer), files=(__file__,),
                       dists=("tokenizers",), blobs=(cache.strings_blob(tokens), cache.strings_blob(added)))
    note, *texts = cache.computed("sweep-texts", digest, lambda: _texts(source),
                                  valid=lambda v: isinstance(v, list) and bool(v))  # [note, *texts]
    skip = set(skip)
    typed = {c.format(t) for t in fillers for c in CONTEXTS if _typeable(t)} - set(texts)
    return [t for t in texts if t not in skip] + sorted(typed - skip), note


def _texts(source) -> list[str]:
    try:
        hf = hf_from_ir(source)
    except UnsupportedError as e:
        return [f"no sweep: the IR has no HF form to decode its tokens ({e})"]
    # every id there is (a vocab with gaps has ids beyond its size)
    ids = sorted(set(hf.get_vocab(with_added_tokens=True).values()))
    own = hf.decode_batch([[i] for i in ids], skip_special_tokens=False)
    untypeable = sum(1 for t in own if not _typeable(t))
    texts = set(own) | {c.format(t.content) for t in source.added_tokens for c in CONTEXTS}
    note = f"{untypeable} id(s) whose text alone is not whole UTF-8 (or is empty, or holds NUL) left out" \
        if untypeable else ""
    return [note, *sorted(t for t in texts if _typeable(t))]


def _typeable(text: str) -> bool:
    return bool(text) and "\ufffd" not in text and "\x00" not in text
