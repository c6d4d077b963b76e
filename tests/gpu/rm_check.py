#!/usr/bin/env python3
"""Range metrics against Nsight Compute and against what the program says it did.

  rm_check.py kernel RUNDIR MANIFEST NCU_CSV [--time-tol F] [--time-abs NS]
  rm_check.py range  RUNDIR MANIFEST NCU_CSV [--exact]   (--exact: equal to ncu's sums, no constant)
  rm_check.py attribution RUNDIR MANIFEST
  rm_check.py same A.out B.out          (checksums equal: results unchanged)

RUNDIR holds one <proc>/ folder with range_metrics.csv (and kernel_metrics.csv
per kernel).  MANIFEST is rm_prog's: "<index> <kernel> <path with #occurrence>".
NCU_CSV is `ncu --csv --print-units base --metrics ...` of the same program and
arguments (kernels in launch order).  Prints "ok NAME" / "not ok NAME: why".
"""
import csv
import glob
import os
import re
import statistics
import sys

INST = "smsp__inst_executed.sum"
TIME = "gpu__time_duration.sum"
failures = 0


def say(ok, name, why=""):
    global failures
    if ok:
        print("ok rmetrics/%s" % name)
    else:
        failures += 1
        print("not ok rmetrics/%s: %s" % (name, why))


def proc_dir(run):
    c = glob.glob(os.path.join(run, "*", "range_metrics.csv"))
    if len(c) != 1:
        sys.exit("not ok rmetrics/files: expected one <proc>/range_metrics.csv under %s, found %d" % (run, len(c)))
    return os.path.dirname(c[0])


def base(name):
    name = name.strip()
    if name.startswith("void "):
        name = name[5:]
    return re.split(r"[(<]", name, 1)[0].split("::")[-1]


def num(s):
    s = (s or "").replace(",", "").strip()
    return float(s) if s not in ("", "n/a") else None


def read_manifest(path):
    rows = []
    for line in open(path):
        i, k, p = line.split(None, 2)
        rows.append((int(i), k, p.strip()))
    return rows


def plain(p):
    return "/".join(c.split("#")[0] for c in p.split("/"))


def read_ncu(path):
    """{kernel index (0..) : (name, {metric: value})} from ncu's long CSV."""
    out = {}
    text = open(path, errors="replace").read().splitlines()
    start = next((i for i, l in enumerate(text) if l.startswith('"ID"')), None)
    if start is None:
        return out
    for r in csv.DictReader(text[start:]):
        i = int(r["ID"])
        out.setdefault(i, (r["Kernel Name"], {}))[1][r["Metric Name"]] = num(r["Metric Value"])
    return out


def read_ours(pd):
    ks = list(csv.DictReader(open(os.path.join(pd, "kernel_metrics.csv"))))
    rs = list(csv.DictReader(open(os.path.join(pd, "range_metrics.csv"))))
    return ks, rs


def col(row, metric):
    for k, v in row.items():
        if k.split(" (")[0] == metric:
            return num(v)
    return None


def occ_paths(p):
    """'iter#2/phase_a#1' -> [('iter','2'), ('iter/phase_a','1')]: every range the launch counts in."""
    out, names = [], []
    for c in p.split("/"):
        n, _, o = c.partition("#")
        names.append(n)
        out.append(("/".join(names), o))
    return out


