#!/usr/bin/env python3
"""Check the findings corpus recorded by tests/gpu/findings.sh (no GPU needed: run it where the
recordings came back).

    python3 tests/gpu/findings_check.py DIR [GPUTAP]

DIR holds cuda-plain.jsonl / torch-plain.jsonl / ddp-plain.jsonl (step times without any tool),
cuda-run/, torch-run/, ddp-run/ (gputap runs: every MODE.VARIANT an NVTX range), cuda-metrics/ (the
counter modes under per-kernel counters), kineto/MODE.VARIANT.json.gz and
ddp-kineto/MODE.VARIANT.rankR.json.gz (torch.profiler).  Programs whose recordings are missing are
left out.
For each program: does `gputap advise` rank the planted finding first, is the twin free of it, and
how does the estimated gain compare with the measured difference of the step times (ratio)?
Prints a Markdown table and exits 1 when a planted finding is not first or a twin has it.
"""
import json
import os
import subprocess
import sys

EXPECT = {
    "cuda": {"launch": "launch-bound", "sync": "host-sync", "synccopy": "sync-copy", "alloc": "alloc-churn",
             "datapre": "step-gap", "pageable": "pageable-copy", "grid": "small-grid",
             "serial": "copy-compute-serial", "memset": "memset"},
    "torch": {"launch": "launch-bound", "item": "host-sync", "pageable": "pageable-copy", "fp32": "fp32-gemm",
              "zero": "memset", "datapre": "step-gap", "cache": "alloc-churn"},
    "ddp": {"comm": "exposed-comm", "straggler": "straggler"},
}
COUNTERS = {"coal": "uncoalesced", "occ": "low-occupancy"}  # cuda modes recorded with per-kernel counters


def steps(path):
    out = {}
    if os.path.exists(path):
        for line in open(path):
            line = line.strip()
            if line.startswith("{"):
                d = json.loads(line)
                if d.get("rank", 0) == 0:
                    out[(d["mode"], d["variant"])] = d
    return out


def advise(gputap, args):
    p = subprocess.run([gputap, "advise", "--format", "json", "--min-gain", "0"] + args, capture_output=True,
                       text=True)
    if p.returncode != 0:
        return None, p.stderr.strip()
    return json.loads(p.stdout)["findings"], ""


def main():
    d = sys.argv[1]
    gputap = sys.argv[2] if len(sys.argv) > 2 else os.path.join(os.path.dirname(__file__), "../../build/gputap")
    bad = 0
    print("| program | recorded by | planted finding | ranked first? | in the twin? | estimated gain (ms/step) "
          "| measured: no tool (ms/step) | ratio | measured: same recording (ms/step) | ratio "
          "| other findings listed (planted / twin) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    expect = dict(EXPECT)
    expect["cuda"] = dict(EXPECT["cuda"], **COUNTERS)
    for lang in ("cuda", "torch", "ddp"):
        plain = steps(os.path.join(d, f"{lang}-plain.jsonl"))
        for mode, want in expect[lang].items():
            p, t = plain.get((mode, "planted")), plain.get((mode, "twin"))
            if not p and not t:
                continue
            measured = p["step_ms"] - t["step_ms"] if p and t else None
            same = p and t and abs(p["checksum"] - t["checksum"]) <= 1e-3 * max(1.0, abs(p["checksum"]))
            run = "cuda-metrics" if mode in COUNTERS else f"{lang}-run"
            sources = []
            if os.path.isdir(os.path.join(d, run)):
                sources.append(("gputap run" + (" --metrics" if mode in COUNTERS else ""),
                                lambda v, run=run: [os.path.join(d, run), "--nvtx", f"{mode}.{v}"]))
            if lang == "torch" and os.path.exists(os.path.join(d, "kineto", f"{mode}.planted.json.gz")):
                sources.append(("torch.profiler", lambda v: [os.path.join(d, "kineto", f"{mode}.{v}.json.gz")]))
            if lang == "ddp" and os.path.exists(os.path.join(d, "ddp-kineto", f"{mode}.planted.rank0.json.gz")):
                sources.append(("torch.profiler", lambda v: [os.path.join(d, "ddp-kineto", f"{mode}.{v}.rank{r}.json.gz")
                                                             for r in (0, 1)]))
            for how, args in sources:
                fp, err = advise(gputap, args("planted"))
                ft, err2 = advise(gputap, args("twin"))
                if fp is None or ft is None:
                    print(f"| {lang} {mode} | {how} | {want} | (advise failed: {err or err2}) | | | | | | | |")
                    bad += 1
                    continue
                listed = [f for f in fp["findings"] if f["gain_pct"] >= 2.0 and f["gain_ms_per_iteration"] >= 0.01]
                first = listed[0]["id"] if listed else "(none)"
                gain = next((f["gain_ms_per_iteration"] for f in fp["findings"] if f["id"] == want), None)
                twin_has = [f for f in ft["findings"] if f["id"] == want and f["gain_pct"] >= 2.0
                            and f["gain_ms_per_iteration"] >= 0.01]
                others_p = [f["id"] for f in listed if f["id"] != want]
                others_t = [f["id"] for f in ft["findings"] if f["gain_pct"] >= 2.0
                            and f["gain_ms_per_iteration"] >= 0.01]
                ratio = gain / measured if gain is not None and measured and measured > 0 else None
                # the same recording: the difference of the iteration times advise measured in the traces
                rec = fp["iteration_ms"] - ft["iteration_ms"]
                rratio = gain / rec if gain is not None and rec > 0 else None
                ok = first == want and not twin_has
                bad += not ok
                print("| %s %s | %s | %s | %s | %s | %s | %s | %s | %.3f | %s | %s / %s |" % (
                    lang, mode, how, want, "yes" if first == want else f"no: {first}",
                    "no" if not twin_has else "yes (%.1f%%)" % twin_has[0]["gain_pct"],
                    "%.3f" % gain if gain is not None else "-",
                    ("%.3f" % measured if measured is not None else "-") + ("" if same else " (results differ)"),
                    "%.2f" % ratio if ratio is not None else "-", rec, "%.2f" % rratio if rratio is not None else "-",
                    ", ".join(others_p) or "-",
                    ", ".join(others_t) or "-"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
