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
# the loop's own samples per step (the marker runs only outside the window): a window of 10 steps
# should have 10/40 of the 40-step window's, within 5 %
per_step_all = (s["all"] - marker(K["all"])) / 40.0
for r in ("win", "winenv", "inproc"):
    ratio = (s[r] / 10.0) / per_step_all if per_step_all else 0
    check("%s-per-step-as-all" % r, 0.95 <= ratio <= 1.05,
          "%.1f samples a step vs %.1f, ratio %.4f; of all's samples %.3f" % (s[r] / 10.0, per_step_all, ratio,
                                                                             s[r] / max(s["all"], 1)))
    check("%s-no-marker" % r, s[r] > 0 and marker(K[r]) == 0, "marker samples %d" % marker(K[r]))
    # kernels with a few samples come and go between runs (one sample every 2^17 cycles per SM):
    # those with at least 10 samples must be the whole run's
    extra = sorted(n for n in set(K[r]) - set(K["whole"]) if K[r][n] >= 10)
    rare = sum(1 for n in set(K[r]) - set(K["whole"]) if K[r][n] < 10)
    check("%s-kernels-subset-of-whole" % r, not extra,
          "%d with >= 10 samples not in whole: %s; %d with fewer" % (len(extra), extra[:3], rare))
    a = {n: v for n, v in K["all"].items() if n in K[r] or v >= 10}
    A, W = float(sum(v for n, v in a.items() if "sort" not in n.lower() and "radix" not in n.lower())), float(s[r])
    dev = max(abs(K[r].get(n, 0) / W - v / A) for n, v in a.items() if "sort" not in n.lower() and "radix" not in n.lower())
    check("%s-kernel-shares-as-all" % r, dev <= 0.01, "largest difference of a kernel's share %.4f" % dev)
check("whole-and-all-have-marker", marker(K["whole"]) > 0 and marker(K["all"]) > 0,
      "%d, %d" % (marker(K["whole"]), marker(K["all"])))
check("all-vs-whole", s["all"] > 0 and 0.6 <= s["all"] / max(s["whole"], 1) <= 1.1, "%d vs %d" % (s["all"], s["whole"]))
check("inproc-context-found", T["inproc"].get("contexts_found_at_window") == "1", str(T["inproc"].get("contexts_found_at_window")))
bare = result("bare")
for r in runs:
    check("%s-results-unchanged" % r, bare is not None and result(r) == bare, "%s vs bare %s" % (result(r), bare))
print("pcsamp_window: %d failed" % fails)
