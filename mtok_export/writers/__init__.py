"""Writers: IR -> output formats, one module per format (DESIGN section 1).  Each writer emits one
canonical, deterministic form (style principle 10): `hf_json` writes HF `tokenizer.json` plus the
`tokenizer_config.json` / `generation_config.json` beside it, so any IR (read from a model
directory, lowered for MNN, or read back from a `.mtok`) can be loaded by `tokenizers` and
`transformers` again."""
