"""gputap's PC sampling against Nsight Compute's on the same kernels (tests/gpu/pcsamp.sh check).

usage: pcsamp_check.py RUNDIR NCU_RAW.csv NCU_SASS.csv NVDISASM_G.txt TOL [LABEL]

RUNDIR       a `gputap run --pc-sampling` of pcsamp_prog (its <proc>/pc_sampling.json)
NCU_RAW      `ncu -i R --page raw --csv` of the same kernels (smsp__pcsamp_warps_issue_stalled_*)
NCU_SASS     `ncu -i R --page source --csv --print-source=sass` (samples per instruction)
NVDISASM_G   `nvdisasm -g` of the module: the source line of each instruction, independent of CUPTI
TOL          the largest difference of a stall group's share (0..1) that passes

Per kernel (k_mem, k_fma, k_sync): the dominant stall group of both tools must be the same, every
group's share within TOL, and the hottest source line the same (gputap: CUPTI's line of its
samples; ncu: its samples per instruction summed per line of nvdisasm -g).  ncu's instructions are
placed at their offset from the first address it lists for the launch; the opcode there must be
nvdisasm's (else, and where the addresses do not parse, the instruction's place in the list is
its offset: 16 bytes an instruction).  Prints one "ok"/"not ok" line per check, an "info" line
with the hottest PC of each tool, and the largest share difference seen; exit 1 if a check failed.
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
       "no_instructions": "No Instruction", "no_instruction": "No Instruction",
       "dispatch_stall": "Dispatch Stall", "branch_resolving": "Branch Resolving", "drain": "Drain",
       "imc_miss": "IMC Miss", "membar": "Membar", "sleeping": "Sleeping", "tex_throttle": "Tex Throttle",
       "misc": "Misc", "gmma": "GMMA", "warpgroup_arrive": "Warpgroup Arrive"}
KERNELS = ["k_mem", "k_fma", "k_sync"]
SAMPLE_COLUMNS = ("Warp Stall Sampling (All Samples)", "Warp Stall Sampling (All Cycles)", "# Samples")
INSN = 16  # bytes per SASS instruction (Volta and later)


def short(name):
    """k_mem(const float4 *, ...) / void k_mem(...) -> k_mem"""
    return re.sub(r"\(.*", "", name).replace("void ", "").strip()


def number(v):
    try:
        return float(str(v).replace(",", "").strip() or 0)
    except ValueError:
        return None


def opcode(text):
    """the opcode of a SASS line without predicate, modifiers or operands: '@!P3 BRA `(.L_x_9)' -> BRA"""
    t = text.strip().split()
    while t and t[0].startswith("@"):
        t = t[1:]
    return t[0].split(".")[0] if t else ""


def gputap(rundir):
    js = glob.glob(rundir + "/*/pc_sampling.json")
    if not js:
        sys.exit("no %s/*/pc_sampling.json" % rundir)
    d = json.load(open(js[0]))
    out = {}
    for k in d["kernels"]:
        tot = k["samples"] or 1
        line = k["top_lines"][0] if k.get("top_lines") else None
        pc = k["top_pcs"][0] if k.get("top_pcs") else None
        out[short(k["name"])] = {
            "shares": {g: v / tot for g, v in k["groups"].items()}, "samples": k["samples"],
            "line": (line["file"].split("/")[-1], line["line"]) if line else None,
            "pc": (pc["pc_offset"], pc["samples"] / tot, pc.get("sass", "")) if pc else None}
    return out


def ncu_raw(path):
    """kernel -> stall group shares, every profiled launch of it summed (ncu's raw page: a header
    row, a units row, one row per profiled launch)"""
    rows = list(csv.reader(open(path, errors="replace")))
    hi = next((i for i, r in enumerate(rows) if "Kernel Name" in r), None)
    if hi is None:
        return {}
    head = rows[hi]
    sums = {}
    for r in rows[hi + 1:]:
        if len(r) != len(head):
            continue
        rec = dict(zip(head, r))
        cols = [(c, number(v)) for c, v in rec.items() if c.startswith(PREFIX) and not c.endswith("_not_issued")]
        if not any(x is not None for _, x in cols):
            continue  # the units row
        groups = sums.setdefault(short(rec["Kernel Name"]), {})
        for col, x in cols:
            if x is None:
                continue
            g = NCU.get(col[len(PREFIX):], "Other")
            groups[g] = groups.get(g, 0.0) + x
    out = {}
    for n, groups in sums.items():
        tot = sum(groups.values()) or 1.0
        out[n] = {"shares": {g: v / tot for g, v in groups.items()}, "samples": tot}
    return out


def disasm(path):
    """(function, offset) -> (file base name, line, SASS) from nvdisasm -g: the instructions of the
    .text sections only (data sections list bytes at offsets too)"""
    m = {}
    fn, cur = None, None
    for line in open(path, errors="replace"):
        s = line.strip()
        sec = re.match(r"\.section\s+([^,\s]+)", s)
        if sec:
            name = sec.group(1)
            fn = name[len(".text."):] if name.startswith(".text.") else None
            cur = None
            continue
        f = re.search(r'//## File "([^"]+)", line (\d+)', s)
        if f:
            cur = (f.group(1).split("/")[-1], int(f.group(2)))
            continue
        i = re.match(r"/\*([0-9a-fA-F]+)\*/\s*(.*?)\s*;?\s*(/\*.*)?$", s)
        if i and fn and cur:
            m[(fn, int(i.group(1), 16))] = (cur[0], cur[1], i.group(2).rstrip(" ;"))
    return m


def short_mangled(m):
    """the plain name of a mangled one: _Z5k_memPK6float4PS_m -> k_mem"""
    g = re.match(r"_Z(\d+)", m)
    return m[len(g.group(0)):len(g.group(0)) + int(g.group(1))] if g else m


def ncu_sass(path):
    """kernel -> list of launches, each a list of (address text, SASS, samples) in ncu's order"""
    out = {}
    kernel, head, rows = None, None, None
    for r in csv.reader(open(path, errors="replace")):
        if not r:
            continue
        if r[0] == "Kernel Name":
            kernel, head = short(r[1]) if len(r) > 1 else None, None
            rows = out.setdefault(kernel, []) if kernel else None
            if rows is not None:
                rows.append([])
            continue
        if "Address" in r and "Source" in r:
            head = r
            continue
        if not head or rows is None or len(r) < len(head):
            continue
        rec = dict(zip(head, r))
        n = next((number(rec[c]) for c in SAMPLE_COLUMNS if c in rec), None)
        rows[-1].append((rec["Address"], rec["Source"], n or 0))
    return out


