#!/usr/bin/env python3
"""gputap fleet on the run of tests/gpu/nccl_graph.py (an all-reduce replayed from a CUDA graph).

    python3 tests/gpu/check_nccl_graph.py RUN_DIR GPUTAP

RUN_DIR: the `gputap run` folder, with the job's output as job.out.  Checks: every rank's checksum
is the one the job must compute ((2 x sum of rank+1 over the ranks + 1) per replay), fleet finds one
all-reduce per step on every rank, the planted rank as the straggler, late at every affected step by
75-125 % of the sleep.  Prints "ok NAME" / "not ok NAME: why", then "N passed, N failed".
"""
import os
import re
import sys

from checks import Checks, fleet_run, job_output, late_every_step

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))


def main():
    run, exe = sys.argv[1], sys.argv[2]
    check = Checks()
    replays = r"STEPS rank=\d+ replays=(\d+)"
    out, plant, sums = job_output(check, run, need=(replays,))
    if not plant:
        return check.summary()
    reps = re.findall(replays, out)
    slow, first, steps, sleep = plant
    world, nstep = len(sums), int(reps[0])
    want = (2 * sum(r + 1 for r in range(world)) + 1) * nstep
    check("results", all(v == want for v in sums.values()), "checksums %s, want %g" % (sums, want))
    s, c = fleet_run(check, run, exe, world)
    inside = c[c["iteration"] >= 0]
    check("one-all-reduce-a-step-on-every-rank", s["iterations"] == nstep and len(inside) == nstep and
          sorted(inside["iteration"]) == list(range(nstep)) and all(len(x) == world for x in inside["ranks"]) and
          set(inside["name"]) == {"AllReduce"},
          "%d iterations, %d collectives in them: %s" % (s["iterations"], len(inside),
                                                        list(zip(inside["iteration"], inside["name"]))[:10]))
    st = s["stragglers"]
    check("straggler-is-the-planted-rank", st and st[0]["rank"] == slow, str([(x["rank"], x["cost_ms"]) for x in st]))
    bad = late_every_step(inside, slow, range(first, first + steps), sleep)
    check("late-every-affected-step", not bad, "steps without it or late by %s (sleep %.3f ms)" % (bad, sleep))
    early = inside[(inside["iteration"] < first) & (inside["late_ms"] > 0.5 * sleep)]
    check("not-late-before-the-plant", len(early) == 0, str(early[["iteration", "late_rank", "late_ms"]].values))
    return check.summary()


if __name__ == "__main__":
    raise SystemExit(main())
