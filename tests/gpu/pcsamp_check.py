"""gputap's PC sampling against Nsight Compute's on the same kernels (tests/gpu/pcsamp.sh check).

usage: pcsamp_check.py RUNDIR NCU_RAW.csv NCU_SASS.csv NVDISASM_G.txt TOL [LABEL]

RUNDIR       a `gputap run --pc-sampling` of pcsamp_prog (its <proc>/pc_sampling.json)
NCU_RAW      `ncu -i R --page raw --csv` of the same kernels (smsp__pcsamp_warps_issue_stalled_*)
NCU_SASS     `ncu -i R --page source --csv --print-source=sass` (samples per instruction)
NVDISASM_G   `nvdisasm -g` of the module: the source line of each instruction, independent of CUPTI
TOL          the largest difference of a stall group's share (0..1) that passes

Per kernel (k_mem, k_fma, k_sync): the dominant stall group of both tools must be the same, every
group's share within TOL, and the hottest source line the same (gputap: CUPTI's line of its
samples; ncu: its samples per instruction summed per line of nvdisasm -g).  Prints one
"ok"/"not ok" line per check and the largest share difference seen.
"""
import csv
import glob
import json
import re
import sys

PREFIX = "smsp__pcsamp_warps_issue_stalled_"
# Nsight Compute's names, as export/pcsamp.c groups CUPTI's reasons
NCU = {"long_scoreboard": "Long Scoreboard", "barrier": "Barrier", "math_pipe_throttle": "Math Pipe Throttle",
       "wait": "Wait", "short_scoreboard": "Short Scoreboard", "mio_throttle": "MIO Throttle",
       "lg_throttle": "LG Throttle", "not_selected": "Not Selected", "selected": "Selected",
       "no_instructions": "No Instruction", "dispatch_stall": "Dispatch Stall",
       "branch_resolving": "Branch Resolving", "drain": "Drain", "imc_miss": "IMC Miss", "membar": "Membar",
       "sleeping": "Sleeping", "tex_throttle": "Tex Throttle", "misc": "Misc", "gmma": "GMMA",
       "warpgroup_arrive": "Warpgroup Arrive"}
KERNELS = ["k_mem", "k_fma", "k_sync"]


def short(name):
    return re.sub(r"\(.*", "", name).replace("void ", "").strip()


def gputap(rundir):
    js = glob.glob(rundir + "/*/pc_sampling.json")
    d = json.load(open(js[0]))
    out = {}
    for k in d["kernels"]:
        n = short(k["name"])
        tot = k["samples"] or 1
        shares = {g: v / tot for g, v in k["groups"].items()}
        line = k["top_lines"][0] if k["top_lines"] else None
        out[n] = {"shares": shares, "samples": k["samples"],
                  "line": (line["file"].split("/")[-1], line["line"]) if line else None}
    return out


def ncu_raw(path):
    """kernel -> stall group shares, every profiled launch of it summed"""
    rows = list(csv.reader(open(path)))
    head = rows[0]
    sums = {}
    for r in rows[2:]:  # rows[1]: units
        if len(r) != len(head):
            continue
        rec = dict(zip(head, r))
        groups = sums.setdefault(short(rec.get("Kernel Name", "")), {})
        for col, v in rec.items():
            if not col.startswith(PREFIX) or col.endswith("_not_issued"):
                continue
            try:
                x = float(v.replace(",", ""))
            except ValueError:
                continue
            g = NCU.get(col[len(PREFIX):], "Other")
            groups[g] = groups.get(g, 0.0) + x
    out = {}
    for n, groups in sums.items():
        tot = sum(groups.values()) or 1.0
        out[n] = {"shares": {g: v / tot for g, v in groups.items()}, "samples": tot}
    return out


def disasm_lines(path):
    """(function, offset) -> (file base name, line) from nvdisasm -g."""
    m = {}
    fn, cur = None, None
    for line in open(path, errors="replace"):
        s = line.strip()
        t = re.match(r"\.section\s+\.text\.([^,\s]+)", s) or re.match(r"\.text\.([^:\s]+):", s)
        if t:
            fn = t.group(1)
            continue
        f = re.search(r'//## File "([^"]+)", line (\d+)', s)
        if f:
            cur = (f.group(1).split("/")[-1], int(f.group(2)))
            continue
        i = re.match(r"/\*([0-9a-fA-F]+)\*/", s)
        if i and fn and cur:
            m[(fn, int(i.group(1), 16))] = cur
    return m


