"""The per-process results of bench/overhead's in-process benchmarks (ab.sh, phases.sh).

Each process's JSON line is kept as "A ROUND MODE {json}"; load() gives {mode: [json, ...]} in the
order the processes ran.
"""
import json
import re


def load(path):
    runs = {}
    for line in open(path):
        m = re.match(r"A (\d+) (\S+) (\{.*\})", line.strip())
        if m:
            runs.setdefault(m.group(2), []).append(json.loads(m.group(3)))
    return runs
