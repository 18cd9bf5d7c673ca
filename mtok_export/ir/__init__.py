"""The one in-memory IR every reader produces and every writer consumes (DESIGN section 1)."""

from . import decoders, models, normalizers, pre_tokenizers, processors
from .base import REGISTRIES, Pattern, params
from .tokenizer import AddedToken, ChatTemplate, InputFile, Metadata, Provenance, Tokenizer

__all__ = ["decoders", "models", "normalizers", "pre_tokenizers", "processors", "REGISTRIES",
           "Pattern", "params", "AddedToken", "ChatTemplate", "InputFile", "Metadata",
           "Provenance", "Tokenizer"]
