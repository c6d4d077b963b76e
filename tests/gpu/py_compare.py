"""Compares py_ranges.py outputs: gputap's per-range kernel counts against
torch.profiler's, and gputap's memory activity against PyTorch's caching
allocator.  Prints "ok NAME" / "not ok NAME" lines with both sides.

usage: py_compare.py TORCH.json GPUTAP.json LABEL [--expandable]
"""
import json
import sys

torch_doc = json.load(open(sys.argv[1]))
gt = json.load(open(sys.argv[2]))
label = sys.argv[3]
expandable = "--expandable" in sys.argv
results = gt["results"]
ranges = {r["path"]: r for r in results["ranges"]}
bad = 0


def check(name, ok, detail):
    global bad
    print("%s python-gpu/%s/%s  %s" % ("ok" if ok else "not ok", label, name, detail))
    bad += not ok


check("gpu-activity", results.get("gpu_activity") is True,
      "mode=%s memory_source=%s note=%s" % (results.get("mode"), results.get("memory_source"),
                                          results.get("gpu_activity_note")))
check("no-losses", results["lost"] == {"ranges": 0, "kernels": 0}, "lost=%s" % results["lost"])
tk = torch_doc["kernels"]
for path in sorted(tk):
    g = ranges.get(path, {}).get("kernels")
    check("kernels:" + path, g == tk[path], "gputap=%s torch.profiler=%s" % (g, tk[path]))
missing = sorted(set(ranges) - set(tk))
check("same-ranges", not missing, "ranges only in gputap: %s" % missing)
for path, w in sorted(gt["witness"].items()):
    r = ranges.get(path)
    if r is None:
        check("memory:" + path, False, "range missing in gputap")
        continue
    net = r["alloc_bytes"] - r["free_bytes"]
    check("reserved-delta:" + path, net == w["reserved_delta"],
          "gputap alloc-free=%d memory_reserved() delta=%d" % (net, w["reserved_delta"]))
    check("alloc-bytes:" + path, r["alloc_bytes"] == w["reserved_bytes.all.allocated"],
          "gputap=%d allocator reserved_bytes.all.allocated delta=%d" % (r["alloc_bytes"],
                                                                        w["reserved_bytes.all.allocated"]))
    check("free-bytes:" + path, r["free_bytes"] == w["reserved_bytes.all.freed"],
          "gputap=%d allocator reserved_bytes.all.freed delta=%d" % (r["free_bytes"], w["reserved_bytes.all.freed"]))
    if not expandable:
        check("segments:" + path,
              (r["alloc_count"], r["free_count"]) == (w["segment.all.allocated"], w["segment.all.freed"]),
              "gputap allocs/frees=%d/%d allocator segments allocated/freed=%d/%d"
              % (r["alloc_count"], r["free_count"], w["segment.all.allocated"], w["segment.all.freed"]))
    else:
        print("info python-gpu/%s/segments:%s gputap allocs/frees=%d/%d allocator segments allocated/freed=%d/%d"
              % (label, path, r["alloc_count"], r["free_count"], w["segment.all.allocated"], w["segment.all.freed"]))
mo = ranges.get("memory_ops", {})
# empty_cache() gives the 100 MB block (and more) back; with expandable segments the block may be
# served from memory mapped before, so only the free side is certain
check("memory_ops-activity", mo.get("free_bytes", 0) >= 100_000_000 and mo.get("peak_bytes", 0) >= 100_000_000
      and (expandable or mo.get("alloc_bytes", 0) >= 100_000_000),
      "alloc=%s free=%s peak=%s" % (mo.get("alloc_bytes"), mo.get("free_bytes"), mo.get("peak_bytes")))
check("same-value", abs(gt["value"] - torch_doc["value"]) <= 1e-3 * max(1.0, abs(torch_doc["value"])),
      "gputap run value=%r torch run value=%r" % (gt["value"], torch_doc["value"]))
sys.exit(1 if bad else 0)
