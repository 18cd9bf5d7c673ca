"""Mistral's `tekken.json` (shipped in the `mistral_common` package and in Mistral model repos) -> IR.

A tekken file is a tiktoken vocabulary in JSON: `config` (`pattern`, `default_vocab_size`,
`default_num_special_tokens`, `version`), `vocab` (`{rank, token_bytes (base64), token_str}` in
rank order) and, from v7 on, `special_tokens` (`{rank, token_str, is_control}`).  mistral_common's
Tekkenizer (the reference) puts the special tokens at ids 0..S-1 (files without the list use its
20 historical ones, `<unk> <s> </s> [INST] ...`, and every missing id is `<SPECIAL_i>`), keeps the
first `default_vocab_size - S` ranks and shifts them by S.

The IR is the tiktoken one (`tiktoken.ranks_to_bpe`: byte-level BPE, merges ordered by rank,
`ignore_merges`), with every id shifted by S, the special tokens as special added tokens, BOS
`<s>` added by the post-processor (mistral_common's `encode(s, bos=True)`) and `</s>` as stop id.
mistral_common encodes special-token text inside ordinary text as text; HF and MNN split it out:
recorded in `Metadata.differences`."""

from __future__ import annotations

import base64
import binascii
from pathlib import Path

from .. import losses as L
from ..errors import InputError
from ..ir import AddedToken, Pattern, Tokenizer
from ..ir import decoders as D
from ..ir import models as M
from ..ir import pre_tokenizers as P
from ..ir import processors as R
from ..losses import Loss
from .finish import Parsed, finish, read_side_files
from ..json_value import load_json
from .regex_check import check_tiktoken_pattern
from .tiktoken import ranks_to_bpe

# mistral_common's Tekkenizer.DEPRECATED_SPECIAL_TOKENS (files before v7 carry no list)
LEGACY_SPECIALS = ("<unk>", "<s>", "</s>", "[INST]", "[/INST]", "[AVAILABLE_TOOLS]", "[/AVAILABLE_TOOLS]",
                   "[TOOL_RESULTS]", "[/TOOL_RESULTS]", "[TOOL_CALLS]", "[IMG]", "<pad>", "[IMG_BREAK]",
                   "[IMG_END]", "[PREFIX]", "[MIDDLE]", "[SUFFIX]", "[SYSTEM_PROMPT]", "[/SYSTEM_PROMPT]",
                   "[TOOL_CONTENT]")


