"""Walking the IR's component trees: which field of each family holds a `Sequence`'s children
(the HF JSON key, so the tokenizer.json reader and writer use it too), and the walks built on it."""

from __future__ import annotations

from collections.abc import Iterator

# Family -> the field of its `Sequence` that lists the children (also the tokenizer.json key).
# In pipeline order; the reader parses the families in this order.
CHILDREN = {"normalizer": "normalizers", "pre_tokenizer": "pretokenizers",
            "decoder": "decoders", "post_processor": "processors"}
CHILD_FIELDS = frozenset(CHILDREN.values())


def child_field(component) -> str | None:
    """The field holding the children when `component` is a `Sequence`, else None."""
    field = CHILDREN.get(getattr(component, "family", None))
    return field if field is not None and hasattr(component, field) else None


def children(component) -> tuple:
    """The direct children of a `Sequence` (empty for every other component and for None)."""
    field = child_field(component)
    return getattr(component, field) if field else ()


def members(component) -> tuple:
    """A `Sequence`'s children, or the component alone (empty for None): one level, as the
    runtime sees a top-level pipeline."""
    if component is None:
        return ()
    return children(component) if child_field(component) else (component,)


def walk(component) -> Iterator:
    """The component and every descendant, parents first (nothing for None)."""
    if component is None:
        return
    yield component
    for c in children(component):
        yield from walk(c)
