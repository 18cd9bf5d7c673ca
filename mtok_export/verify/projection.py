"""HF `tokenizers` on an IR (an attribution projection), its answers cached by content.

Building the HF tokenizer of a 150k-word BPE takes about 0.3 s.  What attribution asks of it (the
ids of the few mismatched texts, a normalization, the corpus' decodes) is a pure function of the
tokenizer.json text handed to `tokenizers` and of the `tokenizers` version; so the answers are
cached under the hash of exactly that text (`cache`, kind "projection"), and the tokenizer is
built only for a question not answered there.  A second verification of the same source then
builds none; any change to the IR changes the text, hence the key."""

from __future__ import annotations

from .. import cache
from ..writers.hf_json import TableText, tokenizer_json_text
from .reference_tiktoken import hf_from_json_text

_ASKED = ("encode", "normalize", "decode")  # the questions, each a table: its key -> the answer


class Projection:
    def __init__(self, tok, tables: TableText | None = None):
        """`tok`: the IR to run (the source, or the source with some losses' projections applied);
        `tables`: the vocabulary and merges text shared by the projections of one source."""
        self.tok, self._tables = tok, tables
        text = tokenizer_json_text(tok, tables)
        self.digest = cache.key("projection", blobs=(text.encode("utf-8", "surrogatepass"),), dists=("tokenizers",))
        hit = cache.load("projection", self.digest)
        self.cached = isinstance(hit, dict) and all(isinstance(hit.get(k), dict) for k in _ASKED)
        self._answers = hit if self.cached else {k: {} for k in _ASKED}
        # The text (tens of MB as a str) is kept only for the build that follows a miss; a question
        # a cached entry does not answer serializes the IR again.
        self._text = None if self.cached else text
        self._hf = None
        self._added = False

    @property
    def hf(self):
        """The HF tokenizer, built on first use."""
        if self._hf is None:
            self._hf = hf_from_json_text(self._text or tokenizer_json_text(self.tok, self._tables))
            self._text = None
        return self._hf

    def ready(self) -> None:
        """Build the tokenizer now unless this text's answers are cached (called while the runtime
        runs on the other core)."""
        if not self.cached:
            self.hf  # noqa: B018  built for its side effect

    def encode(self, text: str) -> list[int] | None:
        """`encode(text, add_special_tokens=False).ids`; None where HF refuses to run the IR on `text`
        (WordPiece whose unk token is no token, on a word it cannot cover): no projection there."""
        def run():
            try:
                return self.hf.encode(text, add_special_tokens=False).ids
            except Exception:  # noqa: BLE001  tokenizers raises a bare Exception
                return None
        ids = self._ask("encode", text, run)
        return None if ids is None else list(ids)

    def normalize(self, text: str) -> str | None:
        """The normalizer's `normalize_str(text)`; None when there is no normalizer."""
        def run():
            n = self.hf.normalizer
            return None if n is None else n.normalize_str(text)
        return self._ask("normalize", text, run)

    def pre_tokens(self, text: str) -> list[str]:
        """The strings the model runs on for `text` (HF's normalizer, then its pre-tokenizer), for
        a projection that replaces the model (`unigram-unk-node`); not cached: asked only for a
        mismatch no cached answer explained."""
        n, pre = self.hf.normalizer, self.hf.pre_tokenizer
        text = n.normalize_str(text) if n is not None else text
        return [s for s, _ in pre.pre_tokenize_str(text)] if pre is not None else [text]

    def decode_batch(self, raw: list[list[int]]) -> list[str]:
        """`decode_batch(raw, skip_special_tokens=False)`."""
        table = self._answers["decode"]
        keys = [",".join(map(str, ids)) for ids in raw]
        todo = [j for j, k in enumerate(keys) if k not in table]
        if todo:
            for j, text in zip(todo, self.hf.decode_batch([raw[j] for j in todo], skip_special_tokens=False)):
                table[keys[j]] = text
            self._added = True
        return [table[k] for k in keys]

    def _ask(self, question: str, text: str, compute):
        table = self._answers[question]
        if text in table:
            return table[text]
        value = compute()
        if _storable(text):
            table[text] = value
            self._added = True
        return value

    def save(self) -> None:
        """Store the answers computed here for the next run; a text with no entry yet gets one even
        when nothing was asked (a verification without mismatches): the next run then knows there
        is nothing to build ahead (`ready`) and builds the tokenizer only for a question it asks
        (Gemma-3's 262k vocabulary: 3 to 8 s of CPU beside the runtime, on every run, for nothing)."""
        if self._added or not self.cached:
            cache.store("projection", self.digest, self._answers)
            self._added = False
            self.cached = True


def _storable(text: str) -> bool:
    """A cache entry is UTF-8 JSON: a text with a lone surrogate is answered, not stored."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
