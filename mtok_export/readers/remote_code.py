"""tiktoken-based repositories whose split regex and special tokens live in their own
`tokenization_*.py` (Qwen-1, Kimi-K2, GLM-4, Llama-3-style code): read that Python *statically*
with `ast`, never importing or executing it.

Every assignment in the module, in class bodies and in functions (`self.x = ...` binds `x`) is
evaluated in source order by a small interpreter that knows only literals and simple expressions:
strings, numbers, tuples, lists, dicts, `+` (and `-`, `*` on numbers), names bound earlier, f-strings,
`"sep".join(...)`, `range`, `enumerate(..., start=)`, `tuple`/`list`/`dict`, and comprehensions
over those.  Anything else (calls, attribute reads, file access) is "not a literal" and its binding
is skipped with the reason.  Then:

* the split regex is the first string bound to a name like `PAT_STR`/`pat_str`/`pattern`, or passed
  as `pat_str=` to a call;
* the special tokens are the last value bound to a name containing `special` that is a
  `{token: id}` / `{id: token}` dict, `(id, token)` pairs (`enumerate(..., start=N)`), or a list of
  tokens (ids then follow the ranks, as `num_base_tokens + i` does in Llama-3-style code).

Each value found is reported as `file:line (NAME)`.  Values given by the user (`--pattern`,
`--special`), found in a `tokenizer.json` / `tokenizer_config.json` beside the rank file, or in the
table of known vocabularies (checked against their references) win; the code is consulted only
for what is still missing.  When
the code holds a value that could not be read, the error names it and what was not a literal."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import InputError
from ..sniff import is_tiktoken_code
from .hf_config import load_json_object
from .finish import sha256
from ..ir import Tokenizer
from .finish import Parsed, finish
from .tiktoken import KNOWN, parse_tiktoken

MAX_ITEMS = 1 << 16  # a range or comprehension longer than this is not a token table


class NotLiteral(Exception):
    """The expression needs more than literals and simple expressions."""


@dataclass
class Found:
    value: object
    where: str  # "tokenization_x.py:12 (PAT_STR)"


@dataclass
class CodeFacts:
    pattern: Found | None = None
    special: Found | None = None
    skipped: list[str] = field(default_factory=list)  # "file:line NAME: reason" of pattern/special-like names


def _is_pattern_name(name: str) -> bool:
    n = name.lower()
    return n in ("pat", "pattern", "pat_str", "pat_string", "split_pattern") or n.endswith("pat_str")


def _is_special_name(name: str) -> bool:
    return "special" in name.lower()


class _Eval:
    def __init__(self):
        self.env: dict[str, object] = {}

    def __call__(self, node, scope=None):
        scope = scope if scope is not None else {}
        method = getattr(self, "_" + type(node).__name__, None)
        if method is None:
            raise NotLiteral(f"{type(node).__name__} is not a literal")
        return method(node, scope)

    def _Constant(self, n, s):
        if isinstance(n.value, (str, int, float, bool)) or n.value is None:
            return n.value
        raise NotLiteral("a non-text constant")

    def _Name(self, n, s):
        if n.id in s:
            return s[n.id]
        if n.id in self.env:
            return self.env[n.id]
        raise NotLiteral(f"{n.id} is not bound to a literal")

    def _Attribute(self, n, s):
        if isinstance(n.value, ast.Name) and n.value.id in ("self", "cls") and n.attr in self.env:
            return self.env[n.attr]
        raise NotLiteral(f"attribute .{n.attr} is not a literal")

    def _Tuple(self, n, s):
        return tuple(self._items(n.elts, s))

    def _List(self, n, s):
        return list(self._items(n.elts, s))

    def _items(self, elts, s):
        out = []
        for e in elts:
            if isinstance(e, ast.Starred):
                out.extend(self(e.value, s))
            else:
                out.append(self(e, s))
        return out

    def _Dict(self, n, s):
        if any(k is None for k in n.keys):
            raise NotLiteral("** in a dict literal")
        return {self(k, s): self(v, s) for k, v in zip(n.keys, n.values)}

    def _JoinedStr(self, n, s):
        parts = []
        for v in n.values:
            if isinstance(v, ast.Constant):
                parts.append(str(v.value))
            elif isinstance(v, ast.FormattedValue) and v.conversion == -1 and v.format_spec is None:
                parts.append(str(self(v.value, s)))
            else:
                raise NotLiteral("an f-string with a conversion or format spec")
        return "".join(parts)

    def _BinOp(self, n, s):
        a, b = self(n.left, s), self(n.right, s)
        if isinstance(n.op, ast.Add) and type(a) is type(b) and isinstance(a, (str, int, tuple, list)):
            return a + b
        if isinstance(n.op, (ast.Sub, ast.Mult)) and isinstance(a, int) and isinstance(b, int):
            return a - b if isinstance(n.op, ast.Sub) else a * b
        raise NotLiteral(f"{type(n.op).__name__} of {type(a).__name__} and {type(b).__name__}")

    def _UnaryOp(self, n, s):
        v = self(n.operand, s)
        if isinstance(n.op, ast.USub) and isinstance(v, int):
            return -v
        raise NotLiteral("a unary operator")

    def _Call(self, n, s):
        f = n.func
        kwargs = {k.arg: self(k.value, s) for k in n.keywords if k.arg is not None}
        args = [self(a, s) for a in n.args]
        if isinstance(f, ast.Attribute) and f.attr == "join" and isinstance(f.value, ast.Constant) \
                and isinstance(f.value.value, str) and len(args) == 1:
            items = list(args[0])
            if not all(isinstance(x, str) for x in items):
                raise NotLiteral("join of non-strings")
            return f.value.value.join(items)
        name = f.id if isinstance(f, ast.Name) else None
        if name == "range" and all(isinstance(a, int) for a in args) and 1 <= len(args) <= 3:
            r = range(*args)
            if len(r) > MAX_ITEMS:
                raise NotLiteral("a range too long for a token table")
            return list(r)
        if name == "enumerate" and len(args) == 1:
            start = kwargs.get("start", 0)
            if not isinstance(start, int):
                raise NotLiteral("enumerate start is not a number")
            return list(enumerate(args[0], start))
        if name in ("tuple", "list") and len(args) == 1:
            return (tuple if name == "tuple" else list)(args[0])
        if name == "dict" and len(args) == 1 and not kwargs:
            return dict(args[0])
        raise NotLiteral(f"a call to {ast.unparse(f)[:40]}")

    def _comprehension(self, gens, s, make):
        if len(gens) != 1 or gens[0].is_async:
            raise NotLiteral("a nested comprehension")
        g = gens[0]
        items = list(self(g.iter, s))
        if len(items) > MAX_ITEMS:
            raise NotLiteral("a comprehension too long for a token table")
        out = []
        for item in items:
            inner = dict(s)
            self._bind(g.target, item, inner)
            if all(self(c, inner) for c in g.ifs):
                out.append(make(inner))
        return out

    def _bind(self, target, value, scope):
        if isinstance(target, ast.Name):
            scope[target.id] = value
        elif isinstance(target, (ast.Tuple, ast.List)) and len(target.elts) == len(value):
            for t, v in zip(target.elts, value):
                self._bind(t, v, scope)
        else:
            raise NotLiteral("a comprehension target that is not names")

    def _ListComp(self, n, s):
        return self._comprehension(n.generators, s, lambda sc: self(n.elt, sc))

    _GeneratorExp = _ListComp

    def _DictComp(self, n, s):
        return dict(self._comprehension(n.generators, s, lambda sc: (self(n.key, sc), self(n.value, sc))))

    def _Compare(self, n, s):  # for comprehension filters such as `if i != 4`
        left = self(n.left, s)
        for op, right in zip(n.ops, n.comparators):
            r = self(right, s)
            ok = {ast.Eq: left == r, ast.NotEq: left != r, ast.Lt: left < r, ast.LtE: left <= r,
                  ast.Gt: left > r, ast.GtE: left >= r}.get(type(op))
            if ok is None:
                raise NotLiteral("a comparison operator")
            if not ok:
                return False
            left = r
        return True


def _targets(node) -> list[str]:
    ts = node.targets if isinstance(node, ast.Assign) else [node.target]
    out = []
    for t in ts:
        if isinstance(t, ast.Name):
            out.append(t.id)
        elif isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id in ("self", "cls"):
            out.append(t.attr)
    return out


def _special_map(value) -> dict[str, int] | list[str] | None:
    """The special tokens a value describes, or None if it is not a token table."""
    if isinstance(value, dict) and value:
        if all(isinstance(k, str) and isinstance(v, int) and not isinstance(v, bool) for k, v in value.items()):
            return dict(value)
        if all(isinstance(k, int) and isinstance(v, str) for k, v in value.items()):
            return {v: k for k, v in value.items()}
    if isinstance(value, (list, tuple)) and value:
        if all(isinstance(x, (list, tuple)) and len(x) == 2 and isinstance(x[0], int) and isinstance(x[1], str)
               for x in value):
            return {t: i for i, t in value}
        if all(isinstance(x, str) for x in value):
            return list(dict.fromkeys(value))
    return None


def read_code(path: Path) -> CodeFacts:
    """The split regex and special tokens a `tokenization_*.py` spells out (see the module docstring)."""
    try:
        source = path.read_text(encoding="utf-8")
        tree = ast.parse(source, filename=str(path))
    except OSError as e:
        raise InputError(f"{path}: cannot read ({e.strerror})") from None
    except (SyntaxError, UnicodeDecodeError, ValueError) as e:
        raise InputError(f"{path}: not valid Python ({e})") from None
    ev = _Eval()
    facts = CodeFacts()
    specials: list[Found] = []
    for node in _in_order(tree):
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
            names = _targets(node)
            if not names:
                continue
            where = f"{path.name}:{node.lineno}"
            try:
                value = ev(node.value)
            except (NotLiteral, TypeError, ValueError, RecursionError) as e:
                for name in names:
                    ev.env.pop(name, None)
                    if _is_pattern_name(name) or _is_special_name(name):
                        facts.skipped.append(f"{where} {name}: {e}")
                continue
            for name in names:
                ev.env[name] = value
                if facts.pattern is None and _is_pattern_name(name) and isinstance(value, str) and value:
                    facts.pattern = Found(value, f"{where} ({name})")
                if _is_special_name(name) and _special_map(value) is not None:
                    specials.append(Found(_special_map(value), f"{where} ({name})"))
        elif isinstance(node, ast.Call) and facts.pattern is None:
            for k in node.keywords:
                if k.arg == "pat_str":
                    try:
                        value = ev(k.value)
                    except (NotLiteral, TypeError, ValueError) as e:
                        facts.skipped.append(f"{path.name}:{node.lineno} pat_str=: {e}")
                        continue
                    if isinstance(value, str) and value:
                        facts.pattern = Found(value, f"{path.name}:{node.lineno} (pat_str=)")
    with_ids = [f for f in specials if isinstance(f.value, dict)]
    facts.special = (with_ids or specials or [None])[-1]
    return facts


def _in_order(tree):
    """Statements and calls in source order (module, class bodies, then function bodies)."""
    nodes = [n for n in ast.walk(tree) if isinstance(n, (ast.Assign, ast.AnnAssign, ast.Call))]
    return sorted(nodes, key=lambda n: (n.lineno, n.col_offset))


def _code_files(directory: Path) -> list[Path]:
    out = []
    for p in sorted(directory.glob("*.py")):
        if p.is_file():
            try:
                with open(p, "rb") as f:
                    head = f.read(1 << 16)
            except OSError as e:
                raise InputError(f"{p}: cannot read ({e.strerror})") from None
            if is_tiktoken_code(head):
                out.append(p)
    return out


def read_tiktoken_with_code(path: Path, *, pattern: str | None = None, special=None,
                            chat_template: str | None = None) -> Tokenizer:
    """`parse_tiktoken_with_code`, finished; `chat_template` picks a named template or a file."""
    return finish(parse_tiktoken_with_code(path, pattern=pattern, special=special), chat_template)


def parse_tiktoken_with_code(path: Path, *, pattern: str | None = None, special=None) -> Parsed:
    """A rank file, with its split regex and special tokens taken from the repository's
    `tokenization_*.py` when nothing before it in the order of the module docstring gives them."""
    path = Path(path)
    directory = path.parent
    pattern_src = special_src = None
    problems: list[str] = []
    have_tj = (directory / "tokenizer.json").is_file()
    cfg = directory / "tokenizer_config.json"
    have_cfg_specials = cfg.is_file() and bool(load_json_object(cfg).get("added_tokens_decoder"))
    known = sha256(path) in KNOWN  # a verified table entry wins over code read statically
    need_pattern = pattern is None and not have_tj and not known
    need_special = special is None and not have_tj and not have_cfg_specials and not known
    if need_pattern or need_special:
        for code in _code_files(directory):
            facts = read_code(code)
            problems += facts.skipped
            if need_pattern and pattern is None and facts.pattern is not None:
                pattern, pattern_src = facts.pattern.value, f"{directory.name}/{facts.pattern.where}"
            if need_special and special is None and facts.special is not None:
                special, special_src = facts.special.value, f"{directory.name}/{facts.special.where}"
    try:
        return parse_tiktoken(path, pattern=pattern, special=special, pattern_src=pattern_src, special_src=special_src)
    except InputError as e:
        if "holds only ranks" not in str(e):
            raise
        if problems:
            raise InputError(f"{e}; the repository code could not be read statically: {'; '.join(problems[:4])}") \
                from None
        if (absent := _absent_module(directory, cfg)) is not None:
            raise InputError(f"{e}; {absent}") from None
        raise


def _absent_module(directory: Path, cfg: Path) -> str | None:
    """What to say when `tokenizer_config.json`'s `auto_map` names a tokenizer module (Kimi-K2's
    `tokenization_kimi.TikTokenTokenizer`) that is not beside the rank file: that module is where
    such repositories keep the split regex and the special tokens."""
    if not cfg.is_file():
        return None
    auto = load_json_object(cfg).get("auto_map")
    names = auto.get("AutoTokenizer") if isinstance(auto, dict) else None
    names = [names] if isinstance(names, str) else names if isinstance(names, list) else []
    for name in names:
        if not isinstance(name, str) or "." not in name:
            continue
        module, cls = name.split("--")[-1].rsplit(".", 1)  # "org/repo--module.Class" names another repo
        file = directory / (module.replace(".", "/") + ".py")
        if not file.is_file():
            return (f"tokenizer_config.json's auto_map names {file.name} (class {cls}), the module that holds the "
                    f"split regex and the special tokens, and it is not beside the file: put {file.name} from the "
                    "model repository beside it (it is read, never run), or give them with --pattern and --special")
    return None
