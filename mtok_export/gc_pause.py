"""The cyclic garbage collector paused while a tokenizer's tables are built.

Reading, lowering, writing and reading back a 150k-entry vocabulary with its merges allocates
hundreds of thousands of containers (merge pairs, lists) that never form reference cycles; the
collector would only walk them, and everything alive, again and again as they pile up (about 7% of
an export).  Reference counting frees them all the same.  The pause ends with the block, so a
long-running caller (stats over many tokenizers, a notebook, the tests) keeps its collector."""

from __future__ import annotations

import gc
from contextlib import contextmanager


@contextmanager
def paused():
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if collecting:
            gc.enable()
