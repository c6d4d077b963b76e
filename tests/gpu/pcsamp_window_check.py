"""Checks of tests/gpu/pcsamp_window.sh's runs: prints one line per run and 'ok'/'not ok' lines."""
import csv
import glob
import os
import re
import sys

B = sys.argv[1]


def totals(run):
    f = glob.glob(os.path.join(B, run, "pid*", "pc_sampling_totals.csv"))
    if not f:
        return {}
    return {r[0]: r[1] for r in csv.reader(open(f[0])) if len(r) == 2}


def kernels(run):
    """samples per function (mangled name) from pc_samples.csv"""
    out = {}
    for f in glob.glob(os.path.join(B, run, "pid*", "pc_samples.csv")):
        for r in csv.DictReader(open(f)):
            out[r["kernel"]] = out.get(r["kernel"], 0) + int(r["samples"])
    return out


def result(run):
    p = os.path.join(B, run + ".out")
    m = re.search(r"loss (\S+) params (\S+)", open(p).read()) if os.path.exists(p) else None
    return m.groups() if m else None


def marker(k):
    return sum(v for n, v in k.items() if "sort" in n.lower() or "radix" in n.lower())


fails = 0


def check(name, cond, detail=""):
    global fails
    print(("ok " if cond else "not ok ") + name + (" (" + detail + ")" if detail else ""))
    fails += 0 if cond else 1


runs = ["whole", "all", "win", "winenv", "inproc"]
T = {r: totals(r) for r in runs}
K = {r: kernels(r) for r in runs}
for r in runs:
    t = T[r]
    print("%-7s samples %s windows %s before_windows %s window_mode %s contexts %s found_at_window %s "
          "pcs_without_module %s dropped %s kernels %d marker %d"
          % (r, t.get("samples"), t.get("windows"), t.get("samples_before_windows"), t.get("window_mode"),
             t.get("contexts"), t.get("contexts_found_at_window"), t.get("pcs_without_module"),
             t.get("dropped_samples"), len(K[r]), marker(K[r])))
s = {r: int(T[r].get("samples", 0) or 0) for r in runs}
for r in ("win", "winenv", "inproc"):
    ratio = s[r] / s["all"] if s["all"] else 0
    check("%s-share-of-all" % r, 0.15 <= ratio <= 0.35, "%d / %d = %.3f, expected ~0.25" % (s[r], s["all"], ratio))
    check("%s-no-marker" % r, s[r] > 0 and marker(K[r]) == 0, "marker samples %d" % marker(K[r]))
    extra = sorted(set(K[r]) - set(K["whole"]))
    check("%s-kernels-subset-of-whole" % r, not extra, "%d not in whole: %s" % (len(extra), extra[:3]))
check("whole-and-all-have-marker", marker(K["whole"]) > 0 and marker(K["all"]) > 0,
      "%d, %d" % (marker(K["whole"]), marker(K["all"])))
check("all-vs-whole", s["all"] > 0 and 0.6 <= s["all"] / max(s["whole"], 1) <= 1.1, "%d vs %d" % (s["all"], s["whole"]))
check("inproc-context-found", T["inproc"].get("contexts_found_at_window") == "1", str(T["inproc"].get("contexts_found_at_window")))
bare = result("bare")
for r in runs:
    check("%s-results-unchanged" % r, bare is not None and result(r) == bare, "%s vs bare %s" % (result(r), bare))
print("pcsamp_window: %d failed" % fails)
