#!/usr/bin/env python3
"""ABI check of librpmem.so.1: the SONAME, and the exported symbols equal the version script.

Usage: check-symbols.py LIBRARY VERSION_SCRIPT
Fails (exit 1) listing every symbol that is exported but not in the script, or in the script
but not exported, every symbol not bound to LIBRPMEM_1.0, and a wrong SONAME."""
import re
import subprocess
import sys

library, script = sys.argv[1], sys.argv[2]

expected = set()
node = None
for line in open(script):
    line = re.sub(r"/\*.*?\*/", "", line).strip()
    if m := re.match(r"^(\w+(\.\w+)*)\s*\{", line):
        node = m.group(1)
    elif re.match(r"^[A-Za-z_]\w*;$", line):
        expected.add((line[:-1], node))

problems = []

dynamic = subprocess.run(["readelf", "-d", "-W", library], check=True, capture_output=True,
                         text=True).stdout
soname = re.search(r"\(SONAME\)\s+Library soname: \[(.*)\]", dynamic)
if not soname or soname.group(1) != "librpmem.so.1":
    problems.append(f"SONAME is {soname.group(1) if soname else 'missing'}, not librpmem.so.1")

symbols = subprocess.run(["readelf", "--dyn-syms", "-W", library], check=True,
                         capture_output=True, text=True).stdout
exported = set()
for line in symbols.splitlines():
    fields = line.split()
    # Num: Value Size Type Bind Vis Ndx Name
    if len(fields) < 8 or not fields[0].endswith(":"):
        continue
    kind, bind, ndx, name = fields[3], fields[4], fields[6], fields[7]
    if ndx in ("UND", "ABS") or bind not in ("GLOBAL", "WEAK") or kind not in ("FUNC", "OBJECT"):
        continue
    base, _, version = name.partition("@")
    version = version.lstrip("@")
    exported.add((base, version or None))

for name, node in sorted(expected - exported):
    problems.append(f"missing: {name}@{node}")
for name, version in sorted(exported - expected):
    problems.append(f"exported but not in {script}: {name}@{version}")

for problem in problems:
    print(problem)
print(f"{len(exported)} exported symbols, {len(expected)} in the version script")
sys.exit(1 if problems else 0)