def kernel_mode(run, manifest, ncu_csv, time_tol, time_abs=0.0):
    pd = proc_dir(run)
    ks, rs = read_ours(pd)
    man = read_manifest(manifest)
    ncu = read_ncu(ncu_csv)
    say(len(ks) == len(man), "kernel/launch-count", "%d rows, manifest %d" % (len(ks), len(man)))
    say(len(ncu) == len(man), "kernel/ncu-count", "ncu %d kernels, manifest %d" % (len(ncu), len(man)))
    n = min(len(ks), len(man), len(ncu))
    bad_name = [i for i in range(n) if base(ks[i]["kernel"]) != man[i][1] or base(ncu[i][0]) != man[i][1]]
    say(not bad_name, "kernel/names-in-order", "first mismatch at %r" % ((bad_name[:1] and
        (ks[bad_name[0]]["kernel"], ncu[bad_name[0]][0], man[bad_name[0]][1])),))
    bad_range = [i for i in range(n) if ks[i]["range"] != plain(man[i][2])]
    say(not bad_range, "kernel/innermost-range", "first %r" % ((bad_range[:1] and (ks[bad_range[0]]["range"],
        man[bad_range[0]][2])),))
    # instructions: exact
    diff = [(i, col(ks[i], INST), ncu[i][1].get(INST)) for i in range(n) if col(ks[i], INST) != ncu[i][1].get(INST)]
    say(not diff and n > 0, "kernel/inst-executed-equals-ncu", "%d of %d differ, e.g. %s" % (len(diff), n, diff[:3]))
    # duration: ratios, and the spread of identical launches as the noise
    ratios = [col(ks[i], TIME) / ncu[i][1][TIME] for i in range(n)
              if col(ks[i], TIME) and ncu[i][1].get(TIME)]
    # the noise: how much identical launches (same kernel, same instruction count) differ, in each tool
    groups = {}
    for i in range(n):
        key = (man[i][1], ncu[i][1].get(INST))
        g = groups.setdefault(key, ([], []))
        g[0].append(ncu[i][1].get(TIME) or 0)
        g[1].append(col(ks[i], TIME) or 0)
    spread = {k: (max(v[0]) - min(v[0])) + (max(v[1]) - min(v[1])) for k, v in groups.items()}
    out = []
    for i in range(n):
        o, c = col(ks[i], TIME), ncu[i][1].get(TIME)
        if o is None or not c:
            out.append((i, o, c))
            continue
        allow = max(time_tol * c, spread[(man[i][1], ncu[i][1].get(INST))], time_abs)
        if abs(o - c) > allow:
            out.append((i, o, c))
    med = statistics.median(ratios) if ratios else 0
    rel = [v / statistics.median(g[0]) for k, g in groups.items() if len(g[0]) > 2 for v in [spread[k]]]
    print("# gpu__time_duration.sum ours/ncu: median %.3f, min %.3f, max %.3f over %d kernels; identical launches "
          "differ by up to %.1f%% (both tools)" % (med, min(ratios or [0]), max(ratios or [0]), len(ratios),
                                                   100 * max(rel or [0])))
    say(abs(med - 1) <= time_tol and not out, "kernel/time-within-noise",
        "median ratio %.3f; outside the noise: %s" % (med, out[:4]))
    # per range: SUM/MAX/MEAN/MIN of our rows equal the arithmetic over ncu's per-kernel values
    want = {}
    for i in range(n):
        for path, occ in occ_paths(man[i][2]) if man[i][2] != "(none)" else [("(none)", "")]:
            for key in ((path, occ), (path, "all")):
                if path == "(none)" and key[1] == "":
                    continue
                want.setdefault(key, []).append(i)
    bad = []
    checked = 0
    for r in rs:
        if r["metric"] not in (INST, TIME):
            continue
        key = (r["path"], r["occurrence"] if r["path"] != "(none)" else "all")
        idx = want.get(key)
        if idx is None:
            bad.append(("no launches in manifest", key))
            continue
        checked += 1
        if r["metric"] == INST:
            v = [ncu[i][1][INST] for i in idx]
            exp = (sum(v), max(v), sum(v) / len(v), min(v))
            got = tuple(num(r[c]) for c in ("sum", "max", "mean", "min"))
            if any(g is None or abs(g - e) > 1e-9 * max(1, abs(e)) for g, e in zip(got, exp)):
                bad.append((key, INST, got, exp))
            if int(r["kernels"]) != len(idx):
                bad.append((key, "kernels", r["kernels"], len(idx)))
        else:  # our reductions over our own per-kernel values: exact; against ncu: within the noise
            v = [col(ks[i], TIME) for i in idx]
            exp = (sum(v), max(v), sum(v) / len(v), min(v))
            got = tuple(num(r[c]) for c in ("sum", "max", "mean", "min"))
            if any(g is None or abs(g - e) > 1e-6 * max(1, abs(e)) for g, e in zip(got, exp)):
                bad.append((key, TIME, got, exp))
    say(not bad and checked > 0, "kernel/range-sum-max-mean-min", "%d of %d rows wrong, e.g. %s" % (len(bad), checked,
                                                                                              bad[:3]))


