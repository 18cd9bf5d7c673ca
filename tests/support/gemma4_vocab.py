"""A small vocabulary in Gemma-4's GGUF shape (`tokenizer.ggml.model` "gemma4"), written with gguf-py:
the shared corpus holds llama.cpp's Gemma-4 test strings but no Gemma-4 vocabulary, so the reader is
checked against llama.cpp on this one (tests/test_gguf.py, the conformance row)."""

from __future__ import annotations

from pathlib import Path


def gemma4_gguf(path: Path) -> Path:
    """A small vocabulary in Gemma-4's GGUF shape: control <pad> <eos> <bos>, <unk>, the 256 <0xXX>
    byte tokens, raw-character tokens with `▁` for a space, and merges by rank."""
    import gguf

    specials = [("<pad>", 3), ("<eos>", 3), ("<bos>", 3), ("<unk>", 2)]
    byte_tokens = [(f"<0x{b:02X}>", 6) for b in range(256)]
    merges = ["h e", "l l", "ll o", "he llo", "\u2581 hello", "w o", "r l", "rl d", "wo rld", "\u2581 wo", "\n \n",
              "\u2581 world", "l o", "lo w", "e r", "\u2581 low"]
    pieces = ["\u2581", "h", "e", "l", "o", "w", "r", "d", "x", "y", "\n"]
    for m in merges:
        a, b = m.split(" ")
        pieces.append(a + b)
    tokens = specials + byte_tokens + [(p, 1) for p in dict.fromkeys(pieces)]
    w = gguf.GGUFWriter(str(path), "gemma4")
    w.add_tokenizer_model("gemma4")
    w.add_token_list([t for t, _ in tokens])
    w.add_token_types([ty for _, ty in tokens])
    w.add_token_scores([0.0] * len(tokens))
    w.add_token_merges(merges)
    w.add_bos_token_id(2)
    w.add_eos_token_id(1)
    w.add_unk_token_id(3)
    w.add_pad_token_id(0)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.close()
    return path