def place(launch, fn, dis):
    """offsets of one launch's instructions: from the addresses when the opcodes there are nvdisasm's,
    else by their place in the list; returns (offsets, how, opcodes matched, instructions)"""
    def score(offs):
        return sum(1 for o, (_, src, _) in zip(offs, launch)
                   if (fn, o) in dis and opcode(dis[(fn, o)][2]) == opcode(src))
    cands = []
    try:
        addrs = [int(a, 16) for a, _, _ in launch]
        cands.append(("address", [a - addrs[0] for a in addrs]))
    except (ValueError, IndexError):
        pass
    cands.append(("index", [INSN * i for i in range(len(launch))]))
    best = max(((how, offs, score(offs)) for how, offs in cands), key=lambda c: c[2])
    return best[1], best[0], best[2], len(launch)


def ncu_lines(path, dis):
    """kernel -> (hottest (file, line), its samples, hottest (offset, share, SASS), alignment text):
    ncu's samples per instruction of every profiled launch, summed per source line of nvdisasm -g"""
    fns = {short_mangled(f): f for (f, _) in dis}
    out = {}
    for k, launches in ncu_sass(path).items():
        fn = fns.get(k)
        per, per_pc, how, matched, total = {}, {}, set(), 0, 0
        for launch in launches:
            if not launch:
                continue
            offs, h, mt, n = place(launch, fn, dis)
            how.add(h)
            matched, total = matched + mt, total + n
            for o, (_, _, s) in zip(offs, launch):
                if not s:
                    continue
                per_pc[o] = per_pc.get(o, 0) + s
                if (fn, o) in dis:
                    key = dis[(fn, o)][:2]
                    per[key] = per.get(key, 0) + s
        if not per:
            continue
        line = max(per.items(), key=lambda kv: kv[1])
        pc = max(per_pc.items(), key=lambda kv: kv[1])
        out[k] = (line[0], line[1], (pc[0], pc[1] / (sum(per_pc.values()) or 1), dis.get((fn, pc[0]), ("", 0, "?"))[2]),
                  "%d of %d opcodes as nvdisasm's, placed by %s" % (matched, total, "/".join(sorted(how))))
    return out


def main():
    if len(sys.argv) < 6:
        sys.exit(__doc__)
    rundir, raw, sass, dis, tol = sys.argv[1:6]
    label = sys.argv[6] if len(sys.argv) > 6 else "check"
    tol = float(tol)
    g, n = gputap(rundir), ncu_raw(raw)
    nl = ncu_lines(sass, disasm(dis))
    ok = fail = 0
    worst = 0.0

    def check(cond, text):
        nonlocal ok, fail
        print("%s %s %s" % ("ok" if cond else "not ok", label, text))
        ok, fail = ok + bool(cond), fail + (not cond)

    for k in KERNELS:
        if k not in g or k not in n:
            check(False, "%s: missing (gputap %s, ncu raw page %s)" % (k, k in g, k in n))
            continue
        gs, ns = g[k]["shares"], n[k]["shares"]
        gd, nd = max(gs, key=gs.get), max(ns, key=ns.get)
        diff = max(abs(gs.get(x, 0) - ns.get(x, 0)) for x in set(gs) | set(ns))
        worst = max(worst, diff)
        top = sorted(set(gs) | set(ns), key=lambda x: -max(gs.get(x, 0), ns.get(x, 0)))[:4]
        shares = ", ".join("%s %.1f/%.1f%%" % (x, 100 * gs.get(x, 0), 100 * ns.get(x, 0)) for x in top)
        check(gd == nd, "%s dominant: gputap %s, ncu %s (gputap/ncu: %s; %d/%d samples)" % (
            k, gd, nd, shares, g[k]["samples"], n[k]["samples"]))
        check(diff <= tol, "%s shares: largest difference %.1f points (tolerance %.1f)" % (k, 100 * diff, 100 * tol))
        gl, nline = g[k]["line"], nl.get(k)
        same = gl is not None and nline is not None and tuple(gl) == tuple(nline[0])
        check(same, "%s hottest line: gputap %s, ncu %s" % (
            k, "%s:%d" % tuple(gl) if gl else None,
            "%s:%d (%d samples; %s)" % (nline[0][0], nline[0][1], nline[1], nline[3]) if nline else None))
        gp = g[k]["pc"]
        if gp and nline:
            print("info %s %s hottest PC: gputap +0x%x %.1f%% `%s`, ncu +0x%x %.1f%% `%s`" % (
                label, k, gp[0], 100 * gp[1], gp[2], nline[2][0], 100 * nline[2][1], nline[2][2]))
    print("%s: %d passed, %d failed; largest share difference %.1f points" % (label, ok, fail, 100 * worst))
    return 1 if fail else 0


if __name__ == "__main__":
    sys.exit(main())
