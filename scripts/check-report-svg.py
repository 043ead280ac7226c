#!/usr/bin/env python3
"""Checks the report's `--svg` chart against its `--json` rows from the same run:
the file parses as SVG (root `{http://www.w3.org/2000/svg}svg`), it has one bar (a
`rect` other than the background) for each row with a ratio, and every row's name is
one of its texts. Exits non-zero, naming what is wrong, otherwise.

usage: check-report-svg.py CHART.svg ROWS.jsonl
"""
import json
import sys
import xml.etree.ElementTree as ET

SVG = "{http://www.w3.org/2000/svg}"


def not_json(constant):
    raise ValueError(f"{constant} is not JSON (a number without a value is null)")


def main(svg_path, json_path):
    rows = [
        json.loads(line, parse_constant=not_json)
        for line in open(json_path)
        if line.strip()
    ]
    if not rows:
        return f"{json_path}: no rows"
    root = ET.parse(svg_path).getroot()
    if root.tag != SVG + "svg":
        return f"{svg_path}: the root is {root.tag}, not {SVG}svg"
    width, height = float(root.get("width")), float(root.get("height"))
    bars = [
        r
        for r in root.iter(SVG + "rect")
        if (float(r.get("width")), float(r.get("height"))) != (width, height)
        and float(r.get("width")) > 0
    ]
    texts = {"".join(t.itertext()).strip() for t in root.iter(SVG + "text")}
    with_ratio = [r for r in rows if r["ratio"] is not None and r["ratio"] > 0]
    if len(bars) != len(with_ratio):
        return f"{svg_path}: {len(bars)} bars for {len(with_ratio)} rows with a ratio"
    missing = [r["name"] for r in rows if r["name"] not in texts]
    if missing:
        return f"{svg_path}: no text names the rows {missing}"
    print(f"report --svg: {len(bars)} bars, {len(texts)} texts, every row named")
    return None


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    problem = main(sys.argv[1], sys.argv[2])
    if problem:
        sys.exit(f"report --svg check failed: {problem}")
