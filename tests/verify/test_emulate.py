"""`verify.emulate`'s fast paths give what the plain step-by-step model gives."""

from __future__ import annotations

import random

from mtok_export.ir import Pattern
from mtok_export.ir import normalizers as N
from mtok_export.verify import emulate


def _one_by_one(n: N.Sequence, text: str) -> str:
    for c in n.normalizers:
        if isinstance(c, N.Replace):
            text = text.replace(c.pattern.value, c.content) if c.pattern.value else text
        else:
            text = emulate.normalize(c, text)
    return text


def test_a_run_of_replaces_is_each_replace_in_turn():
    """A charsmap lowers to thousands of `Replace` steps; the run tries only those whose first
    character is there, including characters an earlier step wrote and steps a later one undoes."""
    rnd = random.Random(3)
    for _ in range(3000):
        steps = []
        for _ in range(rnd.randint(0, 12)):
            if rnd.random() < 0.1:
                steps.append(N.Prepend("x"))
            else:
                pattern = "".join(rnd.choice("abcx") for _ in range(rnd.randint(0, 2)))
                steps.append(N.Replace(Pattern(pattern, False), "".join(rnd.choice("abcx") for _ in range(rnd.randint(0, 3)))))
        n = N.Sequence(tuple(steps))
        text = "".join(rnd.choice("abcx") for _ in range(rnd.randint(0, 10)))
        assert emulate.normalize(n, text) == _one_by_one(n, text), (steps, text)


def test_a_chain_that_writes_what_a_later_step_replaces():
    n = N.Sequence((N.Replace(Pattern("a", False), "b"), N.Replace(Pattern("b", False), "c"),
                    N.Replace(Pattern("c", False), "a")))
    assert emulate.normalize(n, "a") == "a" and emulate.normalize(n, "b") == "a" and emulate.normalize(n, "xc") == "xa"


def test_a_table_lookup_takes_the_first_entry_of_a_code_point():
    assert emulate._table(((0x41, "x"), (0x41, "y"), (0x42, "z")), "ABC", control=False) == "xzC"
