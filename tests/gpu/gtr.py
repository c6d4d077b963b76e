#!/usr/bin/env python3
"""Minimal reader of gputap's trace.gtr (include/gputap/format.h), for tests.

    gtr.py FILE            prints a JSON summary
    import gtr; t = gtr.read(path)   -> dict with header, strings, records
"""
import json
import os
import struct
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
from gputap.readtrace import records_bytes  # noqa: E402  (blocks of format version 2 on)

HDR = struct.Struct("<8sIIIIQQQQQ32s64s")
REC = struct.Struct("<HHI")
LAYOUT = {
    2: ("api", "<IBbHiIQQQQQ", "name_id domain copy_kind flags result pad start end bytes corr ptr"),
    3: ("kernel", "<IIIIQQQ3I3IIIIIQ",
        "name_id device context stream start end corr gx gy gz bx by bz registers static_smem dynamic_smem graph_id graph_node"),
    4: ("memcpy", "<BBBBIIIQQQQII", "copy_kind src_kind dst_kind flags device context stream start end bytes corr graph_id dst_device"),
    5: ("memset", "<IIIIQQQQII", "device context stream value start end bytes corr graph_id pad"),
    6: ("memory", "<BBHIQQQQII", "op mem_kind pad device ts address bytes corr stream pad2"),
    7: ("range", "<IIBBHIQQQQ", "name_id domain_id kind level pad end_tid start end range_id parent_id"),
    8: ("counter", "<IIQd", "name_id device ts value"),
    9: ("dropped", "<IIQ", "source pad count"),
    13: ("hold", "<B3xiQQQQIIII", "kind result start end corr batch count reason_id api_id pad2"),
    14: ("note", "<IiQiI", "what detail ts result pad"),
}


def read(path):
    with open(path, "rb") as f:
        data = f.read()
    h = HDR.unpack_from(data, 0)
    if h[0] != b"GPUTAPTR":
        raise ValueError(f"{path}: not a gputap trace")
    header = dict(version=h[1], header_size=h[2], flags=h[3], pid=h[4], start_ns=h[5], end_ns=h[6],
                  records=h[7], lost_records=h[8], cupti_dropped=h[9],
                  proc=h[10].split(b"\0")[0].decode(), host=h[11].split(b"\0")[0].decode())
    data, off, torn = records_bytes(data, path)
    if torn:
        header["torn"] = True
    strings = {}
    recs = []
    nrec = 0
    while off + 8 <= len(data):
        typ, size, tid = REC.unpack_from(data, off)
        if size < 8 or off + size > len(data):
            header["torn"] = True
            break
        nrec += 1
        if typ == 1:
            sid, ln = struct.unpack_from("<II", data, off + 8)
            strings[sid] = data[off + 16:off + 16 + ln].decode("utf-8", "replace")
        elif typ in LAYOUT:
            kind, fmt, names = LAYOUT[typ]
            vals = struct.unpack_from(fmt, data, off + 8)
            r = dict(zip(names.split(), vals))
            r["type"] = kind
            r["tid"] = tid
            recs.append(r)
        off += size
    header["records_read"] = nrec
    for r in recs:
        if "name_id" in r:
            r["name"] = strings.get(r["name_id"], "")
        if "domain_id" in r:
            r["domain"] = strings.get(r["domain_id"], "")
        if r["type"] == "hold":
            r["reason"] = strings.get(r["reason_id"], "")
            r["api"] = strings.get(r["api_id"], "")
    return dict(header=header, strings=strings, records=recs)


def summary(t):
    s = dict(header=t["header"], counts={}, api={}, kernels={}, memcpy_bytes={}, ranges=0, marks=0, dropped=0)
    for r in t["records"]:
        s["counts"][r["type"]] = s["counts"].get(r["type"], 0) + 1
        if r["type"] == "api":
            a = s["api"].setdefault(r["name"], [0, 0])
            a[0] += 1
            a[1] += r["bytes"]
        elif r["type"] == "kernel":
            s["kernels"][r["name"]] = s["kernels"].get(r["name"], 0) + 1
        elif r["type"] == "memcpy":
            k = str(r["copy_kind"])
            s["memcpy_bytes"][k] = s["memcpy_bytes"].get(k, 0) + r["bytes"]
        elif r["type"] == "range":
            if r["kind"] == 3 or r["start"] == r["end"] and r["kind"] == 4:
                s["marks"] += 1
            else:
                s["ranges"] += 1
        elif r["type"] == "dropped":
            s["dropped"] += r["count"]
    return s


if __name__ == "__main__":
    print(json.dumps(summary(read(sys.argv[1])), indent=1, sort_keys=True))
