"""mtok-export: convert LLM tokenizers to MNN's on-device formats, and prove they tokenize the same."""

__version__ = "0.1.0"
