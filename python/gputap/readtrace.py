"""gputap.read_trace(path): a run's records as pandas (or Arrow) tables.

    t = gputap.read_trace("myrun")            # a run folder, a <proc> folder or a trace.gtr
    t.kernels, t.copies, t.memsets, t.api, t.ranges, t.counters, t.memory, t.nccl   # DataFrames
    t.header                                   # one dict per trace: proc, host, pid, partial, ...
    t.to_arrow()                               # the same as pyarrow Tables

Reads gputap's binary trace (docs/trace-format.md) with the standard library and numpy; every table
has a `proc` column (the process folder) so that the ranks of a run stay apart.  Times are ns since
the epoch; names are as recorded (kernel names demangled by CUPTI).  Needs pandas (and pyarrow for
to_arrow): pip install './python[fleet]'.
"""
import os
import struct
import zlib

_HDR = struct.Struct("<8sIIIIQQQQQ32s64s")
_REC = struct.Struct("<HHI")
_BLOCK = struct.Struct("<IBBHIIII")  # magic codec filter flags raw_size data_size nrec crc32
MAGIC = b"GPUTAPTR"
VERSION = 2  # the newest trace format version this reader knows
_BLOCK_MAGIC = 0x4B425447
_BLOCK_MAX_RAW = 4 << 20

# type: (table, min size, numpy fields after the 8-byte record header, string fields)
_LAYOUT = {
    2: ("api", 64, [("name_id", "<u4"), ("domain", "u1"), ("copy_kind", "i1"), ("flags", "<u2"), ("result", "<i4"),
                    ("_pad", "<u4"), ("start_ns", "<u8"), ("end_ns", "<u8"), ("bytes", "<u8"), ("corr_id", "<u8"),
                    ("ptr", "<u8")], ("name_id",)),
    3: ("kernels", 96, [("name_id", "<u4"), ("device", "<u4"), ("context", "<u4"), ("stream", "<u4"),
                        ("start_ns", "<u8"), ("end_ns", "<u8"), ("corr_id", "<u8"), ("grid_x", "<u4"),
                        ("grid_y", "<u4"), ("grid_z", "<u4"), ("block_x", "<u4"), ("block_y", "<u4"),
                        ("block_z", "<u4"), ("registers", "<u4"), ("static_smem", "<u4"), ("dynamic_smem", "<u4"),
                        ("graph_id", "<u4"), ("graph_node_id", "<u8")], ("name_id",)),
    4: ("copies", 64, [("copy_kind", "u1"), ("src_kind", "u1"), ("dst_kind", "u1"), ("flags", "u1"),
                       ("device", "<u4"), ("context", "<u4"), ("stream", "<u4"), ("start_ns", "<u8"),
                       ("end_ns", "<u8"), ("bytes", "<u8"), ("corr_id", "<u8"), ("graph_id", "<u4"),
                       ("dst_device", "<u4")], ()),
    5: ("memsets", 64, [("device", "<u4"), ("context", "<u4"), ("stream", "<u4"), ("value", "<u4"),
                        ("start_ns", "<u8"), ("end_ns", "<u8"), ("bytes", "<u8"), ("corr_id", "<u8"),
                        ("graph_id", "<u4"), ("_pad", "<u4")], ()),
    6: ("memory", 56, [("op", "u1"), ("mem_kind", "u1"), ("_pad", "<u2"), ("device", "<u4"), ("ts_ns", "<u8"),
                       ("address", "<u8"), ("bytes", "<u8"), ("corr_id", "<u8"), ("stream", "<u4"),
                       ("_pad2", "<u4")], ()),
    7: ("ranges", 56, [("name_id", "<u4"), ("domain_id", "<u4"), ("kind", "u1"), ("level", "u1"), ("_pad", "<u2"),
                       ("end_tid", "<u4"), ("start_ns", "<u8"), ("end_ns", "<u8"), ("range_id", "<u8"),
                       ("parent_id", "<u8")], ("name_id", "domain_id")),
    8: ("counters", 32, [("name_id", "<u4"), ("device", "<u4"), ("ts_ns", "<u8"), ("value", "<f8")], ("name_id",)),
    12: ("nccl", 80, [("comm_hash", "<u8"), ("seq", "<u8"), ("start_ns", "<u8"), ("end_ns", "<u8"),
                      ("count", "<u8"), ("func_id", "<u4"), ("algo_id", "<u4"), ("proto_id", "<u4"),
                      ("dtype_id", "<u4"), ("rank", "<i4"), ("nranks", "<i4"), ("root", "<i4"), ("nchannels", "u1"),
                      ("nwarps", "u1"), ("plugin_version", "u1"), ("_pad", "u1")],
         ("func_id", "algo_id", "proto_id", "dtype_id")),
}
_COPY_KIND = {0: "unknown", 1: "HtoD", 2: "DtoH", 3: "HtoA", 4: "AtoH", 5: "AtoA", 6: "AtoD", 7: "DtoA", 8: "DtoD",
              9: "HtoH", 10: "PtoP"}
