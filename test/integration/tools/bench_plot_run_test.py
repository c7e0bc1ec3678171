#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""rpmem-bench raw --plot FILE.svg, briefly: the benchmark draws its own report, as a figure
with both panels and throughput against lanes (one and two), while its JSON still goes to
standard output; a --plot name that is neither .svg nor .png is a usage error before anything
runs. Skipped without python3-matplotlib.

usage: bench_plot_run_test.py RPMEM_BENCH

"""
import json
import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ElementTree

SKIP = 77


def main():
    bench = sys.argv[1]
    if subprocess.run(["/usr/bin/python3", "-c", "import matplotlib"],
                      capture_output=True).returncode != 0:
        print("python3-matplotlib is not installed (scripts/install-deps installs it)")
        return SKIP
    failures = []
    with tempfile.TemporaryDirectory(prefix="rpmem-bench-plot-") as scratch:
        svg = os.path.join(scratch, "raw.svg")
        ran = subprocess.run([bench, "raw", "--ops", "gpspm", "--sizes", "4K", "--lanes", "1,2",
                              "--iterations", "50", "--duration", "0.2", "--plot", svg],
                             capture_output=True, text=True, timeout=120)
        if ran.returncode != 0:
            failures.append(f"rpmem-bench raw --plot: status {ran.returncode}: {ran.stderr}")
        else:
            report = json.loads(ran.stdout)
            if len(report["results"]) != 2:
                failures.append(f"expected 2 rows on standard output, got {ran.stdout}")
            text = " ".join(ElementTree.parse(svg).getroot().itertext())
            for expected in ["latency against size", "throughput against lanes", "gpspm"]:
                if expected not in text:
                    failures.append(f"{svg}: no text '{expected}'")
        wrong = subprocess.run([bench, "raw", "--plot", os.path.join(scratch, "raw.pdf")],
                               capture_output=True, text=True, timeout=60)
        if wrong.returncode != 2:
            failures.append(f"--plot raw.pdf: status {wrong.returncode}, expected 2")
    for failure in failures:
        print("FAIL:", failure)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
