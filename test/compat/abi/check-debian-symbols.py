#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""debian/librpmem1.symbols against the version script: the Debian package's symbols file names
librpmem.so.1 of librpmem1 and lists exactly the script's symbols, each under its node, plus
one entry per version node (name@name, which the linker exports). dpkg-gensymbols checks the
file against the built library (DPKG_GENSYMBOLS_CHECK_LEVEL=4 in debian/rules); this test keeps
it from drifting from the script in the ordinary build, which builds no package.

Usage: check-debian-symbols.py SYMBOLS_FILE VERSION_SCRIPT
Exit 1 listing each symbol in one file but not the other, and a wrong header line."""
import re
import sys

symbols_file, script = sys.argv[1], sys.argv[2]

expected = set()
nodes = set()
node = None
for line in open(script):
    line = re.sub(r"/\*.*?\*/", "", line).strip()
    if m := re.match(r"^(\w+(\.\w+)*)\s*\{", line):
        node = m.group(1)
        nodes.add(node)
    elif re.match(r"^[A-Za-z_]\w*;$", line):
        expected.add(f"{line[:-1]}@{node}")
expected |= {f"{n}@{n}" for n in nodes}

problems = []
listed = set()
header = None
for number, line in enumerate(open(symbols_file), 1):
    line = line.rstrip("\n")
    if not line or line.startswith("#") or line.startswith("* ") or line.startswith("|"):
        continue
    if not line.startswith(" "):
        if header is not None:
            problems.append(f"{symbols_file}:{number}: a second library: {line}")
        header = line
        continue
    fields = line.split()
    if len(fields) < 2:
        problems.append(f"{symbols_file}:{number}: no minimal version: {line.strip()}")
        continue
    if fields[0] in listed:
        problems.append(f"{symbols_file}:{number}: listed twice: {fields[0]}")
    listed.add(fields[0])

if header is None or header.split()[:2] != ["librpmem.so.1", "librpmem1"]:
    problems.append(f"{symbols_file}: the first line is {header!r}, not 'librpmem.so.1 librpmem1 ...'")
for name in sorted(expected - listed):
    problems.append(f"in {script} but not in {symbols_file}: {name}")
for name in sorted(listed - expected):
    problems.append(f"in {symbols_file} but not in {script}: {name}")

for problem in problems:
    print(problem)
print(f"{len(listed)} symbols in {symbols_file}, {len(expected)} from {script}")
sys.exit(1 if problems else 0)
