"""The jinja2 environment chat templates are parsed with: transformers' options and tags.

Template linting (:mod:`.lint`) and lowering (:mod:`.lowering`) parse with
:func:`parse_environment`, and locate source positions by lexing with :data:`LEX_ENV`, which has
the same tags but no whitespace control, so that data tokens keep their text.
"""

from __future__ import annotations

import jinja2
from jinja2 import nodes
from jinja2.ext import Extension
from jinja2.lexer import newline_re

__all__ = ["LEX_ENV", "GenerationTag", "normalize_newlines", "parse_environment"]


class GenerationTag(Extension):
    """transformers' ``{% generation %}...{% endgeneration %}`` tag, rendered as its body.

    transformers uses the tag to record which output characters the assistant produced; the
    rendered text is the body. The runtime skips unknown tags and renders their body, so the
    tag itself renders the same in both engines.
    """

    tags = {"generation"}

    def parse(self, parser: jinja2.parser.Parser) -> list[nodes.Node]:
        next(parser.stream)
        return parser.parse_statements(("name:endgeneration",), drop_needle=True)


def parse_environment() -> jinja2.Environment:
    """The environment used to parse templates: transformers' options and tags."""
    return jinja2.Environment(trim_blocks=True, lstrip_blocks=True,
                              extensions=["jinja2.ext.loopcontrols", GenerationTag])


LEX_ENV = jinja2.Environment(extensions=["jinja2.ext.loopcontrols", GenerationTag])


def normalize_newlines(text: str) -> str:
    """``text`` with every line break as ``\\n``, as jinja2 reads it (positions count in it)."""
    return "\n".join(newline_re.split(text)[::2])
