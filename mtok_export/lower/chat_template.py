"""The chat-template pass: the template lowered for the target's Jinja engine (`chat.lowering`) as
the `Lowering` records it.  The outcome is cached by content (`cache.computed`): parsing with
jinja2 and linting twice costs about 35 ms with jinja2's import, and a second export of a model
then neither imports nor runs jinja2.  The key holds the template, the target's Jinja engine (the
targets that share one share the outcome) and the code that computes the outcome
(`chat.code_files()`: the chat package, jinja2's version, and this module)."""

from __future__ import annotations

from .. import cache
from .. import losses as L
from ..chat import code_files
from ..target_type import Target

KIND = "chat-lowering"
# What `defined_as_empty` puts first: trim_blocks (on in both engines) removes the newline after the
# tag, so the template's own first line still starts a line (lstrip_blocks applies to it as before).
EMPTY_DEFINITION = "{{% set {} = '' %}}\n"


def defined_as_empty(text: str, names) -> str:
    """``text`` with each of ``names`` set to ``''`` first: the fields the lowering emptied (BOS, which
    the header prefix adds instead), which the runtime then leaves undefined (spec 8.7) where
    transformers renders the source with a string."""
    return "".join(EMPTY_DEFINITION.format(n) for n in sorted(names)) + text


def without_empty_definition(text: str, name: str) -> str:
    """``text`` without the definition `defined_as_empty` put first for ``name`` (an HF form that
    gives the field its value back)."""
    return text.removeprefix(EMPTY_DEFINITION.format(name))


def lint_chat_template(lw, text: str) -> str:
    """Lower the chat template for the target's Jinja engine (`chat.lowering`) and return the text
    to embed; one loss per lint rule the lowered template still triggers, with its first places
    (in the original).  A template that would still hang the runtime raises `TemplateHangError`
    (never cached: it is raised again by the next run)."""
    digest = cache.key(KIND, text, str(lw.target.jinja), files=(*code_files(), __file__))
    outcome = cache.computed(KIND, digest, lambda: outcome_of(text, lw.target), valid=_valid)
    out = outcome["text"]
    for rule, count in outcome["rewrites"]:
        lw.did("chat template", f"{rule} x{count}")
    for json_path, reason, rule in outcome["losses"]:
        lw.loss(L.CHAT_TEMPLATE, "chat template", json_path, reason, trigger=(rule,))
    if lw.cleared_bos and "bos_token" in outcome["beyond_print"]:
        # The runtime sets bos_token only when the file's BOS field is not empty (spec 8.7), and the
        # BOS lowering emptied it: `bos_token + content` would add an undefined value to a string.
        out = defined_as_empty(out, ["bos_token"])
        lw.did("chat template", "bos-defined-empty: bos_token set to '' first (the emptied BOS field leaves "
               "it undefined in the runtime, and the template uses it in an expression)")
    if out != text:
        lw.chat_original = text
    return out


def outcome_of(text: str, target: Target) -> dict:
    """{"text": what to embed, "rewrites": [[rule, count]], "losses": [[json path, reason, rule]],
    "beyond_print": [the special-token variables the lowered text uses other than printed alone]}, in
    JSON types so the cached value is the computed one."""
    # jinja2 and the chat package: only when the outcome is not cached
    from ..chat.rules import rules_for
    from ..chat.lowering import lower_template, used_beyond_print

    lowered = lower_template(text, target)
    rules = rules_for(target.jinja).rules
    by_rule: dict[str, list] = {}
    for f in lowered.remaining:
        by_rule.setdefault(f.rule, []).append(f)
    losses = []
    for rule, found in by_rule.items():
        where = ", ".join(f"{f.line}:{f.col}" for f in found[:3]) + (" ..." if len(found) > 3 else "")
        summary = rules[rule].summary if rule in rules else found[0].message
        losses.append([f"$.chat_template@{where}", f"{rule} x{len(found)}: {summary}", rule])
    return {"text": lowered.text, "rewrites": [[rule, count] for rule, count in lowered.rewrites.items()],
            "losses": losses, "beyond_print": used_beyond_print(lowered.text, ("bos_token",))}


def _valid(v) -> bool:
    return (isinstance(v, dict) and set(v) == {"text", "rewrites", "losses", "beyond_print"}
            and isinstance(v["text"], str) and _rows(v["rewrites"], (str, int)) and _rows(v["losses"], (str, str, str))
            and isinstance(v["beyond_print"], list) and all(type(x) is str for x in v["beyond_print"]))


def _rows(rows, types) -> bool:
    return isinstance(rows, list) and all(
        isinstance(r, list) and len(r) == len(types) and all(type(x) is t for x, t in zip(r, types)) for r in rows)