def ncu_lines(path, lines):
    """kernel -> (hottest (file, line), its samples): ncu's samples per instruction of every profiled
    launch, summed per source line of nvdisasm -g (the instruction's offset: its address less the
    first address listed for the launch)"""
    per = {}
    fns = {short_mangled(f): f for (f, _) in lines}
    kernel, head, base = None, None, None
    for r in csv.reader(open(path, errors="replace")):
        if r and r[0] == "Kernel Name":
            kernel, head, base = short(r[1]), None, None
            continue
        if r and r[0] == "Address":
            head = r
            continue
        if not head or not kernel or len(r) < len(head):
            continue
        rec = dict(zip(head, r))
        try:
            addr = int(rec["Address"], 16)
            n = float(rec.get("Warp Stall Sampling (All Samples)", "0").replace(",", "") or 0)
        except ValueError:
            continue
        if base is None:
            base = addr
        key = lines.get((fns.get(kernel), addr - base))
        if key and n:
            d = per.setdefault(kernel, {})
            d[key] = d.get(key, 0) + n
    out = {}
    for k, d in per.items():
        best = max(d.items(), key=lambda kv: kv[1])
        out[k] = (best[0], best[1])
    return out


def short_mangled(m):
    """the plain name of a mangled one: _Z5k_memPK6float4PS_m -> k_mem"""
    g = re.match(r"_Z(\d+)", m)
    return m[len(g.group(0)):len(g.group(0)) + int(g.group(1))] if g else m


def main():
    rundir, raw, sass, dis, tol = sys.argv[1:6]
    label = sys.argv[6] if len(sys.argv) > 6 else ""
    tol = float(tol)
    g, n = gputap(rundir), ncu_raw(raw)
    nl = ncu_lines(sass, disasm_lines(dis))
    ok = fail = 0
    worst = 0.0
    for k in KERNELS:
        if k not in g or k not in n:
            print("not ok %s %s: missing (gputap %s, ncu %s)" % (label, k, k in g, k in n))
            fail += 1
            continue
        gs, ns = g[k]["shares"], n[k]["shares"]
        gd, nd = max(gs, key=gs.get), max(ns, key=ns.get)
        diff = max(abs(gs.get(x, 0) - ns.get(x, 0)) for x in set(gs) | set(ns))
        worst = max(worst, diff)
        top = sorted(set(gs) | set(ns), key=lambda x: -max(gs.get(x, 0), ns.get(x, 0)))[:4]
        shares = ", ".join("%s %.1f/%.1f%%" % (x, 100 * gs.get(x, 0), 100 * ns.get(x, 0)) for x in top)
        print("%s %s %s dominant: gputap %s, ncu %s (gputap/ncu: %s; %d/%d samples)" % (
            "ok" if gd == nd else "not ok", label, k, gd, nd, shares, g[k]["samples"], n[k]["samples"]))
        ok, fail = ok + (gd == nd), fail + (gd != nd)
        print("%s %s %s shares: largest difference %.1f points (tolerance %.1f)" % (
            "ok" if diff <= tol else "not ok", label, k, 100 * diff, 100 * tol))
        ok, fail = ok + (diff <= tol), fail + (diff > tol)
        gl = g[k]["line"]
        nline = nl.get(k)
        same = gl is not None and nline is not None and tuple(gl) == tuple(nline[0])
        print("%s %s %s hottest line: gputap %s, ncu %s" % (
            "ok" if same else "not ok", label, k, "%s:%d" % tuple(gl) if gl else None,
            "%s:%d (%d samples)" % (nline[0][0], nline[0][1], nline[1]) if nline else None))
        ok, fail = ok + same, fail + (not same)
    print("%s: %d passed, %d failed; largest share difference %.1f points" % (label or "check", ok, fail, 100 * worst))
    return 1 if fail else 0


if __name__ == "__main__":
    sys.exit(main())
