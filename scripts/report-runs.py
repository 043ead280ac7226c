#!/usr/bin/env python3
"""Puts several runs of the report side by side: reads the `--json` rows of each file
(one object per line; other lines are skipped) and prints, per row in the order first
seen, each run's ratio (lazycl / baseline) and lazycl's figure, then the lowest and
highest ratio. Rows are matched by name; a run without a row shows `-`. For comparing
repeated runs of one build (a shared machine's spread), or runs of two builds given in
alternation. Exits non-zero when a file has no row.

usage: report-runs.py RUN.json [RUN.json ...]
"""
import json
import sys


def rows_of(path):
    rows = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if not line.startswith("{"):
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError:
                continue
            if "name" in row:
                rows[row["name"]] = row
    return rows


def main(paths):
    runs = [rows_of(p) for p in paths]
    for path, rows in zip(paths, runs):
        if not rows:
            print(f"{path}: no report rows", file=sys.stderr)
            return 1
    names = []
    for rows in runs:
        names.extend(n for n in rows if n not in names)
    for name in names:
        cells, ratios = [], []
        for rows in runs:
            row = rows.get(name)
            ratio = row.get("ratio") if row else None
            if ratio is None:
                cells.append("-")
                continue
            ratios.append(ratio)
            cells.append(f"{ratio:.2f} ({row['lazycl']:.4g} {row.get('unit', '')})".rstrip())
        spread = f"{min(ratios):.2f}-{max(ratios):.2f}" if ratios else "-"
        print(f"{name}\n    {' | '.join(cells)}    ratios {spread}")
    return 0


if __name__ == "__main__":
    if len(sys.argv) < 2:
        print(__doc__.strip(), file=sys.stderr)
        sys.exit(2)
    sys.exit(main(sys.argv[1:]))
