"""Check `gputap analyze --collectives` on the run of tests/gpu/nccl_threads.py: every collective row
matched by NCCL's profiler plugin sits on a kernel of its own kind (an AllReduce record on an
ncclDevKernel_AllReduce_* kernel, a Broadcast record on a Broadcast kernel: the two threads' kinds
differ, so a record given the other thread's kernel shows), each communicator's sequence numbers
0..n-1 once each, and no kernel carries two records.

    check_nccl_threads.py RUN_DIR GPUTAP
"""
import glob
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
import gputap  # noqa: E402


def main():
    run, exe = sys.argv[1], sys.argv[2]
    res = []
    for tr in sorted(glob.glob(os.path.join(run, "*", "trace.gtr"))):
        t = gputap.read_trace(tr)
        if not len(t.nccl):
            continue
        kern = {(int(k.device), int(k.start_ns)): k.name for k in t.kernels.itertuples()}
        out = subprocess.run([exe, "analyze", "--format", "json", "--collectives", tr], capture_output=True, check=True)
        rows = json.loads(out.stdout)["results"][0]["collectives"]
        plug = [r for r in rows if r["match"] == "nccl"]
        wrong = [r for r in plug if r["name"] not in kern.get((r["device"], r["start_ns"]), "")]
        seqs = {}
        for r in plug:
            seqs.setdefault((r["comm"], r["name"]), []).append(r["seq"])
        starts = [(r["device"], r["start_ns"]) for r in plug]
        name = os.path.basename(os.path.dirname(tr))
        res.append((name + "-matched", len(plug) >= 2 * 40 and len(plug) == len(t.nccl),
                    "%d rows by the plugin of %d records" % (len(plug), len(t.nccl))))
        res.append((name + "-own-kind", not wrong, "%d of %d records on a kernel of another kind: %s" % (
            len(wrong), len(plug), [(r["name"], kern.get((r["device"], r["start_ns"]), "?")[:30]) for r in wrong[:3]])))
        res.append((name + "-seq-once", all(sorted(v) == list(range(len(v))) for v in seqs.values()),
                    {k: sorted(v)[:5] for k, v in seqs.items()}))
        res.append((name + "-kernel-once", len(starts) == len(set(starts)), "%d rows on %d kernels" % (
            len(starts), len(set(starts)))))
    for n, ok, why in res:
        print(("ok %s" % n) if ok else ("not ok %s: %s" % (n, why)))
    print("%d passed, %d failed" % (sum(1 for r in res if r[1]), sum(1 for r in res if not r[1])))
    return 0 if res and all(r[1] for r in res) else 1


if __name__ == "__main__":
    raise SystemExit(main())
