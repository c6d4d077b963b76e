#!/usr/bin/env python3
"""Writes the malformed-input corpus (standard library only): python3 tests/bad-input/make.py

Each file is small and holds one kind of damage a real file can have, for one reader:
  kineto/   PyTorch profiler / Kineto JSON        sqlite/  nsys SQLite exports
  gtr/      gputap traces (trace.gtr)             config/  GPU Performance Analyzer configs
  csv/      nsys summary CSVs (PREFIX_*.csv)      run/     gputap run directories
  samples/  sampler CSVs inside run directories   liblog/  library call logs
tests/cli/t_bad_input.sh runs every file through the commands that read it (no crash, no hang,
bounded memory, never exit 0 on nothing) and checks the message of each named case; each file is
also copied into the regression corpus of the fuzz target of its reader (tests/fuzz/corpus/, as
bad-NAME), which make check runs under ASan and UBSan.
The files are kept in the repository; this script says how each was made.
"""
import gzip, json, os, shutil, sqlite3, struct, sys

TOP = os.path.dirname(os.path.abspath(__file__))
T0 = 1_700_000_000_000_000_000  # ns, a plausible epoch time


def path(*p):
    f = os.path.join(TOP, *p)
    os.makedirs(os.path.dirname(f), exist_ok=True)
    return f


