"""`mtok lint-template FILE|DIR` (the runtime's Jinja subset) and `mtok chat FILE --messages`."""

# function-local imports: a command's modules load when the command runs, so `mtok --help` and every
# other command start without them (tests/acceptance/test_startup_imports.py)

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Optional

import typer

from ..errors import InputError, MtokError


def lint_template(
    path: Annotated[Path, typer.Argument(help="A .jinja file, a tokenizer_config.json / chat_template.json, "
                                           "or a directory searched for them.")],
    as_json: Annotated[bool, typer.Option("--json", help='{"findings": [{"file", "line", "col", "rule", '
                                                         '"message", "fixed", "template_line", "template_col"}]} '
                                                         '(line, col: in the file; template_*: in the template, '
                                                         'which differ in a JSON file)')] = False,
    fix: Annotated[bool, typer.Option("--fix", help="Print the lowered template (what export embeds) "
                                                    "instead of the findings; one template only.")] = False,
    target: Annotated[Optional[str], typer.Option("--target", help="Runtime whose Jinja engine to lower for.  "
                                                  "[default: {default_target}]", show_default=False)] = None,
):
    """Report every construct MNN's Jinja engine renders differently from transformers, and whether
    template lowering (what export embeds) fixes it (exit 1 if any finding remains)."""
    from rich.text import Text

    from ..chat.lint import lint_template as lint
    from ..chat.lowering import TemplateHangError, lower_template
    from ..chat.sources import iter_templates
    from ..targets import DEFAULT, target_for
    from .console import out

    # lowered for the target's Jinja engine: a .mtok target's, checked as every command's --target
    target = target_for("mtok", DEFAULT if target is None else target)
    templates = list(iter_templates(path))
    if fix:
        if len(templates) != 1:
            raise InputError(f"{path}: --fix needs exactly one template, found {len(templates)}")
        out.print(lower_template(templates[0][1], target).text, markup=False, highlight=False, end="")
        return
    findings = []
    for label, text, at in templates:
        try:
            lowered = lower_template(text, target)
            fixed = {id(f) for f in lowered.fixed_findings}
            found = list(lowered.fixed_findings) + list(lowered.remaining)
        except TemplateHangError:  # nothing is fixed: the lowered template would still hang
            fixed, found = set(), lint(text, target.jinja)
        found.sort(key=lambda f: (f.line, f.col, f.rule, f.message))
        for f in found:
            line, col = at(f.line, f.col) or (f.line, f.col)
            findings.append({"file": label, "line": line, "col": col, "rule": f.rule, "message": f.message,
                             "fixed": id(f) in fixed, "template_line": f.line, "template_col": f.col})
    remaining = sum(not f["fixed"] for f in findings)
    if as_json:
        out.print_json(json.dumps({"findings": findings}, ensure_ascii=False))
    else:
        for f in findings:
            state = "fixed by lowering" if f["fixed"] else "remains"
            moved = (f["line"], f["col"]) != (f["template_line"], f["template_col"])
            inner = f" (template {f['template_line']}:{f['template_col']})" if moved else ""
            out.print(Text(f"{f['file']}:{f['line']}:{f['col']}: {f['rule']} [{state}]: {f['message']}{inner}"))
        out.print(f"{len(findings)} finding(s), {len(findings) - remaining} fixed by lowering, "
                  f"{remaining} remain", markup=False)
    if remaining:
        raise typer.Exit(1)


def chat(
    file: Annotated[Path, typer.Argument(help="A .mtok file.")],
    messages: Annotated[Path, typer.Option("--messages", help='JSON list of {"role", "content"}.')],
    runtime: Annotated[bool, typer.Option("--runtime", help="Render with the MNN runtime instead of jinja2.")] = False,
    no_generation_prompt: Annotated[bool, typer.Option("--no-generation-prompt",
                                                       help="jinja2 only: the runtime always adds it.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help='Print {"text", "engine", ...} (or the error) instead of '
                                                         "the rendered text.")] = False,
):
    """Render a conversation with the file's embedded chat template."""
    from ..reports import command_json
    from .console import out

    engine = "mnn" if runtime else "jinja2"
    try:
        text = _render(file, messages, runtime, no_generation_prompt)
    except MtokError as e:
        if not as_json:
            raise
        out.print_json(json.dumps(command_json("mtok chat", e.exit_code, error=e, hint=e.hint, engine=engine,
                                               text=None), ensure_ascii=False))
        raise typer.Exit(e.exit_code)
    if as_json:
        out.print_json(json.dumps(command_json("mtok chat", 0, engine=engine, text=text), ensure_ascii=False))
        return
    out.print(text, markup=False, highlight=False, end="")


def _render(file: Path, messages: Path, runtime: bool, no_generation_prompt: bool) -> str:
    from ..mtok import read_mtok
    from ..json_value import load_json

    msgs = load_json(messages)  # nesting bounded, duplicate keys refused, errors name the file and path
    try:
        data = file.read_bytes()
    except OSError as e:
        raise InputError(f"cannot read {file}: {e}") from None
    if not (isinstance(msgs, list) and all(isinstance(m, dict) and "role" in m for m in msgs)):
        raise InputError(f"{messages}: expected a JSON list of {{role, content}} objects")
    tok, _ = read_mtok(data, str(file))
    if not tok.chat.text:
        raise InputError(f"{file}: no chat template embedded")
    if runtime:
        from ..verify.runtime import run_runtime

        text = run_runtime(file, chats=[msgs]).chats[0]
        if text is None:
            raise InputError("the runtime could not render these messages")
        return text
    from ..chat.render import TemplateError, render

    try:
        return render(tok.chat.text, msgs, bos_token=tok.chat.bos_token, eos_token=tok.chat.eos_token,
                      add_generation_prompt=not no_generation_prompt)
    except TemplateError as e:
        raise InputError(f"the template raised: {e}") from None
