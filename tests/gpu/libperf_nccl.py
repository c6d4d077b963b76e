#!/usr/bin/env python3
"""NCCL collectives for `gputap libperf`'s replay check (tests/gpu/libperf-nccl.sh).

Run with torchrun: every rank all-reduces, all-gathers and reduce-scatters
float32 tensors STEPS times (after WARMUP untimed calls), checks the results,
and rank 0 prints one EXPECT line per collective (what library_trace.csv must
hold: op, NCCL count, dtype, nranks) and one TORCH line with the median time
of the call on its stream, measured here with CUDA events.

    python3 libperf_nccl.py check library_perf.csv RUN_STDOUT GPUS
checks libperf's rows against the EXPECT lines and prints ok / not ok lines.
"""
import csv
import os
import re
import sys

WARMUP = 3
STEPS = 20
AR = 4 << 20  # all-reduce elements
AG = 1 << 20  # all-gather: elements each rank sends
RS = 1 << 20  # reduce-scatter: elements each rank receives


def median(xs):
    xs = sorted(xs)
    n = len(xs)
    return xs[n // 2] if n % 2 else 0.5 * (xs[n // 2 - 1] + xs[n // 2])


def worker():
    import torch
    import torch.distributed as dist

    dist.init_process_group("nccl")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", rank)))
    x = torch.full((AR,), float(rank + 1), device="cuda")
    g_in = torch.full((AG,), float(rank + 1), device="cuda")
    g_out = torch.empty(AG * world, device="cuda")
    s_in = torch.full((RS * world,), float(rank + 1), device="cuda")
    s_out = torch.empty(RS, device="cuda")
    counts = {"allreduce": AR, "allgather": AG, "reducescatter": RS}
    ok = True
    times = {}
    y = x
    for name in counts:
        ms = []
        for i in range(WARMUP + STEPS):
            if name == "allreduce":
                y = x.clone()  # all_reduce is in place: the same input every time
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            a.record()
            if name == "allreduce":
                dist.all_reduce(y)
            elif name == "allgather":
                dist.all_gather_into_tensor(g_out, g_in)
            else:
                dist.reduce_scatter_tensor(s_out, s_in)
            b.record()
            b.synchronize()
            if i >= WARMUP:
                ms.append(a.elapsed_time(b))
        times[name] = median(ms) * 1000.0
    want_sum = world * (world + 1) / 2
    ok &= abs(y[0].item() - want_sum) < 1e-3
    ok &= all(abs(g_out[r * AG].item() - (r + 1)) < 1e-6 for r in range(world))
    ok &= abs(s_out[0].item() - want_sum) < 1e-3
    torch.cuda.synchronize()
    if rank == 0:
        for name in counts:
            # one write per line: the ranks share one pipe (see the reader below)
            sys.stdout.write("EXPECT op=%s count=%d dtype=float32 nranks=%d\n" % (name, counts[name], world))
            sys.stdout.write("TORCH op=%s us=%.1f\n" % (name, times[name]))
            sys.stdout.flush()
    sys.stdout.write("rank %d result %s\n" % (rank, "ok" if ok else "WRONG"))
    sys.stdout.flush()
    dist.destroy_process_group()


def check(perf, run_out, gpus):
    fails = 0

    def say(good, name, why=""):
        nonlocal fails
        fails += 0 if good else 1
        print(("ok " if good else "not ok ") + "libperf-nccl/" + name + ("" if good else ": " + why), flush=True)

    expect, torch_us = [], {}
    # the ranks' outputs share one pipe and may interleave mid-line: take the
    # KEY=VALUE words that follow each EXPECT / TORCH marker, wherever it stands
    text = open(run_out).read()
    for mark, body in re.findall(r"(EXPECT|TORCH)((?:\s+\w+=[^\s=]+?(?=\s|$|rank|EXPECT|TORCH))+)", text):
        kv = dict(x.split("=", 1) for x in body.split())
        if mark == "EXPECT":
            expect.append(kv)
        elif "op" in kv and "us" in kv:
            torch_us[kv["op"]] = float(kv["us"])
    say(len(expect) == 3, "expect-lines", "%d EXPECT lines in %s" % (len(expect), run_out))
    rows = list(csv.DictReader(open(perf)))
    for col in ("bytes", "algbw_gbps", "busbw_gbps", "gpus"):
        say(bool(rows) and col in rows[0], "column-" + col, "library_perf.csv has no %s column" % col)
    nccl = [r for r in rows if r["library"] == "nccl"]
    for r in nccl:
        print("# %s | %s | %s us | algbw %s | busbw %s | gpus %s" % (
            r["config"], r["status"], r["recorded_us"], r["algbw_gbps"], r["busbw_gbps"], r["gpus"]))
    errs = [r for r in nccl if r["status"].startswith("error")]
    say(not errs, "no-error-rows", "; ".join("%s: %s" % (r["config"], r["status"]) for r in errs))
    n = gpus
    factor = {"allreduce": 2.0 * (n - 1) / n, "allgather": (n - 1) / n, "reducescatter": (n - 1) / n}
    for e in expect:
        op, count, nranks = e["op"], int(e["count"]), int(e["nranks"])
        row = [r for r in nccl if ("op=%s count=%d dtype=%s" % (op, count, e["dtype"])) in r["config"]
               and r["config"].endswith("nranks=%d" % nranks)]
        if not row:
            say(False, op + "/row", "no row op=%s count=%d nranks=%d" % (op, count, nranks))
            continue
        r = row[0]
        say(r["status"] == "ok", op + "/status-ok", r["status"])
        try:
            us, alg, bus = float(r["recorded_us"]), float(r["algbw_gbps"]), float(r["busbw_gbps"])
            used, nbytes = int(r["gpus"]), int(r["bytes"])
        except ValueError:
            say(False, op + "/numbers", "unreadable numbers in %r" % r)
            continue
        say(us > 0 and alg > 0 and bus > 0, op + "/positive", "us %s algbw %s busbw %s" % (us, alg, bus))
        say(used == min(nranks, gpus), op + "/gpus", "gpus %d, want %d" % (used, min(nranks, gpus)))
        want_bytes = count * 4 * (1 if op == "allreduce" else nranks)
        say(nbytes == want_bytes, op + "/bytes", "%d, want %d" % (nbytes, want_bytes))
        # algbw is bytes / time; busbw is algbw x the nccl-tests factor (2 decimals in the CSV)
        say(abs(alg - nbytes / (us * 1e3)) <= 0.01 * alg + 0.01, op + "/algbw",
            "algbw %s vs bytes/time %.2f" % (alg, nbytes / (us * 1e3)))
        say(abs(bus - alg * factor[op]) <= 0.01 * bus + 0.02, op + "/busbw-factor",
            "busbw %s vs algbw x %.3f = %.2f" % (bus, factor[op], alg * factor[op]))
        # plausible for GPUs of one host: above 0.5 GB/s, below 5 TB/s (units gone wrong would fail)
        say(0.5 < bus < 5000, op + "/plausible", "busbw %s GB/s" % bus)
        if op in torch_us:
            print("# %s: in the program %.1f us per call (CUDA events, one rank), replayed %.1f us" % (
                op, torch_us[op], us))
    return fails


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "check":
        sys.exit(1 if check(sys.argv[2], sys.argv[3], int(sys.argv[4])) else 0)
    worker()