_STRING_OFFSETS = {2: (8,), 3: (8,), 7: (8, 12), 8: (8,), 12: (48, 52, 56, 60)}


class TraceFormatError(ValueError):
    """The file is not a gputap trace, or is damaged; the message names the file and the byte."""


def _undelta(raw, offs, types, sizes):
    """Undo the delta filter of one block in place (docs/trace-format.md, "Blocks"): a record whose
    type is neither 1 (string) nor >= 256, and whose size equals that of the previous record of its
    type in the block, holds its body as u32 differences from that record's body."""
    import numpy as np

    if not offs:
        return
    buf = np.frombuffer(raw, dtype=np.uint8)  # writable: raw is a bytearray
    offs = np.asarray(offs, dtype=np.int64)
    types = np.asarray(types, dtype=np.int64)
    sizes = np.asarray(sizes, dtype=np.int64)
    for ty in np.unique(types):
        if ty == 1 or ty >= 256:
            continue
        idx = np.nonzero(types == ty)[0]
        sz = sizes[idx]
        # runs of equal size: each starts plain, the rest are differences from the one before
        starts = np.nonzero(np.r_[True, sz[1:] != sz[:-1]])[0]
        ends = np.r_[starts[1:], len(idx)]
        for a, b in zip(starts, ends):
            if b - a < 2 or sz[a] <= 8:
                continue
            cols = np.arange(8, int(sz[a]))
            pos = offs[idx[a:b], None] + cols
            lanes = buf[pos].reshape(b - a, -1).copy().view("<u4")
            buf[pos] = np.cumsum(lanes, axis=0, dtype=np.uint32).view(np.uint8).reshape(b - a, -1)


