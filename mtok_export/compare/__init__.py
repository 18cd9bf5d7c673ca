"""Comparing tokenizers: the per-layer static diff of two IRs (`layers`), the behavioural diff on a
corpus (`behaviour`), compression statistics (`stats`) and the engines both run (`engines`).

The layer names live here, free of imports, so the CLI can offer them without loading the IR."""

# Static layers, in pipeline order: normalize, pre-tokenize, model, post-process (template), decode.
STATIC_LAYERS = ("normalizer", "tables", "pre_tokenizer", "model", "vocab", "merges", "scores", "added_tokens",
                 "specials", "post_processor", "chat_template", "decoder")
# What a string goes through, in order; the behavioural diff names the first that differs:
# `ids` is the model's output (no special tokens), `post_processed` what encode() returns.
BEHAVIOUR_LAYERS = ("normalized", "pre_tokenized", "ids", "post_processed", "decoded")
