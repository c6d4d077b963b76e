"""Generate the recording of a multi-machine training job, with known answers.

    python -m gputap.fleet.generate OUTDIR [--ranks 64] [--gpus-per-host 8] [--iterations 6]
                                    [--format gtr|kineto] [--no-plants]

Writes, per machine, a gputap run folder (OUTDIR/host<H>/run.json and one rank<R>/trace.gtr per
rank), or with --format kineto one PyTorch-profiler trace per rank (OUTDIR/rank<R>.json.gz).
Every iteration of every rank: a host-to-device copy, compute kernels, an AllReduce that overlaps
a compute kernel on a second stream, more compute, and a closing AllReduce.  The collectives are
synchronous as NCCL's are: one ends on every rank at the same (true) time, after the last rank
arrived.  Each machine's clock is off by a known offset.

Planted, unless --no-plants: a slow rank (its compute kernels 30 % longer: late at every
collective, cause compute), from 8 ranks on a stalled rank (its host starts every iteration's work
4 ms late, the GPU idle before it: late at every first AllReduce, cause data loading), a late
collective (one rank arrives late at one collective, once: --late-ms), one corrupt rank folder (its
trace.gtr overwritten with bytes that are not a trace), and one machine whose NCCL is older than
2.23 (no profiler-plugin records: its collectives are matched by order).  OUTDIR/truth.json says
what was planted.
"""
import argparse
import gzip
import json
import os
import random

from gputap.fleet.gtrwrite import TraceWriter

MS = 1_000_000
US = 1_000
T0 = 1_795_000_000 * 1_000_000_000  # ns since the epoch
WORLD_COMM = 0x5EED_F1EE_7C0A_11ED


def _plan(ranks, gpus_per_host, iterations, plants, random_state, late_ms=8.0, stall_ms=4.0):
    rnd = random.Random(random_state)
    hosts = (ranks + gpus_per_host - 1) // gpus_per_host
    truth = {
        "ranks": ranks,
        "hosts": hosts,
        "iterations": iterations,
        "collectives_per_iteration": 2,
        # host 0 is the reference clock; the others are off by up to +-50 ms
        "clock_offset_ms": [0.0] + [round(rnd.uniform(-50, 50), 3) for _ in range(hosts - 1)],
        "slow_rank": None,
        "stall": None,
        "late": None,
        "corrupt_rank": None,
        "old_nccl_host": None,
    }
    if plants:
        truth["slow_rank"] = min(ranks - 1, 37 % ranks)
        late_rank = min(ranks - 1, 21 % ranks)
        if late_rank == truth["slow_rank"]:
            late_rank = (late_rank + 1) % ranks
        it = min(3, iterations - 1)
        truth["late"] = {"rank": late_rank, "iteration": it, "seq": it * 2 + 1, "extra_ms": late_ms}
        if ranks >= 8 and stall_ms:
            stall = 9 % ranks
            while stall in (truth["slow_rank"], late_rank, min(ranks - 1, 50 % ranks)):
                stall = (stall + 1) % ranks
            truth["stall"] = {"rank": stall, "ms": stall_ms}
        if ranks > 4:
            corrupt = min(ranks - 1, 50 % ranks)
            while corrupt in (truth["slow_rank"], late_rank, (truth["stall"] or {}).get("rank")):
                corrupt = (corrupt + 1) % ranks
            truth["corrupt_rank"] = corrupt
        if hosts > 1:
            truth["old_nccl_host"] = hosts - 1
    return truth


