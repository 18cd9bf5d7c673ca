"""`dump.render`: sizes in binary units."""

from __future__ import annotations

from mtok_export.dump.render import size


def test_sizes_are_binary_units():
    assert [size(n) for n in (1000, 2048, 3 * 1024 * 1024 + 1)] == ["1000 B", "2.0 KiB", "3.0 MiB"]
