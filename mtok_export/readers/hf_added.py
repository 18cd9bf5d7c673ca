"""The added tokens a HF folder's configs declare, as transformers' fast tokenizer adds them on load:
the one rule both the tokenizer.json reader and its reference (`verify/reference.py`) apply, so the
file and the reference hold the same tokens (DESIGN section 4, "A HF folder's reference, defined
once").

transformers 5 (`TokenizersBackend.__init__` and `_post_init`) loads `tokenizers.Tokenizer.from_file`
and then makes two calls into it:

1. `add_tokens(first)`: every `added_tokens_decoder` entry of tokenizer_config.json (by id, flags as
   given, `AddedToken(**entry)`), then each named special token (`bos_token` ... `mask_token`, and
   any other `*_token` string key) and each `additional_special_tokens` / `extra_special_tokens`
   entry whose text is in neither the tokenizer.json's added tokens nor that list (a string becomes
   `AddedToken(text, special=True)`, a named one is marked special);
2. `add_special_tokens(then)`: every named special token and extra special token again (a string
   as `AddedToken(text, special=True, normalized=False)`).

Without `added_tokens_decoder` (older folders) the legacy path applies instead: special_tokens_map.json
overrides the config's roles, and added_tokens.json's entries are the decoder (special when a role
or extra token names them, `normalized=not special`).

`tokenizers` then gives each token its id: the text's id when the model vocabulary or the added
tokens already hold it (its flags replaced), else the next id after the added tokens (the vocabulary
size when none lies beyond it).  The id a config writes is therefore not the id a token gets: where
they differ the reader notes it.  The reference makes the same two calls on `tokenizers` itself
(`as_tokenizers`), so only which tokens and flags are shared here, never how they are applied."""

from __future__ import annotations

from dataclasses import dataclass, replace

from ..ir import AddedToken

ROLES = ("bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token", "mask_token")
_FLAGS = ("single_word", "lstrip", "rstrip", "normalized", "special")


@dataclass(frozen=True)
class Declared:
    """One token transformers passes to `tokenizers` on load: its text and flags (`token.id`: the id
    `added_tokens_decoder` / added_tokens.json writes, -1 for none; not the id it gets)."""

    token: AddedToken
    source: str = ""  # where the configs declare it, for notes

    @property
    def content(self) -> str:
        return self.token.content

    @property
    def config_id(self) -> int | None:
        return self.token.id if self.token.id >= 0 else None

    def flags(self) -> dict:
        return {k: getattr(self.token, k) for k in _FLAGS}

    def as_special(self) -> Declared:
        return replace(self, token=replace(self.token, special=True))


def _declared(content: str, source: str, config_id: int = -1, **flags) -> Declared:
    return Declared(AddedToken(config_id, content, **flags), source)


@dataclass(frozen=True)
class DeclaredAdded:
    """The two lists of the two calls (module docstring)."""

    first: tuple[Declared, ...] = ()  # add_tokens
    then: tuple[Declared, ...] = ()  # add_special_tokens

    def __bool__(self) -> bool:
        return bool(self.first or self.then)


def _token(value, source: str, *, special: bool | None = None) -> Declared | None:
    """A config's token value as transformers holds it: a string (None here: it stays a string until
    a call makes it an `AddedToken`), or an AddedToken-like object with its flags (`special` forced
    where transformers forces it)."""
    if isinstance(value, dict) and isinstance(value.get("content"), str) and value["content"]:
        is_special = bool(value.get("special", False)) if special is None else special
        flags = {k: value[k] for k in _FLAGS[:-1] if isinstance(value.get(k), bool)}
        flags.setdefault("normalized", not is_special)
        return _declared(value["content"], source, special=is_special, **flags)
    return None


def _named(value, source: str) -> Declared | None:
    """A special token named by a config: a string is `AddedToken(text, special=True)` (not normalized)."""
    if isinstance(value, str):
        return _declared(value, source, normalized=False, special=True) if value else None
    return _token(value, source)


def _roles(cfg: dict, fname: str, *, legacy: bool) -> dict[str, Declared]:
    """Named special tokens: the standard roles and any other `*_token` key holding a token."""
    out = {}
    for key, value in cfg.items():
        if key in ROLES or (key.endswith("_token") and isinstance(value, (str, dict))):
            t = _named(value, f"{fname} {key}") if not (legacy and isinstance(value, dict)) else \
                _token(value, f"{fname} {key}", special=True)  # special_tokens_map.json's objects: special
            if t is not None:
                out[key] = t
    return out