def simulate(ranks=64, gpus_per_host=8, iterations=6, plants=True, random_state=1, late_ms=8.0, kernels=0):
    """The job in true time: per rank a list of ops, and the truth; the same for the same random_state."""
    truth = _plan(ranks, gpus_per_host, iterations, plants, random_state, late_ms)
    stall = (truth["stall"] or {}).get("rank")
    rnd = random.Random(random_state + 1)
    slow, late = truth["slow_rank"], truth["late"]
    ops = {r: [] for r in range(ranks)}  # (kind, name, stream, gpu_start, gpu_end, launch, extra)
    ranges = {r: [] for r in range(ranks)}
    colls = {r: [] for r in range(ranks)}  # (seq, gpu_start, gpu_end, launch)
    t = T0 + 10 * MS
    seq = 0
    for it in range(iterations):
        cpu_start = t - 2 * MS  # the CPU runs ahead of the GPU
        phase1, arrive1 = {}, {}
        for r in range(ranks):
            f = 1.3 if r == slow else 1.0
            s0 = int(truth["stall"]["ms"] * MS) if r == stall else 0  # the host late: data loading
            g = t + s0
            launch = cpu_start + s0 + 50 * US
            ops[r].append(("memcpy", "h2d", 7, g, g + 300 * US, launch, 4 << 20))
            g += 300 * US
            for k in range(3):
                d = int((2.0 + 0.25 * k) * MS * f) + rnd.randrange(0, 20 * US)
                launch += 30 * US
                ops[r].append(("kernel", "ampere_sgemm_128x64_nn" if k != 1 else "vectorized_elementwise_kernel",
                               7, g, g + d, launch, None))
                g += d
            arrive1[r] = g
            phase1[r] = launch
        end1 = max(arrive1.values()) + 1500 * US
        arrive2 = {}
        for r in range(ranks):
            f = 1.3 if r == slow else 1.0
            launch = phase1[r] + 30 * US
            colls[r].append((seq, arrive1[r], end1 + rnd.randrange(0, 5 * US), launch))
            # compute on a second stream, overlapping the first AllReduce
            d = int(1.2 * MS * f) + rnd.randrange(0, 20 * US)
            launch += 30 * US
            ops[r].append(("kernel", "ampere_sgemm_64x64_tn", 13, arrive1[r], arrive1[r] + d, launch, None))
            g = max(end1, arrive1[r] + d)
            d = int(1.5 * MS * f) + rnd.randrange(0, 20 * US)
            launch += 30 * US
            ops[r].append(("kernel", "vectorized_elementwise_kernel", 7, g, g + d, launch, None))
            g += d
            for _ in range(kernels):  # many small kernels, as a real step has (heavier traces)
                launch += 2 * US
                ops[r].append(("kernel", "elementwise_kernel_small", 7, g, g + 10 * US, launch, None))
                g += 10 * US
            if late and r == late["rank"] and it == late["iteration"]:
                d = int(late["extra_ms"] * MS)
                launch += 30 * US
                ops[r].append(("kernel", "reduce_kernel", 7, g, g + d, launch, None))
                g += d
            arrive2[r] = (g, launch + 30 * US)
        end2 = max(a for a, _ in arrive2.values()) + 1500 * US
        for r in range(ranks):
            colls[r].append((seq + 1, arrive2[r][0], end2 + rnd.randrange(0, 5 * US), arrive2[r][1]))
            ranges[r].append((cpu_start, None))
        seq += 2
        t = end2 + 200 * US
    for r in range(ranks):  # each range ends where the next begins; the last one 1 ms after its launches
        rs = ranges[r]
        for i in range(len(rs)):
            rs[i] = (rs[i][0], rs[i + 1][0] if i + 1 < len(rs) else rs[i][0] + 5 * MS)
    return truth, ops, ranges, colls


