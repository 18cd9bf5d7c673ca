"""When the two HF libraries disagree about one tokenizer.json: what `tokenizers` runs on the file
(the reference every check uses, and what the written file follows) against what transformers'
`AutoTokenizer` loads from the same folder.

transformers 5 rebuilds some classes from the class rather than the file: `Qwen2Tokenizer` puts its
own split regex (`\\p{L}+`) where Qwen3.5's tokenizer.json has `[\\p{L}\\p{M}]+`, `LlamaTokenizer`
its own normalizer and pre-tokenizer where Llama-2's and Phi-3's tokenizer.json prepend `▁`.  Then
the same folder gives other ids depending on the serving stack that loads it.  That is a finding
about the source, not a fault of the file: it is reported (`drift`) with which one the file
follows, how many corpus inputs differ and the shortest of them, and the checks keep the file's own
tokenizer.json as their reference."""

from __future__ import annotations

import json

from .. import cache

# The components of a tokenizer.json whose difference changes ids (the model without its vocabulary).
_COMPONENTS = ("normalizer", "pre_tokenizer", "model", "post_processor")
# Who runs which, to say which serving stacks see which ids.
FILE_STACKS = ("HF tokenizers", "text-generation-inference", "MNN with this file")
CLASS_STACKS = ("transformers' AutoTokenizer", "vLLM and SGLang (they load AutoTokenizer)")


def differing_components(file_json: dict, class_json: dict) -> list[str]:
    """The `_COMPONENTS` in which transformers' backend tokenizer differs from the file."""
    def part(d: dict, key: str):
        v = d.get(key)
        if key == "model" and isinstance(v, dict):
            v = {k: x for k, x in v.items() if k not in ("vocab", "merges")}
        return json.dumps(v, sort_keys=True)
    return [k for k in _COMPONENTS if part(file_json, k) != part(class_json, k)]


def drift(auto, file_tok, texts: list[str], raw: list[list[int]], engine: list[list[int]]) -> dict | None:
    """Compare `auto` (what `AutoTokenizer` loaded) with `file_tok` (the `tokenizers.Tokenizer` of the
    tokenizer.json, whose `raw`/`engine` ids of `texts` are given) on `texts`: None when they agree
    on every input, else the finding (JSON-ready, with a one-line `summary`)."""
    texts = list(texts)
    if not texts:
        return None
    t_raw = [list(x) for x in auto(texts, add_special_tokens=False)["input_ids"]]
    t_engine = [list(x) for x in auto(texts, add_special_tokens=True)["input_ids"]]
    differ = [j for j in range(len(texts)) if t_raw[j] != raw[j] or t_engine[j] != engine[j]]
    if not differ:
        return None
    j = min(differ, key=lambda k: len(texts[k]))  # the shortest reads best
    which = "raw" if t_raw[j] != raw[j] else "engine"
    mine, theirs = (raw[j], t_raw[j]) if which == "raw" else (engine[j], t_engine[j])
    backend = getattr(auto, "backend_tokenizer", None)
    components = differing_components(json.loads(file_tok.to_str()), json.loads(backend.to_str())) if backend else []
    cls = type(auto).__name__
    lib = f"transformers {cache.version('transformers')}"
    summary = (f"the references disagree: {lib}'s AutoTokenizer loads {cls}, which gives other ids than the "
               f"tokenizer.json for {len(differ)} of {len(texts)} corpus inputs"
               + (f" (it differs in {', '.join(components)})" if components else "")
               + f", e.g. {texts[j]!r}: tokenizer.json {mine}, {cls} {theirs}. This file follows the tokenizer.json "
               f"(as {', '.join(FILE_STACKS[:2])} do); {', '.join(CLASS_STACKS)} see {cls}'s ids")
    return {"follows": "tokenizer.json", "transformers_class": cls, "library": lib, "inputs": len(texts),
            "differ": len(differ), "components": components,
            "example": {"text": texts[j], "ids": which, "tokenizer.json": mine, cls: theirs},
            "stacks": {"tokenizer.json": list(FILE_STACKS), cls: list(CLASS_STACKS)}, "summary": summary}
