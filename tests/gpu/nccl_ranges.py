"""NCCL's own NVTX ranges under range metrics (docs/range-metrics.md): each rank runs 4 NVTX
`train_step` ranges of a matmul and an all-reduce; prints its checksum.

    gputap run -o A -- torchrun --standalone --nproc_per_node 2 tests/gpu/nccl_ranges.py
    gputap run -o B --metrics gpu__time_duration.sum -- torchrun --standalone --nproc_per_node 2 tests/gpu/nccl_ranges.py
    python3 tests/gpu/nccl_ranges.py --check A B      N passed, N failed
"""
import csv
import glob
import os
import sys


def job():
    import torch
    import torch.distributed as dist

    dist.init_process_group("nccl")
    r = dist.get_rank()
    torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
    torch.manual_seed(r)
    a = torch.randn(1024, 1024, device="cuda")
    s = 0.0
    for _ in range(4):
        with torch.cuda.nvtx.range("train_step"):
            x = a @ a.T / 1024
            dist.all_reduce(x)
            s += float(x.sum())
    print("rank %d checksum %.6f" % (r, s), flush=True)
    dist.destroy_process_group()


def check(a, b):
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import gtr

    ok = bad = 0

    def say(cond, what):
        nonlocal ok, bad
        print(("ok " if cond else "not ok ") + what)
        ok, bad = ok + bool(cond), bad + (not cond)

    n = 0
    for f in glob.glob(a + "/*/trace.gtr"):
        n += sum(1 for r in gtr.read(f)["records"] if r["type"] == "range" and r.get("domain") == "NCCL")
    say(n > 0, "NCCL opened %d NVTX ranges of its own in the traced run (they stay in the trace)" % n)
    files = sorted(glob.glob(b + "/*/range_metrics.csv"))
    say(len(files) == 2, "range metrics of %d ranks" % len(files))
    for f in files:
        rows = [r for r in csv.DictReader(open(f, newline="")) if r["occurrence"] == "all"]
        paths = sorted({r["path"] for r in rows})
        step = [r for r in rows if r["path"] == "train_step" and r["metric"] == "gpu__time_duration.sum"]
        say(not any("nccl" in p.lower() for p in paths), "%s: no NCCL range among %s" % (f, paths))
        say(step and int(step[0]["kernels"]) >= 8, "%s: train_step holds %s kernels (4 matmuls and 4 all-reduces "
            "at least)" % (f, step[0]["kernels"] if step else "no"))
    print("%d passed, %d failed" % (ok, bad))
    return 1 if bad else 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["--check"]:
        sys.exit(check(sys.argv[2], sys.argv[3]))
    job()