def records_bytes(data, path):
    """The records of a trace file (its bytes `data`) as one plain stream, laid out as version 1
    wrote them: version 1 is that already; from version 2 the blocks are checked, decompressed and
    un-delta-coded.  Returns (stream, start, torn): records begin at stream[start:]; torn when the
    file ends inside a block (a torn last record of version 1 is left to the caller)."""
    hsize = struct.unpack_from("<I", data, 12)[0]
    version = struct.unpack_from("<I", data, 8)[0]
    if version < 2:
        return data, hsize, False
    out, off, n = [], hsize, len(data)
    while off < n:
        if off + _BLOCK.size > n:
            return b"".join(out), 0, True
        magic, codec, filt, flags, raw_size, data_size, nrec, crc = _BLOCK.unpack_from(data, off)
        if magic == 0 and raw_size == 0 and path.endswith(".partial"):
            break  # zeros after the last block of a file never closed
        if magic != _BLOCK_MAGIC or codec > 1 or filt > 1 or flags or raw_size > _BLOCK_MAX_RAW or raw_size % 8:
            raise TraceFormatError("%s: byte %d: not a valid block" % (path, off))
        if off + _BLOCK.size + data_size > n:
            return b"".join(out), 0, True
        payload = memoryview(data)[off + _BLOCK.size:off + _BLOCK.size + data_size]
        try:
            if zlib.crc32(payload) != crc:
                raise ValueError("checksum mismatch")
            raw = bytearray(zlib.decompress(payload, -15) if codec == 1 else payload)
            if len(raw) != raw_size:
                raise ValueError("decodes to %d bytes, header says %d" % (len(raw), raw_size))
        except (ValueError, zlib.error) as e:
            if off + _BLOCK.size + data_size == n and path.endswith(".partial"):
                return b"".join(out), 0, True  # the last block of a killed process did not reach the disk whole
            raise TraceFormatError("%s: block at byte %d: %s" % (path, off, e))
        offs, types, sizes, r = [], [], [], 0
        while r < raw_size:
            t, sz = struct.unpack_from("<HH", raw, r) if raw_size - r >= 8 else (0, 0)
            if sz < 8 or sz % 8 or r + sz > raw_size:
                raise TraceFormatError("%s: block at byte %d: record at byte %d of it has a bad size" % (path, off, r))
            offs.append(r)
            types.append(t)
            sizes.append(sz)
            r += sz
        if len(offs) != nrec:
            raise TraceFormatError("%s: block at byte %d: %d records, its header says %d" % (path, off, len(offs), nrec))
        if filt == 1:
            _undelta(raw, offs, types, sizes)
        out.append(bytes(raw))
        off += _BLOCK.size + data_size
    return b"".join(out), 0, False


def _files(path):
    if os.path.isfile(path):
        return [(os.path.basename(os.path.dirname(os.path.abspath(path))), path)]
    if not os.path.isdir(path):
        raise FileNotFoundError("%s: no such file or folder" % path)
    for n in ("trace.gtr", "trace.gtr.partial"):
        if os.path.isfile(os.path.join(path, n)):
            return [(os.path.basename(os.path.normpath(path)), os.path.join(path, n))]
    out = []
    for e in sorted(os.listdir(path)):
        for n in ("trace.gtr", "trace.gtr.partial"):
            p = os.path.join(path, e, n)
            if os.path.isfile(p):
                out.append((e, p))
                break
    if not out:
        raise FileNotFoundError("%s: no trace.gtr here or in its process folders (read_trace reads gputap "
                                "traces; use gputap analyze for nsys and PyTorch-profiler files)" % path)
    return out


