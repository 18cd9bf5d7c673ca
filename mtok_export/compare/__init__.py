"""Comparing tokenizers by what they do: the behavioural diff on a corpus (`behaviour`), compression
statistics (`stats`) and the engines both run (`engines`).  The static diff of two IRs is below
verification, in `dump.layer_diff`: the verification pipeline shows it, and these use verify's engines.

The layer names live here, free of imports, so the CLI can offer them without loading the IR."""

# What a string goes through, in order; the behavioural diff names the first that differs:
# `ids` is the model's output (no special tokens), `post_processed` what encode() returns.
BEHAVIOUR_LAYERS = ("normalized", "pre_tokenized", "ids", "post_processed", "decoded")
