"""Unicode normalization tables for the `.mtok` code-6/code-7 normalizers (spec sections 2.3.1, 6):
per-code-point NFC/NFKC/NFD/NFKD tables (cached) and SentencePiece ``precompiled_charsmap``
decoding.  The `.mtok` NormTable codec that writes the tables is `mtok/normtable.py`."""

from .tables import (
    CACHE_FORMAT_VERSION,
    FORMS,
    MAX_CODEPOINT,
    Entry,
    Progress,
    Table,
    build_table,
    cache_dir,
    cache_path,
    charsmap_rules,
    charsmap_table,
    clear_memory_cache,
    table,
)

__all__ = [
    "CACHE_FORMAT_VERSION", "FORMS", "MAX_CODEPOINT", "Entry", "Progress", "Table",
    "build_table", "cache_dir", "cache_path", "charsmap_rules", "charsmap_table",
    "clear_memory_cache", "table",
]
