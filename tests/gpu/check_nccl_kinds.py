#!/usr/bin/env python3
"""Which collective each NCCL kernel ran, checked against what tests/gpu/nccl_kinds.py issued.

    python3 tests/gpu/check_nccl_kinds.py GPUTAP OUT_FILE RANK_INPUT...

OUT_FILE holds the job's ISSUED lines; each RANK_INPUT is one rank's trace (a gputap rank folder or
a PyTorch-profiler trace).  For each rank, the kinds and message sizes in bytes of the collectives
`gputap analyze --format json --collectives` finds (in launch order) must hold the issued list as one
run (4 bytes a float), each row's bytes its count times its type's size; with NCCL's profiler plugin,
every row matched by it.  NCCL moves a Broadcast's and an AllGather's data as bytes: its records
give those as ncclInt8 and a count of bytes, PyTorch's traces as Float and a count of floats.  Prints
"ok NAME" / "not ok NAME: why" and a closing "N passed, N failed".
"""
import os
import re
import sys

from checks import Checks, collectives


def main():
    exe, out, inputs = sys.argv[1], sys.argv[2], sys.argv[3:]
    text = open(out).read()
    issued = {int(m.group(1)): m.group(2).split() for m in re.finditer(r"ISSUED rank=(\d+) (.*)", text)}
    check = Checks()
    check("issued", len(issued) == len(inputs) and "WRONG" not in text, "ISSUED for ranks %s of %d inputs, or a "
          "WRONG result" % (sorted(issued), len(inputs)))
    for path in inputs:
        rows, err = collectives(exe, path)
        if rows is None:
            check("analyze %s" % path, False, err)
            continue
        m = re.search(r"rank(\d+)", os.path.basename(path.rstrip("/")))
        rank = int(m.group(1)) if m else -1
        want = ["%s:%d" % (k, 4 * int(n)) for k, n in (x.split(":") for x in issued.get(rank, []))]
        got = ["%s:%d" % (c["name"], c["bytes"]) for c in rows]
        at = next((i for i in range(len(got) - len(want) + 1) if got[i:i + len(want)] == want), -1) if want else -1
        check("rank%d-kinds-and-bytes" % rank, at >= 0, "issued %s, found %s" % (want[:8], got[:16]))
        sel = rows[at:at + len(want)] if at >= 0 else []
        size = {"ncclFloat32": 4, "ncclInt8": 1}
        check("rank%d-types" % rank, sel and all(c["dtype"] in size and c["bytes"] == size[c["dtype"]] * c["count"]
                                                 for c in sel), str([(c["dtype"], c["count"], c["bytes"])
                                                                     for c in sel[:4]]))
        kineto = path.endswith((".json", ".json.gz"))
        match = sorted({c["match"] for c in rows})
        check("rank%d-matched" % rank, match == (["order"] if kineto else ["nccl"]) or (kineto and match == ["trace"]),
              "matches %s" % match)
    return check.summary()


if __name__ == "__main__":
    raise SystemExit(main())
