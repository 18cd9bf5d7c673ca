"""tiktoken ranks JSON, as the JavaScript ports ship an encoding (npm `tiktoken`'s `encoders/*.json`;
js-tiktoken's `ranks/*.js` hold the same object): `{"pat_str": regex, "special_tokens": {token: id},
"bpe_ranks": text}` (the GPT-2 family adds `"explicit_n_vocab"`; js-tiktoken's modules wrap it in
`export default ...;` or `module.exports = ...;`, `JS_MODULE`) -> IR, as a tiktoken rank file
with its pattern and specials beside it (`tiktoken.parse_ranks_with`).

`bpe_ranks` comes in two forms, told apart by its first character as both JS loaders tell them
(js-tiktoken `src/core.ts`, the `Tiktoken` constructor; the WASM `tiktoken`'s `parse_bfe`):
- `!`: the compressed form, lines `! <offset> <base64 token> <base64 token> ...`, the k-th token of
  a line (from 0) has rank offset + k (the first field is a marker, skipped);
- otherwise a rank file's own text, `<base64 token> <rank>` lines (`tiktoken.parse_ranks`).

Read strictly, as a rank file is: canonical base64, no token or rank twice (the JS loaders would
let a later token win; a file where that matters is refused, not guessed), a gap only where a
special token takes the id (p50k_base's 50256).  `KNOWN` is keyed by the sha256 of a rank file,
so the ranks are hashed in the rank file's form (`<base64> <rank>\\n` by rank, as OpenAI's files
are written): the JSON of cl100k_base is known as cl100k_base."""

from __future__ import annotations

import base64
import binascii
import hashlib
import re
from pathlib import Path

from ..errors import InputError
from ..json_value import parse_json
from .finish import Parsed
from .tiktoken import parse_ranks, parse_ranks_with

KEYS = ("pat_str", "special_tokens", "bpe_ranks")  # what every such file holds
OPTIONAL = ("explicit_n_vocab",)


def decode_bpe_ranks(text: str, where: str) -> dict[bytes, int]:
    """`bpe_ranks` -> {token bytes: rank}, either form (see the module docstring)."""
    if not text.startswith("!"):
        return parse_ranks(text.encode("utf-8"), f"{where} (bpe_ranks)")
    ranks: dict[bytes, int] = {}
    at: dict[int, str] = {}  # rank -> where it was given, for the messages
    for lineno, line in enumerate(text.split("\n"), 1):
        if not line:
            continue
        fields = line.split(" ")
        here = f"{where}: bpe_ranks line {lineno}"
        if len(fields) < 2 or not fields[1].isdigit():
            raise InputError(f"{here}: expected '! <offset> <base64 token>...', got {line[:60]!r}")
        offset = int(fields[1])
        for k, tok64 in enumerate(fields[2:]):
            rank = offset + k
            try:
                token = base64.b64decode(tok64, validate=True)
            except (binascii.Error, ValueError):
                raise InputError(f"{here}, token {k}: {tok64[:40]!r} is not valid base64") from None
            if token in ranks:
                raise InputError(f"{here}, token {k}: {token!r:.40} already has rank {ranks[token]} "
                                 f"({at[ranks[token]]})")
            if rank in at:
                raise InputError(f"{here}, token {k}: rank {rank} is already given ({at[rank]})")
            ranks[token] = rank
            at[rank] = f"line {lineno}, token {k}"
    if not ranks:
        raise InputError(f"{where}: bpe_ranks holds no token")
    return ranks  # a gap must be a special token's id: `parse_ranks_with` checks it


def rank_file_digest(ranks: dict[bytes, int]) -> str:
    """sha256 of the ranks written as a rank file (`<base64> <rank>` lines by rank): `KNOWN`'s key."""
    h = hashlib.sha256()
    for token, rank in sorted(ranks.items(), key=lambda x: x[1]):
        h.update(base64.b64encode(token) + b" " + str(rank).encode() + b"\n")
    return h.hexdigest()


# js-tiktoken's ranks/*.js and *.cjs: `export default <the object>;` / `module.exports = <the object>;`
# (its build writes each so), read as the JSON they wrap and nothing else
JS_MODULE = re.compile(rb"\A(?:export default |module\.exports = )(\{.*\})\s*;?\s*\Z", re.S)


def read_ranks_json(path: Path) -> tuple[dict[bytes, int], str, dict[str, int]]:
    """(ranks, pat_str, special_tokens) of a ranks JSON (or js-tiktoken's module of one), each
    checked for its type."""
    try:
        raw = Path(path).read_bytes()
    except OSError as e:
        raise InputError(f"{path}: cannot read ({e.strerror or e})") from None
    if raw.startswith((b"export ", b"module.")):
        m = JS_MODULE.match(raw)
        if m is None:
            raise InputError(f"{path}: a JavaScript module of a ranks object is 'export default {{...}};' or "
                             "'module.exports = {...};' and nothing else")
        raw = m.group(1)
    data = parse_json(raw, path)
    where = str(path)
    if not isinstance(data, dict):
        raise InputError(f"{where}: a tiktoken ranks JSON is an object, not {type(data).__name__}")
    missing = [k for k in KEYS if k not in data]
    if missing:
        raise InputError(f"{where}: a tiktoken ranks JSON holds {', '.join(KEYS)}; {', '.join(missing)} missing")
    extra = sorted(set(data) - set(KEYS) - set(OPTIONAL))
    if extra:
        raise InputError(f"{where}: unknown key(s) {', '.join(extra)} beside {', '.join(KEYS)}")
    pattern, special, text = data["pat_str"], data["special_tokens"], data["bpe_ranks"]
    if not isinstance(pattern, str) or not pattern:
        raise InputError(f"{where}: pat_str must be a non-empty string")
    if not isinstance(text, str):
        raise InputError(f"{where}: bpe_ranks must be a string")
    if not isinstance(special, dict) or not all(isinstance(i, int) and not isinstance(i, bool)
                                                for i in special.values()):
        raise InputError(f"{where}: special_tokens must be an object {{token: id}}")
    ranks = decode_bpe_ranks(text, where)
    n_vocab = data.get("explicit_n_vocab")
    # tiktoken's own check of explicit_n_vocab: every id below it is a rank or a special, once
    if n_vocab is not None and (not isinstance(n_vocab, int) or isinstance(n_vocab, bool)
                                or len(ranks) + len(special) != n_vocab
                                or max([*ranks.values(), *special.values()]) != n_vocab - 1):
        raise InputError(f"{where}: explicit_n_vocab {n_vocab!r} is not the {len(ranks)} ranks and "
                         f"{len(special)} special token(s) it holds")
    return ranks, pattern, special


def parse_tiktoken_json(path: Path) -> Parsed:
    path = Path(path)
    ranks, pattern, special = read_ranks_json(path)
    return parse_ranks_with(path, ranks, rank_file_digest(ranks), pattern=pattern, special=special,
                            pattern_src=f"{path.name} pat_str", special_src=f"{path.name} special_tokens",
                            stops_of_known=True)
