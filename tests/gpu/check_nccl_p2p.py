#!/usr/bin/env python3
"""gputap fleet on the run of tests/gpu/nccl_p2p.py (pipeline hops between collectives, a slow sender).

    python3 tests/gpu/check_nccl_p2p.py RUN_DIR GPUTAP

RUN_DIR: the `gputap run` folder, or the ranks' PyTorch-profiler traces (GT_KINETO_DIR), with the
job's output as job.out.  Checks: each rank received
what the program must compute (rank r: sum over the steps of (step + r - 1) x 2^20); fleet keeps
the point-to-point transfers apart from the collectives (no collective mixes a SendRecv row with
another kind; each step's two AllReduces on every rank); each hop is one operation of its two
ranks; the planted sender is the straggler, late at the hop of every affected step by 75-125 % of
its sleep; nobody late by half the sleep between the warm-up step (0) and the plant.  Prints "ok NAME" / "not ok NAME: why",
then "N passed, N failed".
"""
import os
import sys

from checks import Checks, fleet_run, job_output, late_every_step

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))

N = 1 << 20
WARMUP = 1


def main():
    run, exe = sys.argv[1], sys.argv[2]
    check = Checks()
    _, plant, sums = job_output(check, run)
    if not plant:
        return check.summary()
    slow, first, steps, sleep = plant
    world, nstep = len(sums), first + steps
    want = {r: (0.0 if r == 0 else float(sum(s + r - 1 for s in range(nstep)) * N)) for r in range(world)}
    check("results", sums == want, "received %s, want %s" % (sums, want))
    s, c = fleet_run(check, run, exe, world)
    print(c[["iteration", "comm", "seq", "name", "ranks", "late_rank", "late_ms", "match"]].to_string()[:4000])
    inside = c[c["iteration"] >= 0]
    kinds = sorted(set(inside["name"]))
    check("kinds-kept-apart", all(k == "AllReduce" or k.startswith("SendRecv") for k in kinds) and
          not [w for w in s["warnings"] if "left out" in w],
          "kinds %s, warnings %s" % (kinds, s["warnings"]))
    ar = inside[inside["name"] == "AllReduce"]
    per = ar.groupby("iteration").size().to_dict()
    check("two-all-reduces-a-step", per == {i: 2 for i in range(nstep)} and all(len(x) == world for x in ar["ranks"]),
          "AllReduces per step %s" % per)
    hops = inside[inside["name"] != "AllReduce"]
    pairs = sorted(tuple(x) for x in hops["ranks"])
    want_pairs = sorted((q, q + 1) for q in range(world - 1) for _ in range(nstep))
    check("each-hop-its-two-ranks", pairs == want_pairs, "hops' ranks %s, want %s" % (pairs[:12], want_pairs[:12]))
    st = s["stragglers"]
    check("straggler-is-the-planted-sender", st and st[0]["rank"] == slow,
          str([(x["rank"], round(x["cost_ms"], 3)) for x in st]))
    bad = late_every_step(hops, slow, range(first, nstep), sleep)
    check("late-at-the-hop-every-affected-step", not bad, "steps without it or late by %s (sleep %.3f ms)" % (
        bad, sleep))
    # step 0 is a warm-up: NCCL connects two ranks at their first send and receive (on 2 x H200 rank 1
    # arrived 106 ms late at step 0's second all-reduce); fleet reports it, this does not check it
    early = inside[(inside["iteration"] >= WARMUP) & (inside["iteration"] < first) & (inside["late_ms"] > 0.5 * sleep)]
    check("not-late-before-the-plant", len(early) == 0, str(early[["iteration", "late_rank", "late_ms"]].values))
    return check.summary()


if __name__ == "__main__":
    raise SystemExit(main())