def write(rel, data):
    with open(path(rel), "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())


# ---------------------------------------------------------------- Kineto
def kev(name="sm90_xmma_gemm", cat="kernel", ts=1000.0, dur=10.0, **args):
    e = {"ph": "X", "cat": cat, "name": name, "pid": 0, "tid": 7, "ts": ts, "dur": dur}
    e["args"] = {"device": 0, "stream": 7, "correlation": 1}
    e["args"].update(args)
    return e


def kdoc(events, rank=None, raw_rank=None):
    d = {"schemaVersion": 1}
    if rank is not None:
        d["distributedInfo"] = {"rank": rank, "world_size": 2}
    d["traceEvents"] = events
    s = json.dumps(d)
    if raw_rank is not None:  # a number json.dumps would not write as is
        s = s.replace('"traceEvents"', '"distributedInfo": {"rank": %s}, "traceEvents"' % raw_rank, 1)
    return s


def kineto():
    write("kineto/root-empty-object.json", "{}")
    write("kineto/root-null.json", "null")
    write("kineto/root-array.json", "[]")
    write("kineto/root-number.json", "5")
    write("kineto/events-number.json", '{"traceEvents": 5}')
    write("kineto/events-object.json", '{"traceEvents": {"a": 1}}')
    write("kineto/events-empty.json", '{"traceEvents": []}')
    write("kineto/cpu-only.json", kdoc([kev("aten::mm", cat="cpu_op")]))
    one = [kev(), {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 1, "tid": 1,
                   "ts": 990, "dur": 100}]
    write("kineto/bom.json", b"\xef\xbb\xbf" + kdoc(one).encode())
    write("kineto/device-2e32.json", kdoc([kev(device=4294967296)]))
    write("kineto/device-negative.json", kdoc([kev(device=-7)]))
    write("kineto/device-fraction.json", kdoc([kev(device=1.5)]))
    write("kineto/device-string.json", kdoc([kev(device="cuda:0")]))
    write("kineto/rank-negative.json", kdoc(one, rank=-3))
    write("kineto/rank-1e300.json", kdoc(one, raw_rank="1e300"))
    write("kineto/rank-2e32.json", kdoc(one, rank=4294967296))
    write("kineto/rank-dup-a.json", kdoc(one, rank=1))
    write("kineto/rank-dup-b.json", kdoc(one, rank=1))
    write("kineto/ts-1e308.json", kdoc([kev(ts=1e308)]).replace("1e+308", "1e308"))
    write("kineto/ts-negative.json", kdoc([kev(ts=-5.0)]))
    write("kineto/dur-negative.json", kdoc([kev(dur=-5.0)]))
    write("kineto/ts-inf.json", kdoc([kev()]).replace('"ts": 1000.0', '"ts": 1e999'))
    write("kineto/ts-huge-int.json", kdoc([kev()]).replace('"ts": 1000.0', '"ts": 99999999999999999999999'))
    write("kineto/end-overflow.json", kdoc([kev(dur=1000.0)]).replace('"ts": 1000.0', '"ts": 9223372036854775'))
    write("kineto/name-nul.json", kdoc([kev("gemm\u0000hidden"), kev("gemm\u0000other", ts=2000.0)]))
    write("kineto/name-control.json", kdoc([kev("ncclDevKernel_evil\u001b[2J\u001b[31mred\u0007_x")]))
    write("kineto/name-invalid-utf8.json", kdoc([kev("X")]).encode().replace(b'"X"', b'"\xff\xfe"'))
    write("kineto/truncated.json", kdoc(one)[:-20])
    write("kineto/deep.json", '{"traceEvents": [' + "[" * 20000 + "]" * 20000 + "]}")
    write("kineto/gpu-no-ts.json", kdoc([{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "dur": 1}]))
    write("kineto/nvtx-nomatch.json", kdoc(one))
    # record_function("") twice: an empty range name is never the iteration range
    ann = lambda ts: {"ph": "X", "cat": "user_annotation", "name": "", "pid": 1, "tid": 1, "ts": ts, "dur": 100}
    write("kineto/range-empty-name.json", kdoc([kev(ts=1000.0), kev(ts=2000.0), ann(990), ann(1990)]))
    write("kineto/gz-empty.json.gz", gzip.compress(b"", mtime=0))  # mtime 0: the same bytes each time
    write("kineto/gz-truncated.json.gz", gzip.compress(kdoc(one).encode(), mtime=0)[:40])


# ---------------------------------------------------------------- nsys SQLite
def sq(rel, kernels=(), strings=(), memcpy=None, nvtx=None, kernel_cols=None, runtime=None):
    f = path(rel)
    if os.path.exists(f):
        os.unlink(f)
    db = sqlite3.connect(f)
    db.execute("CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT)")
    for i, v in strings:
        db.execute("INSERT INTO StringIds VALUES (?, ?)", (i, v))
    db.execute(kernel_cols or "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER, end INTEGER, "
               "deviceId INTEGER, streamId INTEGER, correlationId INTEGER, demangledName INTEGER, shortName INTEGER)")
    for k in kernels:
        db.execute("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (?, ?, ?, ?, ?, ?, ?)", k)
    if memcpy is not None:
        db.execute("CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INTEGER, end INTEGER, deviceId INTEGER, "
                   "streamId INTEGER, correlationId INTEGER, copyKind INTEGER, bytes INTEGER)")
        for m in memcpy:
            db.execute("INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES (?, ?, ?, ?, ?, ?, ?)", m)
    if nvtx is not None:
        db.execute("CREATE TABLE NVTX_EVENTS (start INTEGER, end INTEGER, text TEXT, textId INTEGER)")
        for n in nvtx:
            db.execute("INSERT INTO NVTX_EVENTS VALUES (?, ?, ?, ?)", n)
    if runtime is not None:
        db.execute("CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER, end INTEGER, correlationId INTEGER, "
                   "globalTid INTEGER)")
        for r in runtime:
            db.execute("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (?, ?, ?, ?)", r)
    db.commit()
    db.close()


def sqlite():
    k = lambda dev=0, s=T0, e=T0 + 1000, name=1: (s, e, dev, 7, 1, name, name)
    sq("sqlite/name-nul.sqlite", [k(name=1), k(name=2), k(name=1)],
       [(1, "gemm_a\x00hidden"), (2, "gemm_a\x00other")])
    sq("sqlite/name-blob.sqlite", [k(name=1), k(name=2)], [(1, b"gemm_blob\x00\xff"), (2, b"x" * 3)])
    sq("sqlite/device-2e32-plus-1.sqlite", [k(), k(dev=4294967297)], [(1, "gemm")])
    sq("sqlite/device-int64-max.sqlite", [k(dev=2**63 - 1)], [(1, "gemm")])
    sq("sqlite/device-negative.sqlite", [k(dev=-5)], [(1, "gemm")])
    sq("sqlite/start-negative.sqlite", [k(s=-100, e=1000)], [(1, "gemm")])
    sq("sqlite/end-negative.sqlite", [k(s=T0, e=-1)], [(1, "gemm")])
    sq("sqlite/time-real.sqlite", [(1.5, 2.5, 0, 7, 1, 1, 1)], [(1, "gemm")])
    sq("sqlite/empty-tables.sqlite", [], [], memcpy=[], nvtx=[])
    sq("sqlite/nvtx-only-nomatch.sqlite", [], [], nvtx=[(T0, T0 + 10, "step", None)])
    sq("sqlite/nvtx-nomatch.sqlite", [k()], [(1, "gemm")], nvtx=[(T0, T0 + 5000, "step", None)])
    sq("sqlite/nvtx-empty-name.sqlite", [k(), k(s=T0 + 5000, e=T0 + 6000)], [(1, "gemm")],
       nvtx=[(T0 - 10, T0 + 2000, "", None), (T0 + 4000, T0 + 7000, "", None)])
    sq("sqlite/name-control.sqlite", [k()], [(1, "ncclDevKernel_evil\x1b[2J\x1b]0;title\x07name_x")])
    sq("sqlite/string-id-missing.sqlite", [k(name=99)], [(1, "gemm")])
    sq("sqlite/no-name-column.sqlite", [], [], kernel_cols="CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER, "
       "end INTEGER, deviceId INTEGER, streamId INTEGER, correlationId INTEGER, a INTEGER, b INTEGER)")
    # the kernel table a recursive view whose rows never end (nsys writes tables only)
    f = path("sqlite/kernel-view-recursive.sqlite")
    if os.path.exists(f):
        os.unlink(f)
    db = sqlite3.connect(f)
    db.execute("CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT)")
    db.execute("INSERT INTO StringIds VALUES (1, 'gemm')")
    db.execute("CREATE VIEW CUPTI_ACTIVITY_KIND_KERNEL AS WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x + 1 "
               "FROM r) SELECT x AS start, x + 1 AS end, 0 AS deviceId, 7 AS streamId, x AS correlationId, "
               "1 AS demangledName, 1 AS shortName FROM r")
    db.commit()
    db.close()
    write("sqlite/not-a-database.sqlite", "SQLite format 3\x00" + "garbage" * 20)
    with open(path("sqlite/name-nul.sqlite"), "rb") as f:
        write("sqlite/truncated.sqlite", f.read()[:3000])


# ---------------------------------------------------------------- gputap trace
HDR = struct.Struct("<8sIIIIQQQQQ32s64s")


def hdr(header_size=160, version=1, flags=0, proc=b"pid1", magic=b"GPUTAPTR"):
    return HDR.pack(magic, version, header_size, flags, 1, T0, T0 + 10**9, 0, 0, 0, proc, b"host")


def rec(typ, body, tid=0):
    size = 8 + len(body)
    pad = (-size) % 8
    return struct.pack("<HHI", typ, size + pad, tid) + body + b"\0" * pad


def rstring(i, s):
    s = s if isinstance(s, bytes) else s.encode()
    return rec(1, struct.pack("<II", i, len(s)) + s)


def rkernel(name=1, dev=0, s=T0 + 1000, e=T0 + 2000, corr=0, stream=7):
    return rec(3, struct.pack("<IIIIQQQIIIIIIIIIIQ", name, dev, 1, stream, s, e, corr, 1, 1, 1, 32, 1, 1,
                              16, 0, 0, 0, 0))


def rrange(name, s, e, level=0, kind=1, rid=1):
    return rec(7, struct.pack("<IIBBHIQQQQ", name, 0, kind, level, 0, 0, s, e, rid, 0), tid=5)


def rmemory(dev=0, op=1, ts=T0 + 500, addr=0x1000, nbytes=1 << 20):
    return rec(6, struct.pack("<BBHIQQQQII", op, 0, 0, dev, ts, addr, nbytes, 0, 0, 0))


def gtr():
    ok = hdr() + rstring(1, "gemm_kernel") + rkernel()
    write("gtr/header-past-end.gtr", hdr(header_size=4096) + rstring(1, "k") + rkernel())
    write("gtr/header-truncated.gtr", hdr()[:100])
    write("gtr/header-only-magic.gtr", b"GPUTAPTR")
    write("gtr/header-size-odd.gtr", hdr(header_size=161) + rstring(1, "k") + rkernel())
    write("gtr/version-99.gtr", hdr(version=99) + rstring(1, "k") + rkernel())
    write("gtr/bad-magic.gtr", hdr(magic=b"NOTATRAC") + rstring(1, "k") + rkernel())
    write("gtr/string-id-2e26.gtr", hdr() + rstring(1 << 26, "k") + rkernel(name=1 << 26))
    write("gtr/string-id-0.gtr", hdr() + rstring(0, "k") + rkernel())
    write("gtr/kernel-name-id-huge.gtr", hdr() + rstring(1, "k") + rkernel(name=0xfffffff0))
    write("gtr/name-nul.gtr", hdr() + rstring(1, b"gemm\0hidden") + rstring(2, b"gemm\0other") +
          rkernel(name=1) + rkernel(name=2, s=T0 + 3000, e=T0 + 4000))
    write("gtr/name-control.gtr", hdr() + rstring(1, "ncclDevKernel_evil\x1b[2J\x1b[31mred\x07\xc2\x9b_x") + rkernel())
    write("gtr/device-ffffffff.gtr", hdr() + rstring(1, "k") + rkernel(dev=0xffffffff))
    write("gtr/device-2e31.gtr", hdr() + rstring(1, "k") + rkernel(dev=1 << 31))
    write("gtr/start-max.gtr", hdr() + rstring(1, "k") + rkernel(s=2**64 - 1, e=2**64 - 1))
    write("gtr/end-before-start.gtr", hdr() + rstring(1, "k") + rkernel(s=T0 + 5000, e=T0 + 10))
    write("gtr/record-size-0.gtr", ok + struct.pack("<HHI", 3, 0, 0) + b"\0" * 88)
    write("gtr/record-too-short.gtr", ok + rec(3, b"\0" * 16))
    write("gtr/torn-tail.gtr", ok + rkernel()[:50])
    write("gtr/nvtx-nomatch.gtr", ok + rstring(2, "step") + rrange(2, T0 + 900, T0 + 2100))
    write("gtr/memory-device-huge.gtr", ok + rmemory(dev=0xfffffff0) + rmemory(dev=40))
    write("gtr/empty.gtr", b"")
    write("gtr/header-only.gtr", hdr())


# ---------------------------------------------------------------- configs
def config():
    csv = {"kernel_sum": "../csv/ok_cuda_gpu_kern_sum.csv"}
    base = lambda inp, extra="": '{"inputs": %s, "kernel_to_class_map": {"gemm": "gemm"}%s}' % (inp, extra)
    one = lambda fields: json.dumps([dict({"format": "csv", "title": "t", "nsys_csv_file_path": csv,
                                            "analysis_args": {"num_of_iters": 1, "num_of_gpus": 1}}, **fields)])
    write("config/inputs-empty.json", base("[]"))
    write("config/inputs-missing.json", '{"kernel_to_class_map": {"gemm": "gemm"}}')
    write("config/inputs-null-item.json", base("[null]"))
    write("config/inputs-number-item.json", base("[5]"))
    write("config/inputs-object.json", base('{"a": 1}'))
    write("config/kernel-sum-number.json", base(one({"nsys_csv_file_path": {"kernel_sum": 5}})))
    write("config/kernel-sum-missing.json", base(one({"nsys_csv_file_path": {}})))
    write("config/iters-negative.json", base(one({"analysis_args": {"num_of_iters": -1, "num_of_gpus": 1}})))
    write("config/iters-huge.json", base(one({"analysis_args": {"num_of_iters": 1e300, "num_of_gpus": 1}})))
    write("config/format-unknown.json", base(one({"format": "xlsx"})))
    write("config/root-array.json", "[]")
    write("config/map-number.json", '{"inputs": %s, "kernel_to_class_map": 5}' % one({}))
    write("config/unterminated-comment.json", '{"inputs": [] /* never closed')
    write("config/ok.json", base(one({})))
    # null is "not given" for every optional member (the GPU Performance Analyzer's docs: "could be null")
    write("config/paths-null.json", base(one({"title": None, "nsys_csv_file_path": dict(
        csv, nvtx_proj_trace=None, mem_time_sum=None), "analysis_args": {
        "num_of_iters": 1, "num_of_gpus": 1, "nvtx_tag_of_iter": None}}), ', "x": 1').replace(
        '"kernel_to_class_map": {"gemm": "gemm"}, "x": 1', '"kernel_to_class_map": null'))
    # nested deeper than the tree parser's limit (yajl_tree frees recursively)
    write("config/deep.json", '{"inputs": [], "x": ' + "[" * 2000 + "]" * 2000 + "}")


# ---------------------------------------------------------------- nsys summary CSVs
KHDR = "Time (%),Total Time (ns),Instances,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Name\n"


def csv():
    write("csv/ok_cuda_gpu_kern_sum.csv", KHDR + "100.0,1000,2,500.0,500.0,400,600,100.0,sm90_xmma_gemm\n")
    write("csv/header-only_cuda_gpu_kern_sum.csv", KHDR)
    write("csv/empty_cuda_gpu_kern_sum.csv", "")
    write("csv/emptymem_cuda_gpu_kern_sum.csv", KHDR + "100.0,1000,2,500.0,500.0,400,600,100.0,sm90_xmma_gemm\n")
    write("csv/emptymem_cuda_gpu_mem_time_sum.csv", "")
    write("csv/control_cuda_gpu_kern_sum.csv", KHDR + "100.0,1000,2,500.0,500.0,400,600,100.0,\"a\x1b[2Jb\"\n")
    write("csv/negative_cuda_gpu_kern_sum.csv", KHDR + "100.0,-1000,2,500.0,500.0,400,600,100.0,gemm\n")
    write("csv/huge_cuda_gpu_kern_sum.csv", KHDR + "100.0,1e308,2,500.0,500.0,400,600,100.0,gemm\n")
    write("csv/nul_cuda_gpu_kern_sum.csv", KHDR + "100.0,1000,2,500.0,500.0,400,600,100.0,ge\0mm\n")


# ---------------------------------------------------------------- run directories, sampler CSVs
def run():
    base = os.path.join(TOP, "run")
    shutil.rmtree(base, ignore_errors=True)
    ok = hdr() + rstring(1, "gemm_kernel") + rkernel()
    # trace.gtr is a folder
    os.makedirs(path("run/trace-is-folder/pid1/trace.gtr"), exist_ok=True)
    write("run/trace-is-folder/pid1/trace.gtr/.keep", "")
    # one good process, one whose trace.gtr is a folder
    write("run/one-trace-is-folder/pid1/trace.gtr", ok)
    write("run/one-trace-is-folder/pid2/trace.gtr/.keep", "")
    # run.json is a folder
    write("run/run-json-folder/pid1/trace.gtr", ok)
    write("run/run-json-folder/run.json/.keep", "")
    # sample series with absurd and non-finite values
    samples = "time_ns,device,power_W,mem_used_MiB,sm_util_pct\n"
    for i, v in enumerate(["100", "-1e20", "1e308", "inf", "nan", "-inf", "200", "1e-300"]):
        samples += "%d,0,%s,%s,%s\n" % (T0 + i * 10**8, v, v, v)
    write("run/samples-absurd/pid1/trace.gtr", ok)
    write("run/samples-absurd/gpu_samples.csv", samples)
    power = "time,Power(Watt) GPU0\n" + "".join("%d,%s\n" % (i, v) for i, v in
                                                 enumerate(["100", "-1e20", "1e308", "inf", "1e20"]))
    write("run/power-absurd/pid1/trace.gtr", ok)
    write("run/power-absurd/gpu_info_power_profiler_output.csv", power)
    write("run/samples-time-absurd/pid1/trace.gtr", ok)
    write("run/samples-time-absurd/gpu_samples.csv",
          "time_ns,device,power_W\n1e300,0,100\n-1e300,0,100\n%d,0,100\n" % T0)
    # a flat series far from 0: the tick step no longer moves the tick
    write("run/samples-flat-huge/pid1/trace.gtr", ok)
    write("run/samples-flat-huge/gpu_samples.csv",
          "time_ns,device,power_W\n%d,0,-1e20\n%d,0,-1e20\n" % (T0, T0 + 10**8))
    write("run/samples-time-flat-huge/pid1/trace.gtr", ok)
    write("run/samples-time-flat-huge/gpu_info_power_profiler_output.csv",
          "time,Power(Watt) GPU0\n1e25,100\n1e25,200\n")
    write("run/run-json-deep/pid1/trace.gtr", ok)
    write("run/run-json-deep/run.json", '{"command": ' + "[" * 2000 + "]" * 2000 + "}")
    write("run/samples-device-absurd/pid1/trace.gtr", ok)
    write("run/samples-device-absurd/gpu_samples.csv",
          "time_ns,device,power_W\n%d,1e300,100\n%d,-5,100\n%d,4294967296,100\n" % (T0, T0, T0))


# ---------------------------------------------------------------- library logs
def liblog():
    lt = ("[2026-11-21 09:14:39][cublasLt][474][Trace][cublasLtMatmul] A=0X7f Adesc=[type=R_16BF rows=64 cols=32 "
          "ld=64] B=0X7f Bdesc=[type=R_16BF rows=32 cols=16 ld=32] C=0X7f Cdesc=[type=R_16BF rows=64 cols=16 "
          "ld=64] D=0X7f Ddesc=[type=R_16BF rows=64 cols=16 ld=%s] computeDesc=[computeType=COMPUTE_32F "
          "scaleType=R_32F] stream=0X0\n")
    write("liblog/cublaslt-ldd-0.log", lt % "0")
    write("liblog/cublaslt-ldd-huge.log", lt % "99999999999999999999")
    write("liblog/cublaslt-ldd-negative.log", lt % "-4")


# the fuzz targets' regression corpora get every file too, so the sanitizer build reads them all
FUZZ = {"kineto": ["kineto"], "sqlite": ["sqlite"], "gtr": ["trace", "convert"], "config": ["anaconfig"],
        "csv": ["nsyscsv"], "liblog": ["liblog_cublaslt"]}


REPORT_FILES = ["gpu_samples.csv", "gpu_info_power_profiler_output.csv", "gpu_info_vram_profiler_output.csv",
                "run.json", "pid1/trace.gtr", "library_trace.csv", "library_perf.csv"]


def fuzz_corpora():
    # the report target: the first byte says which file of a run directory the rest is
    for d in sorted(os.listdir(os.path.join(TOP, "run"))):
        for i, name in enumerate(REPORT_FILES):
            f = os.path.join(TOP, "run", d, name)
            if os.path.isfile(f):
                with open(f, "rb") as src, open(os.path.join(TOP, "..", "fuzz", "corpus", "report",
                                                             "bad-%s-%s" % (d, os.path.basename(name))), "wb") as dst:
                    dst.write(bytes([i]) + src.read())
    for src, targets in FUZZ.items():
        for name in sorted(os.listdir(os.path.join(TOP, src))):
            with open(os.path.join(TOP, src, name), "rb") as f:
                data = f.read()
            for t in targets:
                with open(os.path.join(TOP, "..", "fuzz", "corpus", t, "bad-" + name), "wb") as f:
                    f.write(data)


def main():
    for f in (kineto, sqlite, gtr, config, csv, run, liblog, fuzz_corpora):
        f()


if __name__ == "__main__":
    sys.exit(main())
