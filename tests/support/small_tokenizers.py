"""Small tokenizers built by a test (never downloaded): a byte-level BPE tokenizer.json with the
configs a test gives, and a bare BERT vocab.txt, cased or not."""

from __future__ import annotations

import json
from pathlib import Path


def byte_level_folder(directory: Path, tcfg=None, stm=None, added_json=None) -> Path:
    """A small byte-level BPE tokenizer.json (trained here) with `<|endoftext|>` as its one added
    token, and the configs given (each a dict, or a function of the vocabulary size)."""
    from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers, trainers

    directory.mkdir(parents=True, exist_ok=True)
    tk = Tokenizer(models.BPE())
    tk.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tk.decoder = decoders.ByteLevel()
    text = ["Hello world, the tokens of a small test.", "Numbers 123 and words: tokenizer, token, test."] * 4
    tk.train_from_iterator(text, trainers.BpeTrainer(vocab_size=300, show_progress=False,
                                                     initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    tk.add_special_tokens([AddedToken("<|endoftext|>", special=True, normalized=False)])
    tk.save(str(directory / "tokenizer.json"))
    n = tk.get_vocab_size()
    for name, cfg in (("tokenizer_config.json", tcfg), ("special_tokens_map.json", stm), ("added_tokens.json", added_json)):
        if cfg is not None:
            (directory / name).write_text(json.dumps(cfg(n) if callable(cfg) else cfg), encoding="utf-8")
    return directory


BERT_SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
BERT_WORDS = ["hello", "world", "the", "a", "test", ",", ".", "!", "##s", "##ing", "h", "e", "l", "o", "w", "r", "d", "t"]


def bare_vocab(directory: Path, cased: bool) -> Path:
    """A vocab.txt alone, BERT-shaped; a cased one also holds the capitalized words."""
    directory.mkdir(parents=True, exist_ok=True)
    words = BERT_SPECIALS + BERT_WORDS + (["Hello", "World", "The", "H", "W", "T"] if cased else [])
    (directory / "vocab.txt").write_text("\n".join(words) + "\n", encoding="utf-8")
    return directory
