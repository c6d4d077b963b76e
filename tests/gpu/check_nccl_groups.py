#!/usr/bin/env python3
"""Collectives of two process groups issued in a different order on each rank, matched across ranks by
their communicator (tests/gpu/nccl_groups.py).

    python3 tests/gpu/check_nccl_groups.py GPUTAP OUT_FILE RANK_INPUT...

For each rank, `gputap analyze --format json --collectives` gives each collective its key
(communicator, kind, sequence number); each key the job issued must be on every rank with the same
element count (1000+r on one group, 2000+r on the other: a key that pairs the two groups pairs
different counts), the two groups must be two communicators, and `gputap fleet` must see each of
those collectives on every rank.  Prints "ok NAME" / "not ok NAME: why" and "N passed, N failed".
"""
import os
import re
import sys

from checks import Checks, collectives

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))


def main():
    exe, out, inputs = sys.argv[1], sys.argv[2], sys.argv[3:]
    text = open(out).read()
    issued = {int(m.group(1)): [int(x.split(":")[1]) for x in m.group(2).split()]
              for m in re.finditer(r"ISSUED rank=(\d+) (.*)", text)}
    check = Checks()

    check("issued", len(issued) == len(inputs) >= 2 and "WRONG" not in text, "ISSUED for %s" % sorted(issued))
    want = set(issued.get(0, []))
    keys = []  # per rank {key: count} of the issued collectives
    for path in inputs:
        rows = collectives(exe, path)[0] or []
        keys.append({(c["comm"], c["name"], c["seq"]): c["count"] for c in rows if c["count"] in want})
    for i, k in enumerate(keys):
        check("rank%d-all-issued" % i, sorted(k.values()) == sorted(want), "found counts %s" % sorted(k.values()))
    same = all(k == keys[0] for k in keys[1:])
    check("same-key-same-count-on-every-rank", keys and same, "rank0 %s vs rank1 %s" % (
        sorted(keys[0].items())[:6], sorted(keys[1].items())[:6] if len(keys) > 1 else None))
    comms = {c for c, _, _ in keys[0]} if keys else set()
    check("two-communicators", len(comms) == 2, "communicators %s" % sorted(comms))
    from gputap import fleet

    r = fleet.analyze(inputs, workers=1, gputap=exe, progress=None)
    co = r.collectives
    mine = co[co["count"].isin(want)]
    check("fleet-sees-each-on-every-rank", len(mine) == len(want) and all(len(x) == len(inputs) for x in mine["ranks"]),
          "%d collectives, ranks %s" % (len(mine), [len(x) for x in mine["ranks"]][:8]))
    return check.summary()


if __name__ == "__main__":
    raise SystemExit(main())
