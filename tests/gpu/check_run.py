#!/usr/bin/env python3
"""Checks of a whole `gputap run` directory against what the program says it did.

    check_run.py example RUN_DIR PROGRAM_STDOUT     the CUDA example under --tools kernel_trace,power,vram
    check_run.py libs RUN_DIR SCRIPT_STDOUT         a PyTorch run with the library tools

Prints "ok NAME" / "not ok NAME: why" lines.
"""
import csv
import glob
import json
import os
import sys


def res(name, cond, why=""):
    print(("ok run/" if cond else "not ok run/") + name + ("" if cond else ": " + str(why)))
    return cond


def last_json(path):
    lines = [l for l in open(path).read().splitlines() if l.startswith("{")]
    return json.loads(lines[-1]) if lines else None


def proc_dir(run):
    ds = [d for d in glob.glob(os.path.join(run, "*")) if os.path.isfile(os.path.join(d, "trace.gtr"))
          and os.path.basename(d) != "samplers"]
    return sorted(ds)[0] if ds else None


def rows(path):
    if not os.path.isfile(path):
        return []
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def common(run):
    rj = os.path.join(run, "run.json")
    ok = res("run-json", os.path.isfile(rj), rj)
    info = json.load(open(rj)) if ok else {}
    res("run-json-exit-status", info.get("exit_status", info.get("exit", {}).get("status") if isinstance(info.get("exit"), dict) else None) == 0,
        {k: info.get(k) for k in ("exit_status", "exit")})
    p = proc_dir(run)
    res("proc-dir", p is not None, os.listdir(run))
    return info, p


def example(run, stdout_path):
    prog = last_json(stdout_path)
    res("program-output", prog is not None, stdout_path)
    info, p = common(run)
    if not p or not prog:
        return
    # trace.json: valid, one event per kernel launched, flows present
    tj = json.load(open(os.path.join(p, "trace.json")))
    ev = tj["traceEvents"] if isinstance(tj, dict) else tj
    kern = [e for e in ev if e.get("ph") == "X" and e.get("cat") == "kernel"]
    want = sum(prog["kernels"].values())
    res("trace-json-kernels", len(kern) == want, "%d events vs %d launched" % (len(kern), want))
    res("trace-json-flows", any(e.get("ph") in ("s", "f") for e in ev), "no flow events")
    # nsys-style kernel summary: instances per name
    ks = rows(os.path.join(p, "trace_cuda_gpu_kern_sum.csv"))
    got = {}
    for r in ks:
        for n in prog["kernels"]:
            if r["Name"] == n or r["Name"].startswith(n + "("):
                got[n] = got.get(n, 0) + int(r["Instances"])
    exp = {n: c for n, c in prog["kernels"].items() if c}
    res("kern-sum-instances", got == exp, "%s vs %s" % (got, exp))
    ms = rows(os.path.join(p, "trace_cuda_gpu_mem_size_sum.csv"))
    h2d = sum(float(r["Total (MB)"]) for r in ms if "Host-to-Device" in r["Operation"])
    d2h = sum(float(r["Total (MB)"]) for r in ms if "Device-to-Host" in r["Operation"])
    res("mem-size-h2d", abs(h2d - prog["h2d_bytes"] / 1e6) < 0.001, "%s MB vs %s B" % (h2d, prog["h2d_bytes"]))
    res("mem-size-d2h", abs(d2h - prog["d2h_bytes"] / 1e6) < 0.001, "%s MB vs %s B" % (d2h, prog["d2h_bytes"]))
    api = rows(os.path.join(p, "trace_cuda_api_sum.csv"))
    res("api-sum", any(r["Name"].startswith("cuLaunchKernel") for r in api), [r["Name"] for r in api][:10])
    nv = rows(os.path.join(p, "trace_nvtx_sum.csv"))
    n_round = sum(int(r["Instances"]) for r in nv if r["Range"].lstrip(":") == "round")
    want_round = sum(1 for r in prog["nvtx_ranges"] if r["name"] == "round")
    res("nvtx-sum-rounds", n_round == want_round, "%d vs %d" % (n_round, want_round))
    # samplers: real rows with numbers
    pw = rows(os.path.join(run, "gpu_info_power_profiler_output.csv"))
    col = [c for c in (pw[0].keys() if pw else []) if c.startswith("Power(Watt)")]
    res("power-csv", pw and col and all(r[col[0]] not in ("", "0") for r in pw), pw[:2])
    vr = rows(os.path.join(run, "gpu_info_vram_profiler_output.csv"))
    res("vram-csv", len(vr) >= 1, "no rows")
    html = open(os.path.join(run, "report.html")).read() if os.path.isfile(os.path.join(run, "report.html")) else ""
    res("report-html", "<svg" in html and "http://" not in html.replace("http://www.w3.org", ""), len(html))


def libs(run, stdout_path):
    info, p = common(run)
    lt = os.path.join(run, "library_trace.csv")
    ok = res("library-trace-csv", os.path.isfile(lt), os.listdir(run))
    if not ok:
        return
    r = rows(lt)
    libsseen = sorted({x["library"] for x in r})
    res("library-trace-libraries", any("blas" in l.lower() for l in libsseen) and any("nccl" in l.lower() for l in libsseen), libsseen)
    # every GEMM shape and collective the script announced (EXPECT lines) is in some config
    exp = [l.split() for l in open(stdout_path) if l.startswith("EXPECT ")]
    missing, n = [], 0
    for e in exp:
        kv = dict(x.split("=", 1) for x in e[2:] if "=" in x)
        if e[1] == "gemm":
            want = ["%s=%s" % (k, kv[k]) for k in ("m", "n", "k") if k in kv]
            pool = [x for x in r if "blas" in x["library"].lower()]
        elif e[1] == "nccl":
            want = ["op=" + kv["op"], "count=" + kv["count"]]
            pool = [x for x in r if x["library"].lower() == "nccl"]
        else:
            continue
        n += 1
        if not any(all(w in x["config"].split() for w in want) for x in pool):
            missing.append(" ".join(want))
    res("library-trace-shapes", n > 0 and not missing, "missing %s of %d" % (missing[:5], n))

if __name__ == "__main__":
    {"example": example, "libs": libs}[sys.argv[1]](*sys.argv[2:])
