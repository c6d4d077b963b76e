"""Check runs of tests/gpu/vram_follow.py (see there): for each allocation and the final free, the
first row of gpu_samples.csv (device 0) after the event started whose memory moved by at least
900 MiB from the value before it, and how long after the event's start that row was taken.

    check_vram_follow.py MAX_MS DIR [DIR...]     prints one line per run and event, then N passed, N failed

MAX_MS: the latency each event must stay under in every DIR; also checked: madengine's vram CSV has
a value on every row (from its first read), the checksum equals the first run's, and run.json counts the
reads (and, with GPUTAP_SAMPLE_VERIFY=1, the cells the rules would have held differently).
"""
import csv
import json
import sys

max_ms = float(sys.argv[1])
passed = failed = 0
first_sum = None


def check(ok, what):
    global passed, failed
    print("%s %s" % ("ok" if ok else "not ok", what))
    if ok:
        passed += 1
    else:
        failed += 1


for d in sys.argv[2:]:
    out = [json.loads(line) for line in open(d + "/job.out") if line.startswith("{")][-1]
    if first_sum is None:
        first_sum = out["checksum"]
    check(out["checksum"] == first_sum, "%s: checksum %r (first run %r)" % (d, out["checksum"], first_sum))
    rows = [(int(r["time_ns"]), float(r["mem_used_MiB"])) for r in csv.DictReader(open(d + "/gpu_samples.csv"))
            if r["device"] == "0" and r["mem_used_MiB"]]
    for ev in out["events"]:
        before = [m for t, m in rows if t < ev["t0"]]
        if not before:
            check(False, "%s %s: no memory read before it" % (d, ev["name"]))
            continue
        b = before[-1]
        after = [(t, m) for t, m in rows if t >= ev["t0"] and abs(m - b) >= 900]
        lat = (after[0][0] - ev["t0"]) / 1e6 if after else float("inf")
        check(lat <= max_ms, "%s %s: memory %.0f -> %s MiB seen %.1f ms after the event began (the event took "
              "%.1f ms; limit %.0f ms)" % (d, ev["name"], b, "%.0f" % after[0][1] if after else "?", lat,
                                          (ev["t1"] - ev["t0"]) / 1e6, max_ms))
    vr = list(csv.reader(open(d + "/gpu_info_vram_profiler_output.csv")))[1:]
    # empty only before the first read (a first tick cut for the energy reader has nothing to hold)
    first = next((k for k, r in enumerate(vr) if all(c != "" for c in r)), len(vr))
    check(first <= 2 and all(c != "" for r in vr[first:] for c in r),
          "%s: madengine's vram CSV has a value on each of %d rows from row %d" % (d, len(vr), first))
    t = [x for x in json.load(open(d + "/run.json"))["tools"] if x.get("memory_reads") is not None][0]
    print("  %s: %d ticks, memory_reads %d, after allocations %d, cells held %d, %s, sampler %.3f %% of a core" % (
        d, t["samples"], t["memory_reads"], t["memory_reads_after_alloc"], t["memory_cells_held"],
        t["memory_reads_when"], t["thread_cpu_pct"]))
    if "verify" in t:
        print("  %s: verify %s" % (d, json.dumps(t["verify"])))
print("%d passed, %d failed" % (passed, failed))
sys.exit(1 if failed else 0)
