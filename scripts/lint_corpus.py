"""Lint every chat template of a corpus and print a template x rule table of finding counts.

Templates are read from ``*.jinja`` files and from the ``chat_template`` field of
``*tokenizer_config.json`` / ``chat_template.json`` files (a string, or a list of
``{name, template}``) anywhere under the given directories.

    python scripts/lint_corpus.py [DIR ...] [--long]

Without DIR it reads ``../shared/corpus`` next to the repository. ``--long`` prints one line per
template with ``rule=count`` pairs instead of the matrix.
"""

from __future__ import annotations

import argparse
from collections import Counter
from pathlib import Path

from mtok_export.chat.lint import RULES, lint_template
from mtok_export.chat.sources import iter_templates


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dirs", nargs="*", type=Path)
    parser.add_argument("--long", action="store_true", help="one line per template")
    args = parser.parse_args(argv)
    dirs = args.dirs or [Path(__file__).resolve().parents[2] / "shared" / "corpus"]

    rows: list[tuple[str, Counter]] = []
    for root in dirs:
        for name, text in iter_templates(root):
            counts = Counter(f.rule for f in lint_template(text))
            label = name if len(dirs) == 1 else f"{root.name}/{name}"
            rows.append((label, counts))

    total = Counter()
    for _, counts in rows:
        total.update(counts)
    rules = [r for r in RULES if total[r]]

    if args.long:
        for name, counts in rows:
            pairs = " ".join(f"{r}={counts[r]}" for r in rules if counts[r])
            print(f"{name}: {pairs or 'clean'}")
        print(f"TOTAL ({len(rows)} templates): "
              + " ".join(f"{r}={total[r]}" for r in rules))
        return 0

    # matrix: columns are numbered; the legend maps numbers to rule ids
    width = max([len(n) for n, _ in rows] + [5])
    cols = [str(i + 1) for i in range(len(rules))]
    cw = [max(len(c), len(str(total[r]))) for c, r in zip(cols, rules)]
    print("legend: " + "  ".join(f"{c}={r}" for c, r in zip(cols, rules)))
    print(f"{'template':<{width}} " + " ".join(f"{c:>{w}}" for c, w in zip(cols, cw)))
    for name, counts in rows:
        cells = [str(counts[r]) if counts[r] else "." for r in rules]
        print(f"{name:<{width}} " + " ".join(f"{c:>{w}}" for c, w in zip(cells, cw)))
    print(f"{'TOTAL':<{width}} " + " ".join(f"{total[r]:>{w}}" for r, w in zip(rules, cw)))
    print(f"{len(rows)} templates, {sum(1 for _, c in rows if not c)} clean")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
