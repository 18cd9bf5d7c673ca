#!/usr/bin/env python3
"""Benchmark the Unicode normalization tables: cold build (no cache), warm load from the on-disk
cache (fresh process state: in-memory cache cleared), and NormTable encode/decode.

Usage: python scripts/bench_tables.py [--repeat N]
Uses a temporary MTOK_CACHE_DIR so the user's cache is not touched.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time

from mtok_export.mtok.normtable import decode_table, encode_table
from mtok_export.unicode import tables as T
from mtok_export.unicode import ucd


def best_ms(fn, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best * 1000


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5, help="take the best of N runs (default 5)")
    args = ap.parse_args()

    print(f"Python {sys.version.split()[0]}, tables of Unicode {ucd.VERSION} ({ucd.data_version()}), best of {args.repeat}")
    print(f"{'form':6} {'entries':>8} {'bytes':>8} {'cold ms':>9} {'warm ms':>9} {'encode ms':>10} {'decode ms':>10}")
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["MTOK_CACHE_DIR"] = tmp
        for form in T.FORMS:
            cold = best_ms(lambda: T.build_table(form), max(1, args.repeat // 2))
            T.clear_memory_cache()
            entries = T.table(form)  # writes the cache file

            def warm():
                T.clear_memory_cache()
                T.table(form)

            warm_ms = best_ms(warm, args.repeat)
            assert T.table(form) == entries
            blob = encode_table(entries)
            enc = best_ms(lambda: encode_table(entries), args.repeat)
            dec = best_ms(lambda: decode_table(blob, 0), args.repeat)
            assert decode_table(blob, 0) == (entries, len(blob))
            print(f"{form:6} {len(entries):8d} {len(blob):8d} {cold:9.1f} {warm_ms:9.2f} {enc:10.2f} {dec:10.2f}")


if __name__ == "__main__":
    main()
