"""Lint a chat template for MNN's Jinja subset (spec section 8).

MNN renders chat templates with its own small Jinja engine (``jinja.hpp``). It never reports an
error: constructs outside its subset are skipped, cut short, or evaluated differently, and a few
make its parser loop forever. :func:`lint_template` parses a template with jinja2 (the engine
transformers uses) and reports every construct whose rendering differs in the runtime, with its
position and what the runtime does instead.

The work is split by concern: :mod:`.source_map` lexes the template and maps AST nodes back to
lines and columns, :mod:`.walker` walks the AST and knows what holds where, and :mod:`.rules`
holds each rule (:data:`RULES`) with its check and message.

Every rule was reproduced against the released runtime (MNN 3.6.1): ``tests/chat/test_lint.py``
renders a minimal template per rule with jinja2 (configured like transformers) and with the runtime,
and asserts that the outputs differ.
"""

from __future__ import annotations

import jinja2

from .environment import GenerationTag, normalize_newlines, parse_environment
from ..target_type import MNN_JINJA, JinjaEngine
from .rules import RULES, Facts, Finding, Rule, rules_for
from .source_map import NodePositions, SourceMap
from .walker import Scope, Walker

__all__ = ["RULES", "Finding", "GenerationTag", "Rule", "lint_template", "parse_environment"]


def lint_template(text: str, engine: JinjaEngine = MNN_JINJA) -> list[Finding]:
    """Return the findings for ``text`` under the rules of ``engine``'s release (`rules.rules_for`:
    `UnsupportedError` when it has none), sorted by (line, col, rule, message)."""
    ruleset = rules_for(engine)
    source = normalize_newlines(text)
    try:
        ast = parse_environment().parse(source)
    except jinja2.TemplateSyntaxError as exc:
        return [Finding(exc.lineno or 1, 1, "syntax", f"jinja2 cannot parse the template: "
                        f"{exc.message}; transformers cannot render it either")]
    except RecursionError:
        # readers refuse such templates (chat/nesting.py); this covers direct callers
        return [Finding(1, 1, "syntax", "jinja2 cannot parse the template: nested too deeply; "
                        "transformers cannot render it either")]
    src = SourceMap(source)
    positions = NodePositions(src)
    walker = Walker(positions, ast)
    walker.run()
    facts = Facts(src, positions, Scope(ast), walker)
    findings: list[Finding] = []
    for visit in walker.visits:
        for check in ruleset.node_checks.get(type(visit.node), ()):
            findings += check(visit.node, visit.ctx, facts)
    for token_check in ruleset.token_checks:
        findings += token_check(src)
    return sorted(set(findings), key=lambda f: (f.line, f.col, f.rule, f.message))
