"""One interpretation of a source folder (DESIGN section 4, "One interpretation of the folder"): every
decision the folder leaves open, taken once here, carried by the IR (`Metadata.interpretation`),
recorded in the manifest, and read by both the reader and the reference set-up
(`verify/references.py`), so the two never decide the same question twice.

* which file is the source (`source`, `format`: `formats.read_source`'s choice);
* the transformers class a vocab.json/merges or vocab.txt was written for (`tokenizer_class`);
* the casing of a vocab.txt (`lowercase`): tokenizer_config.json's `do_lower_case`, else decided from
  the vocabulary (a vocabulary with upper-case letters is a cased model's: lowercasing would make
  those tokens unreachable);
* the added tokens (`added_tokens`: the rule that gives them) and BOS/EOS (`bos`, `eos`: the text
  and where it came from).

`disagreements(tok)` names where the IR a reader built does not follow its own interpretation (a
reader that decided on its own): verification reports that as one finding with its cause instead of
the thousands of mismatches it would cause."""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from pathlib import Path

from ..ir import normalizers as N


@dataclass(frozen=True)
class Decision:
    value: object
    how: str  # where it came from, or how it was decided

    def to_json(self) -> dict:
        return {"value": self.value, "how": self.how}


@dataclass(frozen=True)
class FolderInterpretation:
    source: str = ""  # the file read
    format: str = ""  # its `formats.Format` name
    tokenizer_class: Decision | None = None  # vocab.json/merges, vocab.txt: the transformers class (no `Fast`)
    lowercase: Decision | None = None  # vocab.txt: does the tokenizer lowercase?
    added_tokens: str = ""  # the rule the added tokens follow
    bos: Decision | None = None  # the BOS text ("": none)
    eos: Decision | None = None

    def with_(self, **changes) -> FolderInterpretation:
        return replace(self, **changes)

    def to_json(self) -> dict:
        out: dict = {"source": self.source, "format": self.format}
        for key in ("tokenizer_class", "lowercase", "bos", "eos"):
            d = getattr(self, key)
            if d is not None:
                out[key] = d.to_json()
        if self.added_tokens:
            out["added_tokens"] = self.added_tokens
        return out


def config_object(directory: Path, name: str) -> dict:
    p = directory / name
    try:
        data = json.loads(p.read_bytes()) if p.is_file() else {}
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


def bert_casing(vocab: dict[str, int], tcfg: dict) -> Decision:
    """Does a vocab.txt's tokenizer lowercase?  tokenizer_config.json's `do_lower_case` when it says;
    else decided from the vocabulary: cased when a token outside the [BRACKETED] specials has an
    upper-case letter."""
    if isinstance(tcfg.get("do_lower_case"), bool):
        return Decision(tcfg["do_lower_case"], "do_lower_case in tokenizer_config.json")
    cased = next((t for t in vocab if not (t.startswith("[") and t.endswith("]")) and t != t.lower()), None)
    if cased is not None:
        return Decision(False, f"decided from the vocabulary ({cased!r} has upper case; no do_lower_case "
                               "in a config)")
    return Decision(True, "decided from the vocabulary (no upper-case token; no do_lower_case in a config)")


# The transformers class a vocabulary file pair was written for, when no config names one: by content.
FAIRSEQ_HEAD = {"<s>": 0, "<pad>": 1, "</s>": 2, "<unk>": 3}


def transformers_class(directory: Path, vocab_txt: bool, vocab: dict[str, int]) -> Decision:
    """The transformers tokenizer class (without `Fast`) a vocab.json/merges (`vocab_txt` False) or
    vocab.txt source was written for: the class `tokenizer_config.json` names, else the one
    transformers maps `config.json`'s `model_type` to, else by content (a vocab.txt is BERT's;
    `</w>` tokens are CLIP's; the fairseq head `<s> <pad> </s> <unk>` is RoBERTa's; else GPT-2's)."""
    cls = config_object(directory, "tokenizer_config.json").get("tokenizer_class")
    if isinstance(cls, str) and cls:
        return Decision(cls.removesuffix("Fast"), "tokenizer_class in tokenizer_config.json")
    model_type = config_object(directory, "config.json").get("model_type")
    if isinstance(model_type, str):
        from transformers.models.auto.tokenization_auto import TOKENIZER_MAPPING_NAMES

        names = TOKENIZER_MAPPING_NAMES.get(model_type)
        name = names if isinstance(names, str) else next((n for n in (names or ()) if n), None)
        if name:
            return Decision(name.removesuffix("Fast"), f"model_type {model_type!r} in config.json")
    if vocab_txt:
        return Decision("BertTokenizer", "no config names a class: a vocab.txt is BERT's")
    if any(t.endswith("</w>") for t in vocab):
        return Decision("CLIPTokenizer", "no config names a class: the vocabulary's tokens end in </w> (CLIP's)")
    if all(vocab.get(t) == i for t, i in FAIRSEQ_HEAD.items()):
        return Decision("RobertaTokenizer", "no config names a class: the vocabulary starts with fairseq's "
                                            "<s> <pad> </s> <unk>")
    return Decision("GPT2Tokenizer", "no config names a class: GPT-2's")


def _lowercases(normalizer) -> bool | None:
    """Does the IR's normalizer lowercase (None: it has no BERT normalizer or Lowercase to ask)?"""
    if isinstance(normalizer, N.BertNormalizer):
        return normalizer.lowercase
    if isinstance(normalizer, N.Lowercase):
        return True
    if isinstance(normalizer, N.Sequence):
        found = [x for x in (_lowercases(n) for n in normalizer.normalizers) if x is not None]
        return any(found) if found else None
    return None


def disagreements(tok) -> list[tuple[str, str]]:
    """(component, cause) where the IR does not follow the interpretation it carries."""
    it = getattr(tok.meta, "interpretation", None)
    out: list[tuple[str, str]] = []
    if it is None:
        return out
    if it.lowercase is not None:
        reader = bool(_lowercases(tok.normalizer))
        if reader != it.lowercase.value:
            out.append(("normalizer", f"casing: the folder's interpretation is {'uncased' if it.lowercase.value else 'cased'} "
                                      f"({it.lowercase.how}), but the reader's normalizer "
                                      f"{'lowercases' if reader else 'keeps case'}; the reference follows the "
                                      "interpretation"))
    return out
