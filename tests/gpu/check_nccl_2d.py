#!/usr/bin/env python3
"""gputap fleet on the run of tests/gpu/nccl_2d.py (tensor- and data-parallel pairs of 4 ranks).

    python3 tests/gpu/check_nccl_2d.py RUN_DIR GPUTAP

RUN_DIR: the `gputap run` folder, or the ranks' PyTorch-profiler traces (GT_KINETO_DIR), with the
job's output as job.out.  Checks: the ranks' checksums are
what the program computes; every collective is one of its pair's (tensor-parallel {0, 1}, {2, 3}:
two a step each; data-parallel {0, 2}, {1, 3}: one a step each), matched by NCCL's plugin, and no
warning that collectives were seen on fewer ranks (pairs are not a rank short of four); the planted
rank is the straggler, cause compute, late at its pair's first all-reduce of every affected step by
75-125 % of its sleep; a late arrival of another rank in those steps is put down to the planted one
("waiting for rank N") at no cost; nobody late by half the sleep between the warm-up (steps 0-1)
and the plant.
Prints "ok NAME" / "not ok NAME: why", then "N passed, N failed".
"""
import os
import sys

from checks import Checks, fleet_run, job_output, late_every_step

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))

PAIRS = {"tp": [[0, 1], [2, 3]], "dp": [[0, 2], [1, 3]]}


def main():
    run, exe = sys.argv[1], sys.argv[2]
    check = Checks()
    _, plant, sums = job_output(check, run, ranks=4)
    if not plant:
        return check.summary()
    slow, first, steps, sleep = plant
    nstep = first + steps
    want = {}
    for r in range(4):
        tp, dp = PAIRS["tp"][r // 2], PAIRS["dp"][r % 2]
        want[r] = float(sum(2 * sum(q + s for q in tp) * 4096 + sum(dp) for s in range(nstep)))
    check("results", sums == want, "checksums %s, want %s" % (sums, want))
    s, c = fleet_run(check, run, exe, 4, workers=2)
    # with NCCL's plugin (a gputap run folder) every row by its records; in PyTorch-profiler traces by
    # the process group's name and order within it
    kineto = not os.path.exists(os.path.join(run, "run.json"))
    by = set(s["collective_rows_by_match"])
    check("no-false-warnings", not [w for w in s["warnings"] if "fewer ranks" in w or "left out" in w] and
          (by <= {"trace", "order"} and "(order)" not in set(c["comm"]) if kineto else by == {"nccl"}),
          "warnings %s, rows %s" % (s["warnings"], s["collective_rows_by_match"]))
    inside = c[c["iteration"] >= 0]
    per = {}
    for x, it in zip(inside["ranks"], inside["iteration"]):
        per.setdefault(tuple(x), {}).setdefault(int(it), 0)
        per[tuple(x)][int(it)] += 1
    wantper = {(0, 1): 2, (2, 3): 2, (0, 2): 1, (1, 3): 1}
    check("collectives-of-their-pairs", set(per) == set(wantper) and
          all(per[p] == {i: n for i in range(nstep)} for p, n in wantper.items()),
          "per pair and step: %s" % {p: sorted(set(v.values())) for p, v in per.items()})
    st = s["stragglers"]
    top = st[0] if st else {}
    check("straggler-is-the-planted-rank", top.get("rank") == slow and top.get("cause") == "compute",
          str([(x["rank"], round(x["cost_ms"], 3), x["cause"]) for x in st]))
    tp_pair = PAIRS["tp"][slow // 2]
    bad = late_every_step(inside[[sorted(x) == tp_pair for x in inside["ranks"]]], slow, range(first, nstep), sleep)
    check("late-at-its-pair-every-affected-step", not bad, "steps without it or late by %s (sleep %.3f ms)" % (
        bad, sleep))
    others = inside[(inside["iteration"] >= first) & inside["is_late"] & (inside["late_rank"] != slow) &
                    (inside["late_ms"] > 0.5 * sleep)]
    check("others-late-waiting-for-it", all(x == "waiting for rank %d" % slow for x in others["cause"]),
          str(others[["iteration", "ranks", "late_rank", "late_ms", "cause"]].values[:6]))
    costs = {x["rank"]: x["cost_ms"] for x in st}
    check("only-the-planted-rank-costs", all(v < 0.25 * sleep * steps for r, v in costs.items() if r != slow),
          str(costs))
    # steps 0 and 1 are a warm-up: the pairs' communicators are made at their first use (on 4 x H200
    # rank 2 arrived 5.5 ms late at a step-1 all-reduce, before any plant); fleet reports it
    early = inside[(inside["iteration"] >= 2) & (inside["iteration"] < first) & (inside["late_ms"] > 0.5 * sleep)]
    check("not-late-before-the-plant", len(early) == 0, str(early[["iteration", "late_rank", "late_ms"]].values))
    print("others late:", len(others), "stragglers:", [(x["rank"], round(x["cost_ms"], 3), x["pattern"], x["cause"])
                                                       for x in st])
    return check.summary()


if __name__ == "__main__":
    raise SystemExit(main())