def range_mode(run, manifest, ncu_csv, want_exact=False):
    pd = proc_dir(run)
    rs = list(csv.DictReader(open(os.path.join(pd, "range_metrics.csv"))))
    man = read_manifest(manifest)
    ncu = read_ncu(ncu_csv)
    n = min(len(man), len(ncu))
    want = {}
    for i in range(n):
        if man[i][2] == "(none)":
            continue
        for path, occ in occ_paths(man[i][2]):
            want.setdefault((path, occ), []).append(ncu[i][1][INST])
    say(all(r["mode"] == "per-range" for r in rs), "range/mode-named", rs[0]["mode"] if rs else "no rows")
    # Per range, CUPTI's user range counts what kernel replay does not: on an H100 every launch of
    # rm_prog's kernels (32,768 warps) added exactly 262,184 instructions, as ncu's range replay does.
    # So: the per-launch difference to the sum of ncu's kernel-replay values must be one constant.
    diffs, checked = [], 0
    for r in rs:
        if r["metric"] != INST or r["occurrence"] == "all" or r["path"] == "(none)":
            continue
        v = want.get((r["path"], r["occurrence"]), [])
        got = num(r["sum"])
        checked += 1
        if v and got is not None:
            diffs.append((got - sum(v)) / len(v))
    exact = checked > 0 and len(diffs) == checked and all(d == 0 for d in diffs)
    print("# per-range smsp__inst_executed.sum minus the sum of ncu's kernel-replay values, per launch: %s"
          % sorted(set(diffs)))
    say(checked > 0 and len(diffs) == checked and len(set(diffs)) == 1,
        "range/inst-per-occurrence-is-ncu-kernel-sum-plus-one-constant-per-launch",
        "%d occurrences, differences per launch %s" % (checked, sorted(set(diffs))[:5]))
    print("# exactly equal to the kernel-replay sum: %s" % ("yes" if exact else "no"))
    if want_exact:
        say(exact, "range/inst-per-occurrence-equals-ncu-kernel-sum",
            "%d occurrences, differences per launch %s" % (checked, sorted(set(diffs))[:5]))
        marks = sorted(set(r.get("exact", "yes") for r in rs))
        say(marks == ["yes"], "range/rows-say-exact", str(marks))
    spans = [num(r["sum"]) for r in rs if r["metric"] == TIME and r["occurrence"] not in ("all",) and r["path"] == "iter"]
    print("# per-range gpu__time_duration.sum of 'iter' occurrences (span, ns): %s" % spans[:10])


def attribution(run, manifest):
    pd = proc_dir(run)
    rs = list(csv.DictReader(open(os.path.join(pd, "range_metrics.csv"))))
    man = read_manifest(manifest)
    count = {}
    for _, _, p in man:
        for path, occ in occ_paths(p) if p != "(none)" else [("(none)", "1")]:
            count[path] = count.get(path, 0) + 1
    got = {r["path"]: int(r["kernels"]) for r in rs if r["occurrence"] == "all"}
    # a graph launch is one launch in per-range mode, its kernel nodes in per-kernel mode: not compared here
    bad = [(p, got.get(p), c) for p, c in count.items() if got.get(p) != c and p != "(none)" and "graph" not in p]
    say(not bad, "attribution/kernels-per-path", str(bad[:5]))
    return got


def same(a, b):
    x, y = open(a).read().strip(), open(b).read().strip()
    say(x == y and ("checksum" in x or "loss" in x), "results-unchanged", "%r vs %r" % (x, y))


def take(a, name, default):
    """The float after option `name` in a (both removed), else default."""
    if name not in a:
        return default
    i = a.index(name)
    v = float(a[i + 1])
    del a[i:i + 2]
    return v


def main():
    a = sys.argv[1:]
    tol = take(a, "--time-tol", 0.15)
    tabs = take(a, "--time-abs", 0.0)  # ns a duration may differ from ncu's whatever its size (CUPTI kernel replay)
    if a[0] == "kernel":
        kernel_mode(a[1], a[2], a[3], tol, tabs)
    elif a[0] == "range":
        range_mode(a[1], a[2], a[3], "--exact" in a[4:])
    elif a[0] == "attribution":
        got = attribution(a[1], a[2])
        if len(a) > 3:  # extra paths that must exist with this many kernels: path=N
            for spec in a[3:]:
                p, _, c = spec.partition("=")
                say(got.get(p) == int(c), "attribution/%s" % p, "%s kernels, wanted %s" % (got.get(p), c))
    elif a[0] == "same":
        same(a[1], a[2])
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
