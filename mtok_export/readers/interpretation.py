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
  and where it came from);
* how the model uses its tokenizer (`usage`, `decide_usage`): an `encoder` (BERT, a sentence
  embedder, CLIP's text tower) turns ids into embeddings or labels and never decodes, so a difference
  in decoding cannot reach its user (`policy.decide`); a `generator` decodes what it writes.

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
    usage: Decision | None = None  # "encoder" (never decodes) or "generator"

    def with_(self, **changes) -> FolderInterpretation:
        return replace(self, **changes)

    def to_json(self) -> dict:
        out: dict = {"source": self.source, "format": self.format}
        for key in ("tokenizer_class", "lowercase", "bos", "eos", "usage"):
            d = getattr(self, key)
            if d is not None:
                out[key] = d.to_json()
        if self.added_tokens:
            out["added_tokens"] = self.added_tokens
        return out


ENCODER, GENERATOR = "encoder", "generator"
# config.json model types whose models only encode (their heads give embeddings, labels or one masked
# token's logits; none writes text)
ENCODER_TYPES = frozenset({"bert", "roberta", "xlm-roberta", "distilbert", "mpnet", "electra", "deberta", "deberta-v2",
                           "albert", "camembert", "clip", "clip_text_model", "siglip", "siglip_text_model", "nomic_bert",
                           "new", "jina_bert", "modernbert", "xlm-roberta-xl", "ernie", "nezha", "roformer", "luke",
                           "megatron-bert", "flaubert", "xlm", "bge-m3", "esm"})
_ENCODER_HEADS = ("ForSequenceClassification", "ForTokenClassification", "ForQuestionAnswering", "ForMultipleChoice",
                  "TextModel", "TextModelWithProjection", "EncoderModel")
_GENERATOR_HEADS = ("ForCausalLM", "ForConditionalGeneration", "LMHeadModel", "ForSpeechSeq2Seq", "Seq2SeqLM")
ENCODER_CLASSES = frozenset({"Bert", "DistilBert", "Roberta", "XLMRoberta", "Camembert", "Albert", "Electra", "MPNet",
                             "Deberta", "DebertaV2", "CLIP", "Siglip"})
# sentence-transformers writes these beside the model: an embedder
SENTENCE_TRANSFORMERS = ("modules.json", "sentence_bert_config.json", "config_sentence_transformers.json")


def decide_usage(directory: Path | None, mcfg: dict, tcfg: dict, *, wordpiece: bool, encoder_post: str,
                 clip: bool) -> Decision:
    """Whether the model decodes what it produces (DESIGN 4.2: a loss is judged by how the model is
    used): config.json's model type and architectures first, then the files sentence-transformers
    writes, the tokenizer class, and the tokenizer itself (a WordPiece vocabulary, BERT's post-processor,
    CLIP's word ends).  Nothing saying otherwise, a model decodes."""
    arch = [a for a in mcfg.get("architectures") or () if isinstance(a, str)]
    if any(a.endswith(_GENERATOR_HEADS) for a in arch):
        return Decision(GENERATOR, f"config.json architectures {', '.join(arch)}")
    if mcfg.get("model_type") in ENCODER_TYPES or (arch and all(a.endswith(_ENCODER_HEADS) for a in arch)):
        what = f"model_type {mcfg['model_type']}" if mcfg.get("model_type") in ENCODER_TYPES else \
            f"architectures {', '.join(arch)}"
        return Decision(ENCODER, f"config.json {what}: an encoder (embeddings or labels, never decoded text)")
    found = [n for n in SENTENCE_TRANSFORMERS if directory is not None and (directory / n).is_file()]
    if found:
        return Decision(ENCODER, f"{found[0]}: a sentence-transformers embedder (never decodes)")
    cls = tcfg.get("tokenizer_class")
    family = cls.removesuffix("Fast").removesuffix("Tokenizer") if isinstance(cls, str) else ""
    if family in ENCODER_CLASSES:
        return Decision(ENCODER, f"tokenizer_class {cls}: an encoder's tokenizer (never decodes)")
    if family and family != "PreTrained":  # a model's own class, not the generic one
        return Decision(GENERATOR, f"tokenizer_class {cls}")
    if mcfg.get("model_type"):
        return Decision(GENERATOR, f"config.json model_type {mcfg['model_type']}")
    if wordpiece:
        return Decision(ENCODER, "a WordPiece vocabulary (BERT's family: an encoder, never decodes)")
    if clip:  # before its RobertaProcessing: the more telling reason
        return Decision(ENCODER, "CLIP's </w> word ends (its text tower encodes, never decodes)")
    if encoder_post:
        return Decision(ENCODER, f"the {encoder_post} post-processor (an encoder's: never decodes)")
    return Decision(GENERATOR, "nothing names an encoder: the model is taken to decode what it writes")


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
        # transformers (~0.7 s): only when no tokenizer_class is given and config.json's model_type decides
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
