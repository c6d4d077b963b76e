#!/usr/bin/env python3
"""gputap fleet on the run of tests/gpu/nccl_a2a.py (all-to-all exchanges with a slow rank).

    python3 tests/gpu/check_nccl_a2a.py RUN_DIR GPUTAP

RUN_DIR: the `gputap run` folder, with the job's output as job.out.  Checks: each rank received what
the program computes (rank r: sum over steps s and ranks q of (100 q + s) x 4096); fleet warns of no
row left out (an all-to-all's own share, a send to itself, is no pair); each step's all-to-all is
one operation per ordered pair of different ranks (world x (world - 1) of two ranks each, with
more than 4 ranks one operation of all ranks); each step's all-reduce on every rank; the planted
rank the straggler, late at the all-to-all of every affected step by 75-125 % of its sleep.
Prints "ok NAME" / "not ok NAME: why", then "N passed, N failed".
"""
import os
import sys

from checks import Checks, fleet_run, job_output, late_every_step

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))


def main():
    run, exe = sys.argv[1], sys.argv[2]
    check = Checks()
    _, plant, sums = job_output(check, run)
    if not plant:
        return check.summary()
    slow, first, steps, sleep = plant
    world, nstep = len(sums), first + steps
    want = {r: float(sum((100 * q + s) * 4096 for s in range(nstep) for q in range(world))) for r in range(world)}
    check("results", sums == want, "received %s, want %s" % (sums, want))
    s, c = fleet_run(check, run, exe, world)
    check("no-row-left-out", not [w for w in s["warnings"] if "left out" in w or "fewer ranks" in w], str(s["warnings"]))
    inside = c[c["iteration"] >= 0]
    ar = inside[inside["name"] == "AllReduce"]
    check("an-all-reduce-a-step", sorted(ar["iteration"]) == list(range(nstep)) and
          all(len(x) == world for x in ar["ranks"]), str(list(zip(ar["iteration"], ar["ranks"]))[:8]))
    ex = inside[inside["name"] != "AllReduce"]
    per = ex.groupby("iteration").size().to_dict()
    pairs = world * (world - 1) if 2 * (world - 1) <= 8 else 1
    check("the-exchange-a-step", per == {i: pairs for i in range(nstep)} and
          all(len(x) == (2 if pairs > 1 else world) for x in ex["ranks"]),
          "operations per step %s, want %d" % (per, pairs))
    st = s["stragglers"]
    check("straggler-is-the-planted-rank", st and st[0]["rank"] == slow,
          str([(x["rank"], round(x["cost_ms"], 3), x["cause"]) for x in st]))
    bad = late_every_step(ex, slow, range(first, nstep), sleep)
    check("late-at-the-exchange-every-affected-step", not bad, "steps without it or late by %s (sleep %.3f)" % (
        bad, sleep))
    return check.summary()


if __name__ == "__main__":
    raise SystemExit(main())
