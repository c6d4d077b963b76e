#!/usr/bin/env python3
"""Print gputap's and HTA's numbers side by side.  usage: compare.py GPUTAP.json HTA.json GT_SECONDS GT_RSS_KB EVENTS"""
import json, sys

g = json.load(open(sys.argv[1]))["results"][0]["timeline"]["gpus"]
h = json.load(open(sys.argv[2]))
gs, grss, events = float(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
worst = 0.0
print("%-8s %-16s %16s %16s %10s" % ("rank", "quantity", "gputap", "HTA", "diff(%)"))
for gpu in g:
    r = h["ranks"].get(str(gpu["source"]))
    if r is None:
        continue
    t = gpu["total"]
    for name, gv, hv in (("span_ms", t["span_ms"], r["span_ms"]), ("idle_ms", t["idle_ms"], r["idle_ms"]),
                         ("compute_ms", t["compute_ms"], r["compute_ms"]),
                         ("non_compute_ms", t["non_compute_ms"], r["non_compute_ms"]),
                         ("overlap_pct", round(t["overlap_pct"], 2), r["overlap_pct"])):
        d = abs(gv - hv) / abs(hv) * 100 if hv else abs(gv - hv) * 100
        worst = max(worst, d)
        print("%-8s %-16s %16.3f %16.3f %10.4f" % (gpu["label"], name, gv, hv, d))
kt = h.get("kernel_types_ms", {})
if kt:
    t = json.load(open(sys.argv[1]))["results"][0]["timeline"]["total"]
    pairs = (("COMPUTATION", t["compute_ms"] - t["overlap_ms"]), ("COMMUNICATION", t["exposed_comm_ms"]),
             ("COMPUTATION overlapping COMMUNICATION", t["overlap_ms"]))
    print("kernel-type breakdown (HTA get_gpu_kernel_breakdown, all ranks):")
    # HTA also splits out memory kernels ("COMMUNICATION overlapping MEMORY", ...): fold them back
    folded = {}
    for k, v in kt.items():
        types = frozenset(x for x in k.split(" overlapping ") if x != "MEMORY")
        folded[types] = folded.get(types, 0.0) + v
    for name, gv in pairs:
        hv = folded.get(frozenset(name.split(" overlapping ")), 0.0)
        d = abs(gv - hv) / abs(hv) * 100 if hv else abs(gv - hv) * 100
        worst = max(worst, d)
        print("%-8s %-38s %12.3f %12.3f %10.4f" % ("all", name + " ms", gv, hv, d))
print("largest difference: %.4f %%  (target < 0.1 %%)" % worst)
print("gputap: %.2f s, %.0f events/s, peak RSS %.1f MB" % (gs, events / gs, grss / 1024))
print("HTA:    %.2f s (parse %.2f s, import %.2f s not counted), peak RSS %.1f MB" % (
    h["seconds_total"], h["seconds_parse"], h["seconds_import"], h["peak_rss_kb"] / 1024))
print("speed-up: %.1fx   memory: %.1fx less" % (h["seconds_total"] / gs, h["peak_rss_kb"] / max(grss, 1)))
