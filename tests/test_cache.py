"""`cache.version` (a part of cache keys) reads a distribution's version from its `.dist-info`
directory name when that is the one importlib.metadata would read, and asks importlib.metadata
otherwise: the two must agree on every installed distribution and on made-up `sys.path` layouts."""

from __future__ import annotations

import sys
from importlib import metadata

import pytest

from mtok_export import cache


def _metadata(dist: str) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "absent"


def test_installed_distributions_agree_with_importlib_metadata():
    names = sorted({d.metadata["Name"] for d in metadata.distributions()})
    assert len(names) > 20
    fast = 0
    for name in names + ["tokenizers", "Jinja2", "markupsafe", "mtok-export", "mtok_export", "no-such-dist"]:
        assert cache.version(name) == _metadata(name), name
        fast += cache._dist_info_version(name) is not None
    assert fast > 20  # the fast path answers (else this only tests importlib.metadata against itself)


def _dist(tmp_path, dirname: str, version: str):
    d = tmp_path / dirname
    d.mkdir()
    (d / "METADATA").write_text(f"Metadata-Version: 2.1\nName: fakepkg\nVersion: {version}\n")


@pytest.mark.parametrize("dists, fast", [
    ([("fakepkg-1.2.3.dist-info", "1.2.3")], "1.2.3"),
    ([("Fake_Pkg-1.2.3.dist-info", "1.2.3")], None),  # another name: nothing found here
    ([("fakepkg-1.2.3.dist-info", "1.2.3"), ("fakepkg-1.0.dist-info", "1.0")], None),  # two: metadata's call
    ([("fakepkg-2.0-py3.11.egg-info", "2.0")], None),
    ([("fakepkg.egg-info", "9.9")], None),
])
def test_made_up_layouts(tmp_path, monkeypatch, dists, fast):
    for name, version in dists:
        _dist(tmp_path, name, version)
    monkeypatch.setattr(sys, "path", [str(tmp_path), *sys.path])
    metadata_version = _metadata("fakepkg")
    assert cache._dist_info_version("fakepkg") == fast
    assert cache.version("fakepkg") == metadata_version
    if fast is not None:
        assert metadata_version == fast


def test_the_first_path_entry_with_metadata_wins(tmp_path, monkeypatch):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    _dist(tmp_path / "a", "fakepkg-1.0.dist-info", "1.0")
    _dist(tmp_path / "b", "fakepkg-2.0.dist-info", "2.0")
    monkeypatch.setattr(sys, "path", [str(tmp_path / "missing"), str(tmp_path / "a"), str(tmp_path / "b"), *sys.path])
    assert cache._dist_info_version("fakepkg") == "1.0" == cache.version("fakepkg") == _metadata("fakepkg")
    zipped = tmp_path / "lib.zip"
    zipped.write_bytes(b"PK\x05\x06" + bytes(18))  # an empty zip on the path: importlib.metadata looks inside
    monkeypatch.setattr(sys, "path", [str(zipped), str(tmp_path / "b"), *sys.path])
    assert cache._dist_info_version("fakepkg") is None and cache.version("fakepkg") == "2.0"


def test_a_dated_key_changes_with_the_day(monkeypatch):
    """A chat template may print today's date (`strftime_now`), which the runtime renders from its
    own clock: a render cached yesterday must not answer today (found when a test run crossed
    midnight: Mistral-Small's chat text 3/13 against yesterday's cached renders)."""
    from mtok_export import cache

    monkeypatch.setattr(cache.time, "strftime", lambda fmt: "2026-12-04")
    before = cache.key("chat-renders", "t", dated=True), cache.key("chat-renders", "t")
    monkeypatch.setattr(cache.time, "strftime", lambda fmt: "2026-12-05")
    after = cache.key("chat-renders", "t", dated=True), cache.key("chat-renders", "t")
    assert before[0] != after[0] and before[1] == after[1]
