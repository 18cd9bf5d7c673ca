"""Print, for every input under the shared corpus tokenizers and `samples/` (each directory and each
file in it), the file the reader started from and the sha256 of `write_mtok(lower(read_source(x)))`,
or the error.  Run it with another checkout on PYTHONPATH to get that checkout's table: the
regression test `tests/test_formats.py` keeps main's table to prove that recognition by content
changed no reader choice or output byte.

    PYTHONPATH=/work/main python scripts/source_hashes.py > hashes.tsv"""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
ROOTS = {"corpus": REPO.parent / "shared/corpus/tokenizers", "samples": REPO / "samples"}


def inputs():
    for prefix, root in ROOTS.items():
        for d in sorted(p for p in root.iterdir() if p.is_dir()):
            yield f"{prefix}/{d.name}", d
            for f in sorted(p for p in d.iterdir() if p.is_file()):
                yield f"{prefix}/{d.name}/{f.name}", f


def main():
    from mtok_export.errors import MtokError
    from mtok_export.formats import read_source
    from mtok_export.lower import lower
    from mtok_export.mtok import write_mtok
    from mtok_export.targets import DEFAULT, TARGETS

    for name, path in inputs():
        try:
            tok = read_source(path)
            first = Path(tok.provenance.inputs[0].path).name if tok.provenance.inputs else "-"
            digest = hashlib.sha256(write_mtok(lower(tok, TARGETS[DEFAULT])[0])).hexdigest()
        except MtokError as e:
            first, digest = "error", type(e).__name__
        print(f"{name}\t{first}\t{digest}", flush=True)


if __name__ == "__main__":
    sys.exit(main())
