#!/usr/bin/env bash
# docs/architecture.md's table "Who includes whom" against the code: for every folder of src/,
# the other folders its files #include (include/gputap/ written `gputap`), found by reading each
# `#include "folder/..."` (and "gputap.h").  A difference either way is an error: an include the
# page does not show, or an arrow the page draws that no file has any more.
# `tests/lint/architecture.sh --print` prints the table as the code has it.
set -u
cd "$(dirname "$0")/../.."
python3 - "${1:-}" <<'EOF'
import os
import re
import sys

src = "src"
folders = sorted(d for d in os.listdir(src) if os.path.isdir(os.path.join(src, d)) and d != "compat")
code = {f: set() for f in folders}
for f in folders:
    for root, _, files in os.walk(os.path.join(src, f)):
        for n in files:
            if not n.endswith((".c", ".h")):
                continue
            with open(os.path.join(root, n), errors="replace") as fh:
                for line in fh:
                    m = re.match(r'\s*#\s*include\s+"([^"]+)"', line)
                    if not m:
                        continue
                    inc = m.group(1)
                    to = "gputap" if inc == "gputap.h" else inc.split("/")[0] if "/" in inc else None
                    if to and to != f and (to in code or to == "gputap"):
                        code[f].add(to)
if sys.argv[1] == "--print":
    for f in folders:
        print("| `%s` | %s |" % (f, ", ".join(sorted(code[f])) or "nothing"))
    sys.exit(0)

page, rows, on = "docs/architecture.md", {}, False
with open(page) as fh:
    for line in fh:
        if line.startswith("## "):
            on = line.strip() == "## Who includes whom"
        m = re.match(r"\|\s*`([a-z]+)`\s*\|\s*([^|]*)\|", line) if on else None
        if m:
            rows[m.group(1)] = set() if m.group(2).strip() == "nothing" else {
                w.strip() for w in m.group(2).split(",") if w.strip()}
bad = 0
for f in folders:
    if f not in rows:
        print("%s: no row for src/%s in 'Who includes whom'" % (page, f))
        bad = 1
        continue
    for to in sorted(code[f] - rows[f]):
        print("%s: src/%s includes %s, the page does not say so" % (page, f, to))
        bad = 1
    for to in sorted(rows[f] - code[f]):
        print("%s: the page says src/%s includes %s; no file of it does" % (page, f, to))
        bad = 1
for f in sorted(set(rows) - set(folders)):
    print("%s: a row for src/%s, which does not exist" % (page, f))
    bad = 1
sys.exit(bad)
EOF