def _int(value, where: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise InputError(f"{where} must be a non-negative integer, got {value!r:.40}")
    return value


def read_tekken(path: Path, *, chat_template: str | None = None) -> Tokenizer:
    """`parse_tekken`, finished; `chat_template` picks a named template or a file."""
    return finish(parse_tekken(path), chat_template)


def parse_tekken(path: Path) -> Parsed:
    path = Path(path)
    data = load_json(path)
    if not isinstance(data, dict) or not isinstance(data.get("config"), dict) or not isinstance(data.get("vocab"), list):
        raise InputError(f"{path}: a tekken file is an object with 'config' and 'vocab' (list)")
    cfg = data["config"]
    pattern = cfg.get("pattern")
    if not isinstance(pattern, str) or not pattern:
        raise InputError(f"{path}: $.config.pattern must be the split regex (a non-empty string)")
    check_tiktoken_pattern(pattern, f"{path}: $.config.pattern")  # mistral_common encodes with tiktoken
    n_special = _int(cfg.get("default_num_special_tokens"), f"{path}: $.config.default_num_special_tokens")
    size = _int(cfg.get("default_vocab_size"), f"{path}: $.config.default_vocab_size")
    vocab_entries = data["vocab"]
    if size - n_special > len(vocab_entries) or size < n_special:
        raise InputError(f"{path}: $.config.default_vocab_size {size} needs {size - n_special} ranks after "
                         f"{n_special} special tokens, the file has {len(vocab_entries)}")

    ranks: dict[bytes, int] = {}
    for i, entry in enumerate(vocab_entries[:size - n_special]):
        where = f"{path}: $.vocab[{i}]"
        if not isinstance(entry, dict) or entry.get("rank") != i:
            raise InputError(f"{where}: expected {{rank: {i}, token_bytes, token_str}}")
        try:
            token = base64.b64decode(entry.get("token_bytes") or "", validate=True)
        except (binascii.Error, ValueError, TypeError):
            raise InputError(f"{where}.token_bytes is not valid base64") from None
        if not token or token in ranks:
            raise InputError(f"{where}.token_bytes is empty or repeats rank {ranks.get(token)}")
        if i < 256 and token != bytes([i]):
            raise InputError(f"{where}: the first 256 ranks must be the single bytes 0x00..0xff")
        ranks[token] = i

    specials = _specials(data, n_special, path)
    vocab, merges, _ = ranks_to_bpe(ranks)
    # The special tokens are in the model vocabulary too, as in HF's tekken tokenizer.json: ids stay
    # dense (the runtime indexes id_to_token by id) and they decode.
    shifted = {t: r + n_special for t, r in vocab.items()}
    clash = [t for t in specials if t in shifted]
    if clash:
        raise InputError(f"{path}: special token {clash[0]!r} is also ordinary rank {shifted[clash[0]] - n_special}")
    vocab = {**{t: i for i, t in enumerate(specials)}, **shifted}
    added = tuple(AddedToken(i, t, normalized=False, special=True) for i, t in enumerate(specials))
    bos, eos = specials[1], specials[2]
    post = R.TemplateProcessing(single=(R.Piece(bos, 0, True), R.Piece("A")),
                                pair=(R.Piece(bos, 0, True), R.Piece("A"), R.Piece("B", 1)),
                                special_tokens=(R.SpecialToken(bos, (1,), (bos,)),))
    pre = P.Sequence((P.Split(Pattern(pattern, regex=True), "Isolated"),
                      P.ByteLevel(add_prefix_space=False, trim_offsets=True, use_regex=False)))
    notes = [f"tekken {cfg.get('version', '?')}: {n_special} special tokens at ids 0..{n_special - 1}, "
             f"{len(ranks)} ranks shifted by {n_special}"]
    if "special_tokens" not in data:
        notes.append("no special_tokens list: mistral_common's 20 historical special tokens")
    diff = Loss(L.TEKKEN_SPECIAL_TEXT, "reader", "$.special_tokens", "mistral_common encodes special-token text "
                "inside ordinary text as text; HF and the runtime split it out as the special token",
                trigger=tuple(t for t in specials if t))
    return Parsed(model=M.BPE(vocab=vocab, merges=merges, ignore_merges=True), side=read_side_files(path.parent),
                  inputs=[path], added=added, notes=notes, pre_tokenizer=pre, decoder=D.ByteLevel(),
                  post_processor=post, bos=bos, eos=eos, add_bos_token=True, add_eos_token=False,
                  differences=(diff,), mistral_file=path)


def _specials(data: dict, n: int, path: Path) -> list[str]:
    given = data.get("special_tokens")
    if given is None:
        names = list(LEGACY_SPECIALS[:n])
    else:
        if not isinstance(given, list):
            raise InputError(f"{path}: $.special_tokens must be a list")
        names = []
        for i, t in enumerate(given):
            if not isinstance(t, dict) or t.get("rank") != i or not isinstance(t.get("token_str"), str):
                raise InputError(f"{path}: $.special_tokens[{i}]: expected {{rank: {i}, token_str, is_control}}")
            names.append(t["token_str"])
    if len(names) > n:
        raise InputError(f"{path}: {len(names)} special tokens but default_num_special_tokens is {n}")
    names += [f"<SPECIAL_{i}>" for i in range(len(names), n)]
    if len(set(names)) != n or n < 3:
        raise InputError(f"{path}: special tokens must be {n} distinct texts, <unk> <s> </s> first")
    return names
