"""Comparing tokenizers: the per-layer static diff of two IRs (`layers`), the behavioural diff on a
corpus (`behaviour`), compression statistics (`stats`) and the engines both run (`engines`)."""
