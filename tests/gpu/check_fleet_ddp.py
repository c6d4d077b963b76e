#!/usr/bin/env python3
"""gputap fleet on the run folder of tests/gpu/fleet-ddp.sh, checked against the plant.

    python3 tests/gpu/check_fleet_ddp.py RUN_DIR [GPUTAP]

RUN_DIR holds the `gputap run` output and the job's bare.out / traced.out (or one run folder per rank,
from `torchrun ... gputap run -o RUN_DIR/rank%q{RANK}`, and those two files); or, from the same job run
under torch.profiler (GT_KINETO_DIR), the ranks' PyTorch-profiler traces rank<R>.json and its
bare.out / traced.out: the same checks, except that the collectives are matched by the traces' own
arguments (PyTorch's "Process Group Name" and "Seq"), not by NCCL's profiler plugin, and there is
no launcher process.  Prints "ok NAME" or
"not ok NAME: why" per check, then the numbers.  Tolerances: the straggler's cost over the affected
steps (the time the other ranks waited for it alone) within 15 % of the planted sleep times the
affected steps; each
affected step's late collective by the planted rank, late by 75-125 % of the sleep, with a skew
(last arrival - first) of 75-125 % of it too.

Steps 0 and 1 are DDP's warm-up and are reported, not checked: DDP builds its gradient buckets
during step 0's backward and rebuilds them at the start of step 1's forward (two Broadcasts of
the new bucket layout, after an AllReduce), host work whose length differs between ranks — on
2 x H200 one rank arrived 15-16 ms late at those three collectives of step 1, with fleet's cause
host/launch, before any plant.  Fleet reports that lateness because it happened; from step
WARMUP on, a rank other than the planted one late by half the sleep fails the check.
"""
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))

from checks import Checks  # noqa: E402
from gputap import fleet  # noqa: E402

COST_TOL = 0.15
LATE_LO, LATE_HI = 0.75, 1.25
WARMUP = 2  # steps 0 and 1: DDP's bucket build and rebuild (above)