def _offset_ns(truth, rank, gpus_per_host):
    return int(truth["clock_offset_ms"][rank // gpus_per_host] * MS)


def write_gtr(outdir, ranks=64, gpus_per_host=8, iterations=6, plants=True, random_state=1, late_ms=8.0, kernels=0):
    truth, ops, ranges, colls = simulate(ranks, gpus_per_host, iterations, plants, random_state, late_ms, kernels)
    os.makedirs(outdir, exist_ok=True)
    hosts = truth["hosts"]
    for h in range(hosts):
        hdir = os.path.join(outdir, "host%d" % h)
        os.makedirs(hdir, exist_ok=True)
        off = int(truth["clock_offset_ms"][h] * MS)
        run = {
            "gputap_version": "0.1.0", "run_json_version": 1, "command": "torchrun train.py",
            "host": "node%02d" % h, "start_ns": T0 + off, "end_ns": T0 + off + 10**10, "finished": True,
            "exit_status": 0,
        }
        with open(os.path.join(hdir, "run.json"), "w") as f:
            json.dump(run, f, indent=2)
    for r in range(ranks):
        h = r // gpus_per_host
        off = _offset_ns(truth, r, gpus_per_host)
        pdir = os.path.join(outdir, "host%d" % h, "rank%d" % r)
        os.makedirs(pdir, exist_ok=True)
        path = os.path.join(pdir, "trace.gtr")
        if r == truth["corrupt_rank"]:
            with open(path, "wb") as f:
                f.write(b"this is not a gputap trace\n" * 8)
            continue
        w = TraceWriter(path, "rank%d" % r, "node%02d" % h, pid=1000 + r, start_ns=T0 + off)
        dev = r % gpus_per_host
        corr = 1
        events = []  # (launch, kind, payload) in launch order
        for op in ops[r]:
            events.append((op[5], "op", op))
        for c in colls[r]:
            events.append((c[3], "coll", c))
        events.sort(key=lambda e: e[0])
        plugin = h != truth["old_nccl_host"]
        for launch, kind, p in events:
            if kind == "op":
                name = "cudaMemcpyAsync" if p[0] == "memcpy" else "cudaLaunchKernel"
                w.api(name, launch + off, launch + off + 5 * US, corr)
                if p[0] == "memcpy":
                    w.memcpy(1, dev, p[2], p[3] + off, p[4] + off, p[6], corr)
                else:
                    w.kernel(p[1], dev, p[2], p[3] + off, p[4] + off, corr)
            else:
                seqno, gs, ge, _ = p
                w.api("cuLaunchKernelEx", launch + off, launch + off + 6 * US, corr)
                if plugin:  # NCCL's profiler plugin: the collective's record, as NCCL 2.28 makes it just after
                    # the launch call returns
                    w.nccl_coll(WORLD_COMM, seqno, launch + off + 7 * US, launch + off + 15 * US, "AllReduce", "RING",
                                "SIMPLE", 1 << 22, r, ranks)
                w.kernel("ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)", dev, 21,
                         gs + off, ge + off, corr)
            corr += 1
        for i, (a, b) in enumerate(ranges[r]):
            w.range("ProfilerStep#%d" % i, a + off, b + off)
        w.close()
    with open(os.path.join(outdir, "truth.json"), "w") as f:
        json.dump(truth, f, indent=2)
    return truth


def write_kineto(outdir, ranks=64, gpus_per_host=8, iterations=6, plants=True, random_state=1, write_truth=True, late_ms=8.0):
    """One PyTorch-profiler trace per rank (rank<R>.json.gz), readable by gputap and by HTA."""
    truth, ops, ranges, colls = simulate(ranks, gpus_per_host, iterations, plants, random_state, late_ms)
    os.makedirs(outdir, exist_ok=True)

    def us(ns):
        return "%d.%03d" % (ns // 1000, ns % 1000)

    for r in range(ranks):
        off = _offset_ns(truth, r, gpus_per_host)
        dev = r % gpus_per_host
        ev = []
        corr = 1
        items = [(op[5], "op", op) for op in ops[r]] + [(c[3], "coll", c) for c in colls[r]]
        items.sort(key=lambda e: e[0])
        for launch, kind, p in items:
            if kind == "op":
                cat = "gpu_memcpy" if p[0] == "memcpy" else "kernel"
                name = "Memcpy HtoD (Pageable -> Device)" if p[0] == "memcpy" else p[1]
                api = "cudaMemcpyAsync" if p[0] == "memcpy" else "cudaLaunchKernel"
                stream, gs, ge = p[2], p[3], p[4]
            else:
                cat, name, api, stream, gs, ge = ("kernel", "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
                                                  "cudaLaunchKernelExC", 21, p[1], p[2])
            ev.append('{"ph":"X","cat":"cuda_runtime","name":"%s","pid":%d,"tid":%d,"ts":%s,"dur":5.000,'
                      '"args":{"External id":%d,"correlation":%d}}' % (api, 4000 + r, 4000 + r, us(launch + off), corr,
                                                                     corr))
            ev.append('{"ph":"X","cat":"%s","name":"%s","pid":%d,"tid":%d,"ts":%s,"dur":%s,'
                      '"args":{"External id":%d,"device":%d,"stream":%d,"correlation":%d}}'
                      % (cat, name, dev, stream, us(gs + off), us(ge - gs), corr, dev, stream, corr))
            corr += 1
        for i, (a, b) in enumerate(ranges[r]):
            ev.append('{"ph":"X","cat":"user_annotation","name":"ProfilerStep#%d","pid":%d,"tid":%d,"ts":%s,'
                      '"dur":%s,"args":{"External id":%d}}' % (i, 4000 + r, 4000 + r, us(a + off), us(b - a), 900000 + i))
        head = json.dumps({"schemaVersion": 1, "distributedInfo": {"backend": "nccl", "rank": r, "world_size": ranks}})
        text = head[:-1] + ', "traceEvents": [\n%s\n]}' % ",\n".join(ev)
        with gzip.open(os.path.join(outdir, "rank%d.json.gz" % r), "wt", compresslevel=1) as f:
            f.write(text)
    truth = dict(truth, corrupt_rank=None)
    if write_truth:
        with open(os.path.join(outdir, "truth.json"), "w") as f:
            json.dump(truth, f, indent=2)
    return truth


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m gputap.fleet.generate",
                                 description="Generate a multi-machine job's recording with planted problems.")
    ap.add_argument("outdir")
    ap.add_argument("--ranks", type=int, default=64)
    ap.add_argument("--gpus-per-host", type=int, default=8)
    ap.add_argument("--iterations", type=int, default=6)
    ap.add_argument("--format", choices=("gtr", "kineto"), default="gtr")
    ap.add_argument("--no-plants", action="store_true", help="no slow rank, late collective or corrupt folder")
    ap.add_argument("--late-ms", type=float, default=8.0, help="how late the one-off late arrival is (8)")
    ap.add_argument("--kernels", type=int, default=0, help="extra small kernels per iteration (gtr only)")
    ap.add_argument("--random-state", type=int, default=1)
    a = ap.parse_args(argv)
    if a.ranks < 1 or a.gpus_per_host < 1 or a.iterations < 1:
        ap.error("--ranks, --gpus-per-host and --iterations must be at least 1")
    fn = write_gtr if a.format == "gtr" else write_kineto
    kw = {"kernels": a.kernels} if a.kernels else {}
    truth = fn(a.outdir, a.ranks, a.gpus_per_host, a.iterations, not a.no_plants, a.random_state, late_ms=a.late_ms, **kw)
    print(json.dumps(truth))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