def _extras(cfg: dict, fname: str, *, legacy: bool) -> list[Declared]:
    value = cfg.get("extra_special_tokens") or cfg.get("additional_special_tokens") or []
    values = value.values() if isinstance(value, dict) else value if isinstance(value, list) else []
    source = f"{fname} additional_special_tokens"
    found = (_token(v, source, special=True) if legacy and isinstance(v, dict) else _named(v, source) for v in values)
    return [t for t in found if t is not None]


def declared_added(tcfg: dict, stm: dict, added_json: dict, existing: set[str]) -> DeclaredAdded:
    """What transformers adds on load to a tokenizer.json whose own added tokens are `existing`
    (their texts), from tokenizer_config.json (`tcfg`), special_tokens_map.json (`stm`) and
    added_tokens.json (`added_json`), each `{}` when absent."""
    roles = _roles(tcfg, "tokenizer_config.json", legacy=False)
    extras = _extras(tcfg, "tokenizer_config.json", legacy=False)
    decoder: dict[int, Declared] = {}
    if "added_tokens_decoder" in tcfg:
        for key, entry in (tcfg.get("added_tokens_decoder") or {}).items():
            t = _token(entry, f"tokenizer_config.json added_tokens_decoder[{key}]")
            if t is not None and str(key).isdigit():
                decoder[int(key)] = replace(t, token=replace(t.token, id=int(key)))
    else:  # legacy: special_tokens_map.json over the config, then added_tokens.json
        roles.update(_roles(stm, "special_tokens_map.json", legacy=True))
        extras += [t for t in _extras(stm, "special_tokens_map.json", legacy=True)
                   if t.content not in {e.content for e in extras}]
        named = {t.content for t in (*roles.values(), *extras)}
        for content, i in added_json.items():
            if isinstance(i, int) and not isinstance(i, bool) and content:
                special = content in named
                decoder[i] = _declared(content, f"added_tokens.json {content!r}", i, normalized=not special,
                                       special=special)
    decoder = dict(sorted(decoder.items()))
    # a standard role whose text the decoder holds is the decoder's token (its flags)
    by_content = {t.content: t for t in decoder.values()}
    roles = {k: by_content.get(t.content, t) if k in ROLES else t for k, t in roles.items()}
    named = {t.content for t in roles.values()}
    # a decoder token a role names is made special (transformers sets the flag on the shared object)
    first = [t.as_special() if t.content in named else t for t in decoder.values()]
    encoder = set(existing) | {t.content for t in first}
    for t in (*roles.values(), *extras):
        if t.content not in encoder:
            first.append(t.as_special() if t.content in named else t)
            encoder.add(t.content)
    # `add_special_tokens` makes every token of the second call special
    then = [t.as_special() for t in (*roles.values(), *extras)]
    return DeclaredAdded(tuple(first), tuple(then))


def apply(added: tuple[AddedToken, ...], vocab: dict[str, int], vocab_size: int,
          declared: DeclaredAdded, notes: list[str]) -> tuple[AddedToken, ...]:
    """`declared` applied to a tokenizer.json's own `added` tokens over the model `vocab` (`vocab_size`
    entries), as `tokenizers` applies the two calls: a text already held keeps its id and takes the
    new flags, a new one gets the next id.  Notes say which tokens came from the configs only and
    where a config's id is not the one the token gets."""
    by_id = {t.id: t for t in added}
    ids = {t.content: t.id for t in added}
    for t in (*declared.first, *declared.then):
        i = ids.get(t.content, vocab.get(t.content))
        if i is None:
            top = max(by_id, default=None)
            i = vocab_size if top is None or (top < vocab_size and vocab_size) else top + 1
            notes.append(f"added token {t.content!r} (id {i}) is only in {t.source}: added as transformers adds it on load"
                         + (f" (the config says id {t.config_id}; tokenizers gives the next free id)"
                            if t.config_id is not None and t.config_id != i else ""))
        by_id[i] = AddedToken(i, t.content, **t.flags())
        ids[t.content] = i
    return tuple(by_id[i] for i in sorted(by_id))