def _read_one(proc, path):
    import numpy as np

    with open(path, "rb") as f:
        data = f.read()
    if len(data) < 64 or data[:8] != MAGIC:
        raise TraceFormatError("%s: not a gputap trace (bad magic at byte 0)" % path)
    (_, version, hsize, flags, pid, start, end, nrec, lost, dropped, pr, host) = _HDR.unpack_from(
        data.ljust(_HDR.size, b"\0"))
    if version > VERSION:
        raise TraceFormatError("%s: trace format version %d is newer than this reader knows (%d)"
                               % (path, version, VERSION))
    if hsize < 64 or hsize % 8:
        raise TraceFormatError("%s: byte 12: bad header size %d" % (path, hsize))
    data, start, torn = records_bytes(data, path)
    header = {"proc": proc, "path": path, "version": version, "pid": pid, "start_ns": start, "end_ns": end,
              "records": nrec, "lost_records": lost, "cupti_dropped": dropped,
              "trace_proc": pr.split(b"\0")[0].decode("utf-8", "replace"),
              "host": host.split(b"\0")[0].decode("utf-8", "replace"),
              "partial": bool(flags & 1) or path.endswith(".partial") or torn}
    strings = {}
    offs = {t: [] for t in _LAYOUT}
    names = {t: [] for t in _STRING_OFFSETS}
    tids = {t: [] for t in _LAYOUT}
    off, n = start, len(data)  # version 1: file offsets; from version 2: offsets in the decoded records
    while off + 8 <= n:
        rtype, size, tid = _REC.unpack_from(data, off)
        if size < 8 or size % 8:
            raise TraceFormatError("%s: byte %d: bad record size %d" % (path, off, size))
        if off + size > n:
            header["partial"] = True  # a torn last record
            break
        if rtype == 1:
            sid, ln = struct.unpack_from("<II", data, off + 8)
            if ln > size - 16 or sid == 0:
                raise TraceFormatError("%s: byte %d: bad string record" % (path, off))
            strings[sid] = data[off + 16:off + 16 + ln].decode("utf-8", "replace")
        elif rtype in _LAYOUT:
            if size < _LAYOUT[rtype][1]:
                raise TraceFormatError("%s: byte %d: record of type %d shorter than its layout" % (path, off, rtype))
            offs[rtype].append(off)
            tids[rtype].append(tid)
            so = _STRING_OFFSETS.get(rtype)
            if so:  # resolve now: an id may be defined again later with another text
                names[rtype].append(tuple(strings.get(struct.unpack_from("<I", data, off + o)[0], "") for o in so))
        off += size
    buf = np.frombuffer(data, dtype=np.uint8)
    tables = {}
    for rtype, (table, size, fields, sfields) in _LAYOUT.items():
        o = np.asarray(offs[rtype], dtype=np.int64)
        dt = np.dtype([("_h", "V8")] + fields)
        assert dt.itemsize == size, table
        rec = buf[(o[:, None] + np.arange(size)).ravel()].view(dt) if len(o) else np.zeros(0, dtype=dt)
        cols = {"proc": np.full(len(o), proc, dtype=object), "tid": np.asarray(tids[rtype], dtype=np.uint32)}
        for name, _ in fields:
            if name.startswith("_") or name in sfields:
                continue
            cols[name] = rec[name]
        for i, sf in enumerate(sfields):
            cols[sf[:-3]] = [t[i] for t in names[rtype]]
        tables[table] = cols
    return header, tables


class Trace:
    """The tables of one run (every process) or one trace."""

    TABLES = ("kernels", "copies", "memsets", "api", "ranges", "counters", "memory", "nccl")

    def __init__(self, headers, cols):
        import pandas as pd

        self.header = headers
        for t in self.TABLES:
            df = pd.DataFrame(cols[t])
            if "start_ns" in df and "end_ns" in df:
                df["duration_ns"] = (df["end_ns"].astype("int64") - df["start_ns"].astype("int64"))
            if t == "copies" and len(df):
                df["kind"] = df["copy_kind"].map(_COPY_KIND).fillna("unknown")
            if t == "api" and len(df):
                df["domain"] = df["domain"].map({1: "driver", 2: "runtime", 3: "gputap"}).fillna("unknown")
            if t == "nccl" and len(df):
                df.insert(1, "comm", ["0x%016x" % int(v) for v in df["comm_hash"]])
            setattr(self, t, df)

    def to_arrow(self):
        import pyarrow as pa

        return {t: pa.Table.from_pandas(getattr(self, t), preserve_index=False) for t in self.TABLES}

    def __repr__(self):
        return "<gputap trace: %s>" % ", ".join("%d %s" % (len(getattr(self, t)), t) for t in self.TABLES)


def read_trace(path):
    """Read a gputap run folder, process folder or trace.gtr into pandas tables (see the module doc)."""
    headers, merged = [], None
    for proc, p in _files(path):
        h, cols = _read_one(proc, p)
        headers.append(h)
        if merged is None:
            merged = {t: {k: list(v) if not hasattr(v, "dtype") else [v] for k, v in c.items()} for t, c in cols.items()}
            continue
        for t, c in cols.items():
            for k, v in c.items():
                merged[t][k].append(v) if hasattr(v, "dtype") else merged[t][k].extend(v)
    import numpy as np

    for t, c in merged.items():
        for k, v in list(c.items()):
            if v and hasattr(v[0], "dtype"):
                c[k] = np.concatenate(v)
    return Trace(headers, merged)