def main():
    run = sys.argv[1]
    exe = sys.argv[2] if len(sys.argv) > 2 else None
    check = Checks()

    def text(name):
        try:
            return open(os.path.join(run, name)).read()
        except OSError:
            return ""

    bare, traced = text("bare.out"), text("traced.out")
    m = re.search(r"PLANT rank=(\d+) from_step=(\d+) steps=(\d+) sleep_ms=([0-9.]+)", traced)
    check("plant-announced", m is not None, "no PLANT line in traced.out")
    if not m:
        return check.summary()
    slow, first, steps, sleep = int(m.group(1)), int(m.group(2)), int(m.group(3)), float(m.group(4))
    cb = re.findall(r"CHECKSUM (\S+)", bare)
    ct = re.findall(r"CHECKSUM (\S+)", traced)
    check("results-unchanged", cb and cb == ct, "bare %s, traced %s" % (cb, ct))

    res = fleet.analyze([run], nvtx=os.environ.get("GT_NVTX", "train_step") or None, workers=2, gputap=exe, progress=None)
    s = res.summary
    print(res.text)
    # one run folder (gputap run around torchrun), or one per rank (torchrun around gputap run -o
    # RUN/rank%q{RANK}), or the ranks' PyTorch-profiler traces
    runs = [run] if os.path.exists(os.path.join(run, "run.json")) else [
        os.path.join(run, d) for d in sorted(os.listdir(run)) if os.path.exists(os.path.join(run, d, "run.json"))]
    kineto = not runs
    nranks = sum(len([d for d in os.listdir(r) if re.fullmatch(r"rank\d+" + (r"\.json(\.gz)?" if kineto else ""), d)])
                 for r in (runs or [run]))
    check("ranks", s["ranks"] == nranks and not s["failed"], "%d ranks, failed %s" % (s["ranks"], s["failed"]))
    if kineto:
        check("nothing-skipped", not s["skipped"] and not s["partial"], "skipped %s partial %s" % (
            s["skipped"], s["partial"]))
    else:
        check("launcher-skipped", all("no GPU work" in x["reason"] for x in s["skipped"]) and not s["partial"],
              "skipped %s partial %s" % (s["skipped"], s["partial"]))
    by = s["collective_rows_by_match"]
    c = res.collectives
    if kineto:
        # PyTorch names each kernel's process group; without its "Seq" (PyTorch 2.11 gives none) the
        # kernels are numbered in order per process group
        check("matched-per-process-group", sum(by.values()) > 0 and set(by) <= {"trace", "order"} and
              "(order)" not in set(c["comm"]), "rows by match %s, communicators %s" % (by, sorted(set(c["comm"]))))
    else:
        check("matched-by-nccl-plugin", sum(by.values()) > 0 and by.get("nccl", 0) == sum(by.values()),
              "rows by match %s" % by)
    # DDP all-reduces each gradient once a step: the AllReduces' element counts of a step add up to the
    # model's parameters (LAYERS x Linear(WIDTH, WIDTH) in torchjob.py), 4 bytes each; FSDP
    # (fsdp_straggler.py, "MODEL fsdp" in its output) reduce-scatters them: each rank receives
    # parameters / world of them a step
    src = open(os.path.join(HERE, "torchjob.py")).read()
    width, layers = (int(x) for x in re.search(r"WIDTH, LAYERS, BATCH = (\d+), (\d+),", src).groups())
    params = layers * (width * width + width)
    fsdp = re.search(r"MODEL fsdp params=(\d+) world=(\d+)", traced)
    kind, want_n = ("ReduceScatter", params // int(fsdp.group(2))) if fsdp else ("AllReduce", params)
    ar = c[c["name"] == kind]
    # gradient accumulation (ddp_straggler.py's GT_ACCUM, "ACCUM N"): only every Nth step all-reduces, and
    # the slow rank's lateness there is its sleeps since the last one
    accum = re.search(r"ACCUM (\d+)", traced)
    A = int(accum.group(1)) if accum else 1
    syncs = [i for i in range(first + steps) if (i + 1) % A == 0]

    def planted(it):
        return sum(1 for j in range(it - A + 1, it + 1) if j >= first)

    per = {int(i): int(n) for i, n in ar[ar["iteration"] >= 0].groupby("iteration")["count"].sum().items()}
    check("message-sizes", per == {i: want_n for i in syncs} and
          (ar["bytes"] == 4 * ar["count"]).all() and set(ar["dtype"]) == {"ncclFloat32"},
          "%s elements per step %s, want %d each; dtypes %s" % (kind, per, want_n, sorted(set(ar["dtype"]))))
    check("iterations", s["iterations"] == first + steps, "%d iterations" % s["iterations"])
    st = s["stragglers"]
    top = st[0] if st else {}
    check("straggler-is-the-planted-rank", top.get("rank") == slow, "stragglers %s" % [
        (x["rank"], round(x["cost_ms"], 3)) for x in st])
    want = sleep * steps
    # the cause fleet must give: the plant's kind (ddp_straggler.py's GT_PLANT; older runs: a GPU sleep)
    kind = re.search(r"PLANT rank=\d+ .*kind=(\w+)", traced)
    cause = {"gpu": "compute", "cpu": "data loading", "copy": "memory copies"}[kind.group(1) if kind else "gpu"]
    check("straggler-consistent-cause", top.get("pattern") == "consistent" and top.get("cause") == cause,
          "%s %s, want consistent %s" % (top.get("pattern"), top.get("cause"), cause))
    its = res.iterations
    # over the affected all-reducing steps (with accumulation, not the micro-steps between: DDP's bucket
    # rebuild, host work of the step after the first sync, is not the plant's)
    affected = [i for i in syncs if planted(i)]
    got = float(its[(its["rank"] == slow) & its["iteration"].isin(affected)]["cost_ms"].sum())
    check("straggler-cost", abs(got - want) <= COST_TOL * want,
          "cost over the affected steps %.3f ms vs planted %.3f ms (%d x %.3f)" % (got, want, steps, sleep))
    bad, badskew = [], []
    for it in affected:
        exp = planted(it) * sleep
        rows = c[(c["iteration"] == it) & c["is_late"] & (c["late_rank"] == slow)]
        if not len(rows) or not (LATE_LO * exp <= rows["late_ms"].max() <= LATE_HI * exp):
            bad.append((it, rows["late_ms"].max() if len(rows) else None))
        top_row = rows.loc[rows["late_ms"].idxmax()] if len(rows) else None
        if top_row is None or not (LATE_LO * exp <= top_row["skew_ms"] <= LATE_HI * exp):
            badskew.append((it, None if top_row is None else round(float(top_row["skew_ms"]), 3)))
    check("late-collective-every-affected-step", not bad, "steps without it, or late by: %s (sleep %.3f ms)" % (
        bad, sleep))
    check("skew-of-the-plant-every-affected-step", not badskew, "steps whose late collective's skew is off: %s "
          "(sleep %.3f ms)" % (badskew, sleep))
    # the warm-up is DDP's first two all-reducing steps (with accumulation: the first sync step's
    # backward builds the buckets, the next forward rebuilds them; on 2 x H200 with GT_ACCUM=4 rank 1
    # arrived 45.6 ms late at step 3's all-reduce, before any plant)
    warmup = syncs[WARMUP - 1] + 1 if len(syncs) >= WARMUP else WARMUP
    warm = c[(c["iteration"] >= 0) & (c["iteration"] < warmup) & c["is_late"]]
    print("warm-up steps 0-%d (not checked): %s" % (warmup - 1, [
        (int(r.iteration), r.name, int(r.seq), int(r.late_rank), round(float(r.late_ms), 3), r.cause)
        for r in warm.itertuples() if r.late_ms > 0.5]))
    early = c[(c["iteration"] >= warmup) & (c["iteration"] < first) & (c["late_ms"] > 0.5 * sleep)]
    check("not-late-before-the-plant", len(early) == 0, "late before step %d (after the warm-up): %s" % (
        first, early[["iteration", "late_rank", "late_ms"]].values))
    others = c[(c["iteration"] >= first) & c["is_late"] & (c["late_rank"] != slow) & (c["late_ms"] > 0.5 * sleep)]
    check("no-other-rank-late-by-half-the-plant", len(others) == 0, "%s" % others[["iteration", "late_rank",
                                                                                   "late_ms"]].values)
    neg = [(n, col) for n, t in (("ranks", res.ranks), ("iterations", res.iterations), ("collectives", c))
           for col in t.columns if col.endswith("_ms") and col != "clock_offset_ms" and t[col].dtype.kind == "f"
           and (t[col] < 0).any()]
    check("no-negative-times", not neg, str(neg))
    print(json.dumps({"plant": {"rank": slow, "from_step": first, "steps": steps, "sleep_ms": sleep},
                      "cost_affected_steps_ms": got,
                      "straggler": {k: top.get(k) for k in ("rank", "cost_ms", "cost_per_late_iteration_ms",
                                                            "pattern", "cause", "late_collectives",
                                                            "iterations_late", "max_late_ms")},
                      "late_ms_per_step": {int(i): float(g["late_ms"].max()) for i, g in
                                           c[c["is_late"] & (c["late_rank"] == slow)].groupby("iteration")},
                      "rows_by_match": by, "late_threshold_ms": s["late_threshold_ms"],
                      "fleet_seconds": s["seconds"]}, indent=1))
    return check.summary()


if __name__ == "__main__":
    raise SystemExit(main())
