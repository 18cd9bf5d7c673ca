"""The JSON files beside a `tokenizer.json`: `tokenizer_config.json` (chat template, bos/eos,
cleanup flag, add_bos/eos, added_tokens_decoder), `chat_template.jinja`/`.json`,
`generation_config.json` and `config.json` (eos ids, embedding size)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ..chat.nesting import check_template
from ..errors import InputError, UnsupportedError
from ..json_value import load_json


def load_json_object(path: Path) -> dict:
    data = load_json(path)
    if not isinstance(data, dict):
        raise InputError(f"{path}: expected a JSON object, got {type(data).__name__}")
    for key, want in _KEY_TYPES.get(Path(path).name, ()):
        if data.get(key) is not None and type(data[key]) not in want:
            names = " or ".join(t.__name__ for t in want)
            raise UnsupportedError(f"{key} must be {names} or null, got {data[key]!r:.40}", json_path=f"$.{key}",
                                   path=str(path))
    if Path(path).name == "tokenizer_config.json":
        _check_added_tokens_decoder(data.get("added_tokens_decoder"), path)
    return data


# The config keys readers use as plain values, by file: checked once here so every reader (model
# directory, SentencePiece, vocab.json, tiktoken) can trust them (a number as tokenizer_class
# crashed the lowering; `true` as a vocab_size is not a size).
_KEY_TYPES = {
    "tokenizer_config.json": (("tokenizer_class", (str,)), ("legacy", (bool,))),
    "config.json": (("vocab_size", (int,)),),
}


def is_decimal_id(key) -> bool:
    """An `added_tokens_decoder` key: ASCII digits only (`"²".isdigit()` is true, `int("²")` fails)."""
    return isinstance(key, str) and key.isascii() and key.isdigit() and len(key) <= 10


def _check_added_tokens_decoder(decoder, path: Path):
    if decoder is None:
        return
    if not isinstance(decoder, dict):
        raise UnsupportedError("added_tokens_decoder must be an object", json_path="$.added_tokens_decoder",
                               path=str(path))
    for key, t in decoder.items():
        jp = f"$.added_tokens_decoder[{key!r}]"
        if not is_decimal_id(key):
            raise UnsupportedError(f"key {key!r:.40} is not a decimal token id", json_path=jp, path=str(path))
        if not isinstance(t, dict) or not isinstance(t.get("content"), str):
            raise UnsupportedError("must be an object with a string content", json_path=jp, path=str(path))
        for flag in ("single_word", "lstrip", "rstrip", "normalized", "special"):
            if flag in t and type(t[flag]) is not bool:
                raise UnsupportedError(f"{flag} must be a boolean, got {t[flag]!r:.40}", json_path=f"{jp}.{flag}",
                                       path=str(path))


def token_text(value, path: Path, key: str) -> str | None:
    """`bos_token` / `eos_token` as a string or an AddedToken-like object."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, dict) and isinstance(value.get("content"), str):
        return value["content"]
    raise UnsupportedError(f"{key} must be a string or an object with 'content'", json_path=f"$.{key}", path=str(path))


def id_list(value, path: Path, key: str) -> list[int]:
    if value is None:
        return []
    values = value if isinstance(value, list) else [value]
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in values):
        raise UnsupportedError(f"{key} must be an integer or a list of integers", json_path=f"$.{key}", path=str(path))
    return values


@dataclass
class Templates:
    """All chat templates found, default first, and where they came from."""

    named: list[tuple[str, str]] = field(default_factory=list)  # (name, text); name "default" first
    source: str = ""


def _templates_from(value, path: Path, key: str) -> list[tuple[str, str]]:
    if value is None:
        return []
    if isinstance(value, str):
        return [("default", value)]
    if isinstance(value, list):
        out = []
        for i, item in enumerate(value):
            if not (isinstance(item, dict) and isinstance(item.get("name"), str) and isinstance(item.get("template"), str)):
                raise UnsupportedError("each named chat template needs a string name and template",
                                       json_path=f"$.{key}[{i}]", path=str(path))
            out.append((item["name"], item["template"]))
        out.sort(key=lambda nt: nt[0] != "default")  # stable: default first, others in file order
        return out
    raise UnsupportedError("chat_template must be a string or a list of {name, template}",
                           json_path=f"$.{key}", path=str(path))


def find_templates(directory: Path, config: dict, config_path: Path) -> Templates:
    """transformers' order: `chat_template.jinja`, then `chat_template.json`, then the config key."""
    jinja = directory / "chat_template.jinja"
    if jinja.is_file():
        try:
            return Templates([("default", jinja.read_text(encoding="utf-8"))], jinja.name)
        except (OSError, UnicodeDecodeError) as e:
            raise InputError(f"{jinja}: cannot read as UTF-8 text ({e})") from e
    as_json = directory / "chat_template.json"
    if as_json.is_file():
        data = load_json_object(as_json)
        return Templates(_templates_from(data.get("chat_template"), as_json, "chat_template"), as_json.name)
    named = _templates_from(config.get("chat_template"), config_path, "chat_template")
    return Templates(named, f"{config_path.name}:chat_template" if named else "")


def embedding_range_notes(model_config: dict, ids) -> list[str]:
    """A note when a token id falls outside the model's embedding rows (config.json vocab_size)."""
    vocab_size = model_config.get("vocab_size")
    if not isinstance(vocab_size, int):
        return []
    beyond = sorted(i for i in set(ids) if i >= vocab_size)
    return [f"token id(s) {beyond[:8]} are outside the model's embedding range (config.json vocab_size "
            f"{vocab_size})"] if beyond else []


def header_special_order(added) -> tuple[int, ...]:
    """Special added tokens, longest content first: the runtime takes the first listed token that
    matches at a position, so this order makes its split leftmost-longest like HF's."""
    specials = sorted((t for t in added if t.special), key=lambda t: (-len(t.content.encode()), t.id))
    return tuple(dict.fromkeys(t.id for t in specials))


def pick_template(templates: Templates, directory: Path, config_path: Path, choice: str | None,
                  inputs: list) -> tuple[str, str, str, tuple[tuple[str, str], ...]]:
    """-> (text, name, source, other named templates): the default template, or `choice` (a
    template name or a file).  Files read for it are appended to `inputs` (provenance)."""
    if templates.source and templates.source != config_path.name + ":chat_template":
        inputs.append(directory / templates.source)
    text, name, source = "", "", templates.source
    if choice is not None:
        text, name, source = _choose(templates, choice)
        if source == choice:
            inputs.append(Path(choice))
    elif templates.named:
        name, text = templates.named[0]
    for t in {text, *(t for _, t in templates.named)}:
        check_template(t, str(directory / source.split(" ")[0]) if source else str(directory))
    return text, name, source, tuple((n, t) for n, t in templates.named if n != name)


def _choose(templates: Templates, choice: str) -> tuple[str, str, str]:
    for name, text in templates.named:
        if name == choice:
            return text, name, f"{templates.source} ({name})"
    p = Path(choice)
    if p.is_file():
        try:
            return p.read_text(encoding="utf-8"), "default", str(p)
        except (OSError, UnicodeDecodeError) as e:
            raise InputError(f"{p}: cannot read chat template ({e})") from e
    names = ", ".join(n for n, _ in templates.named) or "none"
    raise InputError(f"--chat-template {choice!r} is neither a template name (found: {names}) nor a file")
