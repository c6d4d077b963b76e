#!/usr/bin/env python3
"""Build small analyzer inputs whose answers are known by construction (standard library only).

usage: make_inputs.py OUTDIR
Writes OUTDIR/scenario.sqlite (nsys export schema), OUTDIR/rank0.json and OUTDIR/rank1.json.gz
(Kineto traces of two ranks), OUTDIR/expected.json (the answers), and a few broken files.

Scenario per GPU (µs after T0): gemm [0,300] s7, AllReduce [200,500] s20, fusion [600,700] s7,
memcpy HtoD [700,750] s7, gemm [950,1100] s7, AllGather [1200,1400] s20, gemm [1300,1350] s8;
iterations [0,990] and [1000,1390].  Rank 1 is rank 0 shifted by 10 µs with its AllReduce moved
to [300,600] (less overlap).
"""
import gzip, json, os, sqlite3, sys

T0 = 1_000_000  # µs
NAMES = {"gemm": "sm90_xmma_gemm_bf16", "fusion": "loop_add_fusion",
         "ar": "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevComm *, unsigned long, ncclWork *)",
         "ag": "ncclKernel_AllGather_RING_LL_Sum_float(ncclWorkElem)"}
BASE = [("gemm", 7, 0, 300), ("ar", 20, 200, 500), ("fusion", 7, 600, 700), ("memcpy", 7, 700, 750),
        ("gemm", 7, 950, 1100), ("ag", 20, 1200, 1400), ("gemm", 8, 1300, 1350)]
STEPS = [(0, 990), (1000, 1390)]


def rank_events(rank):
    ev = []
    for k, s, a, b in BASE:
        if rank == 1 and k == "ar":
            a, b = 300, 600
        ev.append((k, s, a + 10 * rank, b + 10 * rank))
    return ev


def union(iv):
    iv = sorted(iv)
    out = []
    for a, b in iv:
        if out and a <= out[-1][1]:
            out[-1][1] = max(out[-1][1], b)
        else:
            out.append([a, b])
    return out


def length(u):
    return sum(b - a for a, b in u)


def expected(ev):
    comp = union([(a, b) for k, s, a, b in ev if k in ("gemm", "fusion")])
    comm = union([(a, b) for k, s, a, b in ev if k in ("ar", "ag")])
    kern = union([(a, b) for k, s, a, b in ev if k != "memcpy"])
    allu = union([(a, b) for k, s, a, b in ev])
    ov = length(comp) + length(comm) - length(kern)
    span = allu[-1][1] - allu[0][0]
    return {"compute_ms": length(comp) / 1e3, "comm_ms": length(comm) / 1e3, "overlap_ms": ov / 1e3,
            "exposed_comm_ms": (length(comm) - ov) / 1e3, "busy_ms": length(allu) / 1e3,
            "span_ms": span / 1e3, "idle_ms": (span - length(allu)) / 1e3}


def kineto(rank, path):
    evs = []
    for i, (k, s, a, b) in enumerate(reversed(rank_events(rank))):  # not in time order
        if k == "memcpy":
            evs.append({"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy HtoD (Pageable -> Device)", "pid": 0,
                        "tid": s, "ts": T0 + a, "dur": b - a, "args": {"device": 0, "stream": s}})
        else:
            evs.append({"ph": "X", "cat": "kernel", "name": NAMES[k], "pid": 0, "tid": s, "ts": T0 + a + 0.0,
                        "dur": b - a, "args": {"device": 0, "stream": s, "correlation": i, "grid": [1, 1, 1]}})
    for j, (a, b) in enumerate(STEPS):
        evs.append({"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#%d" % (j + 10),
                    "pid": 77, "tid": 77, "ts": T0 + a + 10 * rank, "dur": b - a})
    doc = {"schemaVersion": 1, "distributedInfo": {"rank": rank, "world_size": 2}, "traceEvents": evs}
    data = json.dumps(doc, indent=1).encode()
    if path.endswith(".gz"):
        with gzip.open(path, "wb") as f:
            f.write(data)
    else:
        with open(path, "wb") as f:
            f.write(data)


def sqlite_db(path):
    if os.path.exists(path):
        os.unlink(path)
    db = sqlite3.connect(path)
    db.executescript("""
    CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL);
    CREATE TABLE TARGET_INFO_GPU (id INTEGER, name TEXT);
    CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER,
        contextId INTEGER, streamId INTEGER, correlationId INTEGER, demangledName INTEGER, shortName INTEGER);
    CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER,
        streamId INTEGER, copyKind INTEGER, bytes INTEGER);
    CREATE TABLE CUPTI_ACTIVITY_KIND_MEMSET (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER,
        streamId INTEGER, bytes INTEGER);
    CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER, eventType INTEGER, text TEXT, textId INTEGER);
    """)
    ids = {}
    for i, (k, n) in enumerate(NAMES.items()):
        ids[k] = i + 1
        db.execute("INSERT INTO StringIds VALUES (?, ?)", (i + 1, n))
    # two GPUs in one export: device 0 is rank 0's timeline, device 1 is rank 1's
    for dev in (0, 1):
        for k, s, a, b in rank_events(dev):
            a, b = (T0 + a) * 1000, (T0 + b) * 1000
            if k == "memcpy":
                db.execute("INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES (?,?,?,?,1,4096)", (a, b, dev, s))
            else:
                db.execute("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (?,?,?,1,?,0,?,?)",
                           (a, b, dev, s, ids[k], ids[k]))
    for a, b in STEPS:
        db.execute("INSERT INTO NVTX_EVENTS VALUES (?,?,59,'train_step',NULL)", ((T0 + a) * 1000, (T0 + b) * 1000))
    db.commit()
    db.close()


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    kineto(0, os.path.join(out, "rank0.json"))
    kineto(1, os.path.join(out, "rank1.json.gz"))
    sqlite_db(os.path.join(out, "scenario.sqlite"))
    exp = {"rank0": expected(rank_events(0)), "rank1": expected(rank_events(1))}
    exp["total"] = {k: exp["rank0"][k] + exp["rank1"][k] for k in exp["rank0"]}
    with open(os.path.join(out, "expected.json"), "w") as f:
        json.dump(exp, f, indent=1)
    # broken inputs
    with open(os.path.join(out, "rank0.json"), "rb") as f:
        data = f.read()
    with open(os.path.join(out, "truncated.json"), "wb") as f:
        f.write(data[: len(data) // 2])
    with open(os.path.join(out, "scenario.sqlite"), "rb") as f:
        data = f.read()
    with open(os.path.join(out, "truncated.sqlite"), "wb") as f:
        f.write(data[: len(data) // 3])
    db = sqlite3.connect(os.path.join(out, "badrow.sqlite"))
    db.executescript("DROP TABLE IF EXISTS CUPTI_ACTIVITY_KIND_KERNEL;"
                     "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, streamId, shortName);"
                     "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (1, 2, 0, 7, 'k');"
                     "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES ('soon', 2, 0, 7, 'k');")
    db.close()
    db = sqlite3.connect(os.path.join(out, "unknown.sqlite"))
    db.executescript("DROP TABLE IF EXISTS FOO; CREATE TABLE FOO (a); INSERT INTO FOO VALUES (1);")
    db.close()


main()
