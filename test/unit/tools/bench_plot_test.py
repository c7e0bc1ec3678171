#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""rpmem-bench-plot on a small report: an SVG with both panels, every operation in the legend
(rpmem's and the raw floor's), throughput against lanes since the report has two lane counts;
a PNG; and a report that is not one, refused with a message naming it.

usage: bench_plot_test.py PLOT_SCRIPT REPORT.json
"""
import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ElementTree

SKIP = 77


def run(argv):
    return subprocess.run(argv, capture_output=True, text=True, timeout=120)


def main():
    script, report = sys.argv[1:3]
    probe = run(["/usr/bin/python3", "-c", "import matplotlib"])
    if probe.returncode != 0:
        print("python3-matplotlib is not installed (scripts/install-deps installs it)")
        return SKIP
    failures = []
    with tempfile.TemporaryDirectory(prefix="rpmem-plot-") as scratch:
        svg = os.path.join(scratch, "plot.svg")
        drawn = run([script, "--output", svg, "--title", "small run", report])
        if drawn.returncode != 0:
            failures.append(f"svg: status {drawn.returncode}: {drawn.stderr}")
        else:
            tree = ElementTree.parse(svg)  # well-formed XML
            text = " ".join(t for t in tree.getroot().itertext())
            for expected in ["latency against size", "throughput against lanes", "strict",
                             "raw-gpspm", "small run", "MB/s", "64K"]:
                if expected not in text:
                    failures.append(f"svg: no text '{expected}'")
        png = os.path.join(scratch, "plot.png")
        drawn = run([script, "--output", png, report])
        if drawn.returncode != 0:
            failures.append(f"png: status {drawn.returncode}: {drawn.stderr}")
        else:
            with open(png, "rb") as file:
                if file.read(8) != b"\x89PNG\r\n\x1a\n":
                    failures.append("png: not a PNG file")
        bogus = os.path.join(scratch, "bogus.json")
        with open(bogus, "w", encoding="utf-8") as file:
            file.write('{"benchmark": "raw"}')
        refused = run([script, "--output", os.path.join(scratch, "x.svg"), bogus])
        if refused.returncode != 1 or "bogus.json" not in refused.stderr:
            failures.append(f"bad report: status {refused.returncode}: {refused.stderr}")
        usage = run([script, "--output", os.path.join(scratch, "x.pdf"), report])
        if usage.returncode != 2:
            failures.append(f"--output x.pdf: status {usage.returncode}, expected 2")
    for failure in failures:
        print("FAIL:", failure)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
