"""The token types llama.cpp gives a GGUF vocabulary on load, beyond `tokenizer.ggml.token_type`.

llama.cpp (its `llama_vocab::load`, as vendored in llama-cpp-python 0.3.36) recognises end-of-turn,
fill-in-the-middle and end-of-generation tokens by their text and makes each a control token when
the file typed it otherwise ("control-looking token ... its type will be overridden"); a control
token is then matched whole in the input, like an HF special token.  Qwen2's and Qwen3.5's
vocabularies hold an ordinary `</s>` that this makes one id (`"</s>"` gives 128247 where the
merges give `</` `s` `>`).  It also strips the whitespace after Phi-3's special tokens (by the
model's name).  A GGUF is made for llama.cpp, so the reader reads the vocabulary as llama.cpp
does, and says so in the notes."""

from __future__ import annotations

# Each list is matched only when the file does not set that token's id key (llama.cpp looks for the
# one token then); the end-of-generation list always.
_BY_KEY = {
    "eot": ("<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>", "<|endoftext|>", "<|end_of_text|>", "<EOT>",
            "_<EOT>", "[EOT]", "<｜end▁of▁sentence｜>", "<end_of_utterance>"),
    "eom": ("<|eom_id|>",),
    "fim_pre": ("<|fim_prefix|>", "<fim-prefix>", "<fim_prefix>", "<｜fim▁begin｜>", "<PRE>", "▁<PRE>",
                "<|code_prefix|>", "<|prefix|>"),
    "fim_suf": ("<|fim_suffix|>", "<fim-suffix>", "<fim_suffix>", "<｜fim▁hole｜>", "<SUF>", "▁<SUF>",
                "<|code_suffix|>", "<|suffix|>"),
    "fim_mid": ("<|fim_middle|>", "<fim-middle>", "<fim_middle>", "<｜fim▁end｜>", "<MID>", "▁<MID>",
                "<|code_middle|>", "<|middle|>"),
    "fim_pad": ("<|fim_pad|>", "<fim-pad>", "<fim_pad>", "<PAD>", "[PAD]"),
    "fim_rep": ("<|fim_repo|>", "<|repo_name|>", "<fim-repo>", "<REPO>", "<reponame>"),
    "fim_sep": ("<|file_sep|>",),
}
END_OF_GENERATION = ("<|eot_id|>", "<|im_end|>", "<|end|>", "<|return|>", "<|call|>", "<|flush|>", "<|calls|>",
                     "<end_of_turn>", "<|endoftext|>", "</s>", "<|eom_id|>", "<EOT>", "_<EOT>", "[EOT]", "[EOS]",
                     "<|end_of_text|>", "<end_of_utterance>", "<eos>", "<turn|>", "<|tool_response>",
                     "<｜end▁of▁sentence｜>", "[e~[")
_ALWAYS_USER = ("<|channel|>", "<|message|>", "<|start|>", "<|constrain|>")  # gpt-oss: always rendered
# Phi-3 (by general.name): every special token strips the whitespace after it, but these
_PHI3_NO_RSTRIP = ("<unk>", "<s>", "<|endoftext|>")
TYPE_NORMAL, TYPE_CONTROL, TYPE_USER = 1, 3, 4
_SPECIAL_TYPES = (2, 3, 4)  # unknown, control, user-defined: matched whole in the input


def llama_cpp_types(tokens: list[str], types: list[int], keys: set[str]) -> tuple[list[int], list[str]]:
    """(`types` as llama.cpp holds them after loading, notes naming each change).  `keys`: the
    `tokenizer.ggml.*_token_id` names the file sets (`eot`, `fim_pre`, ...)."""
    types = list(types)
    last = {t: i for i, t in enumerate(tokens)}  # llama.cpp's text -> id map keeps the last of equal texts
    control: list[int] = []
    texts = {t for key, names in _BY_KEY.items() if key not in keys for t in names} | set(END_OF_GENERATION)
    for text in sorted(texts & last.keys()):
        i = last[text]
        if types[i] != TYPE_CONTROL:
            types[i] = TYPE_CONTROL
            control.append(i)
    notes = []
    if control:
        notes.append("control tokens by their text, as llama.cpp types them on load: "
                     + ", ".join(f"{tokens[i]!r} ({i})" for i in sorted(control)))
    for text in _ALWAYS_USER:
        if text in last:
            types[last[text]] = TYPE_USER
    # o200k_harmony / solar-open: their <|end|> is rendered as text (no end of generation)
    if "<|end|>" in last and ({"<|return|>", "<|call|>"} <= last.keys() or {"<|calls|>", "<|flush|>"} <= last.keys()):
        types[last["<|end|>"]] = TYPE_USER
    # gemma4 and plamo: their </s> is an ordinary token
    if "</s>" in last and {"<|tool_response>", "<|plamo:eos|>"} & last.keys():
        types[last["</s>"]] = TYPE_NORMAL
    return types, notes


def rstrip_ids(name: str, tokens: list[str], types: list[int]) -> set[int]:
    """The ids llama.cpp strips the whitespace after: Phi-3's special tokens and `</s>` (by the
    model's `general.name`), except `<unk>`, `<s>` and `<|endoftext|>`."""
    if "phi-3" not in name.lower() and "phi3" not in name.lower():
        return set()
    last = {t: i for i, t in enumerate(tokens)}
    ids = {i for i, ty in enumerate(types) if ty in _SPECIAL_TYPES}
    if "</s>" in last:
        ids.add(last["</s>"])
    return ids - {last[t] for t in _PHI3_NO_RSTRIP if t in last}
