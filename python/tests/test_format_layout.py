"""The package's two restatements of the binary trace's layout (gputap/readtrace.py's tables, which
read traces, and gputap/fleet/gtrwrite.py, which writes them), and the GPU tests' reader
(tests/gpu/gtr.py), held against the C header itself:
tests/format/layout.c, built here with the C compiler, prints include/gputap/format.h's sizes and
offsets, and every table entry must agree with it."""
import os
import struct
import subprocess

import pytest

from gputap import readtrace
from gputap.fleet import gtrwrite

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, "..", ".."))

# readtrace's table name -> the record's struct name (struct gt_rec_<name>)
TABLES = {"api": "api", "kernels": "kernel", "copies": "memcpy", "memsets": "memset", "memory": "memory",
          "ranges": "range", "counters": "counter", "nccl": "nccl_coll"}
# an array field of the C struct -> the names readtrace gives its elements
ARRAYS = {"grid": ("grid_x", "grid_y", "grid_z"), "block": ("block_x", "block_y", "block_z")}


@pytest.fixture(scope="module")
def layout(tmp_path_factory):
    """{'const': {name: text}, 'types': {name: (number, v1, size, thread)},
    'structs': {name: (size, [(field, offset, size, kind, count)])}} as the C compiler sees format.h."""
    exe = str(tmp_path_factory.mktemp("layout") / "layout")
    cc = os.environ.get("CC") or "cc"
    subprocess.run([cc, "-std=gnu11", "-I" + os.path.join(REPO, "include"), "-o", exe,
                    os.path.join(REPO, "tests", "format", "layout.c")], check=True)
    p = subprocess.run([exe], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    out = {"const": {}, "types": {}, "structs": {}}
    cur = None
    for line in p.stdout.splitlines():
        w = line.split()
        if w[0] == "const":
            out["const"][w[1]] = w[2]
        elif w[0] == "type":
            out["types"][w[2]] = (int(w[1]), int(w[3]), int(w[4]), int(w[5]))
        elif w[0] == "struct":
            cur = out["structs"][w[1]] = (int(w[2]), [])
        elif w[0] == "field":
            cur[1].append((w[1], int(w[2]), int(w[3]), w[4], int(w[5])))
    return out


def _struct_items(fmt):
    """(offset, size, code) of each item of a struct module format (no native alignment: '<')."""
    assert fmt[0] == "<"
    items, off, i = [], 0, 1
    while i < len(fmt):
        n = ""
        while fmt[i].isdigit():
            n += fmt[i]
            i += 1
        code = fmt[i]
        i += 1
        reps = [(n or "1", code)] if code == "s" else [("1", code)] * int(n or 1)  # 'x': a pad byte each
        for k, c in reps:
            size = struct.calcsize("<" + k + c)
            items.append((off, size, c))
            off += size
    return items


def _check_struct_format(fmt, fields, base=0):
    """A struct module format lays out `fields` (C's, from offset `base` on) item for item: offsets,
    sizes, signedness."""
    items = [(base + o, size, c) for o, size, c in _struct_items(fmt)]
    flat = []
    for name, off, size, kind, count in fields:
        if kind == "s":
            flat.append((off, size, "s"))
        else:
            flat += [(off + k * (size // count), size // count, kind) for k in range(count)]
    assert [(o, s) for o, s, _ in items] == [(o, s) for o, s, _ in flat]
    for (_, _, c), (_, _, kind) in zip(items, flat):
        want = {"s": "s", "u": "BHIQx", "i": "bhiq", "f": "d"}[kind]
        assert c in want, (c, kind)


def test_every_type_has_its_struct(layout):
    assert layout["types"], "no record type printed"
    for name, (num, v1, size, thread) in layout["types"].items():
        assert "gt_rec_" + name in layout["structs"], "tests/format/layout.c lists no fields of " + name
        assert layout["structs"]["gt_rec_" + name][0] == size
        assert v1 <= size and size % 8 == 0 and v1 % 8 == 0


def test_readtrace_constants(layout):
    c = layout["const"]
    assert readtrace.MAGIC.decode() == c["GT_TRACE_MAGIC"]
    assert readtrace.VERSION == int(c["GT_TRACE_VERSION"])
    assert readtrace._BLOCK_MAGIC == int(c["GT_BLOCK_MAGIC"])
    assert readtrace._BLOCK_MAX_RAW == int(c["GT_BLOCK_MAX_RAW"])


def test_readtrace_headers(layout):
    s = layout["structs"]
    for fmt, name in ((readtrace._HDR.format, "gt_file_header"), (readtrace._REC.format, "gt_rec_hdr"),
                      (readtrace._BLOCK.format, "gt_block_hdr")):
        size, fields = s[name]
        assert struct.calcsize(fmt) == size, name
        _check_struct_format(fmt, fields)


def test_readtrace_record_tables(layout):
    types, structs = layout["types"], layout["structs"]
    assert sorted(TABLES) == sorted(t[0] for t in readtrace._LAYOUT.values())
    for rtype, (table, min_size, fields, string_fields) in readtrace._LAYOUT.items():
        cname = TABLES[table]
        num, v1, size, _ = types[cname]
        assert rtype == num, table
        assert min_size == v1, table
        # C's fields after the record header, array elements named as readtrace names them
        want = []
        for name, off, fsize, kind, count in structs["gt_rec_" + cname][1]:
            if name.startswith("h."):
                continue
            if count > 1:
                assert name in ARRAYS, (table, name)
                want += [(e, off + k * (fsize // count), fsize // count, kind) for k, e in enumerate(ARRAYS[name])]
            else:
                want.append((name, off, fsize, kind))
        got, off = [], 8
        for name, dt in fields:
            fsize = int(dt.lstrip("<")[1:])
            got.append((name.lstrip("_"), off, fsize, dt.lstrip("<")[0]))
            off += fsize
        assert got == want, table
        assert off == size, table
        names = {n: o for n, o, _, _ in want}
        for sf in string_fields:
            assert sf in names, (table, sf)
        assert readtrace._STRING_OFFSETS.get(rtype, ()) == tuple(names[sf] for sf in string_fields), table


def test_gpu_test_reader(layout):
    """tests/gpu/gtr.py, the GPU tests' own small reader: its record formats against the header."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("gtr", os.path.join(REPO, "tests", "gpu", "gtr.py"))
    gtr = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gtr)
    types, structs = layout["types"], layout["structs"]
    assert gtr.HDR.format == readtrace._HDR.format and gtr.REC.format == readtrace._REC.format
    for rtype, (name, fmt, fields) in gtr.LAYOUT.items():
        assert types[name][0] == rtype, name
        size, cfields = structs["gt_rec_" + name]
        assert 8 + struct.calcsize(fmt) == size, name
        _check_struct_format(fmt, [f for f in cfields if not f[0].startswith("h.")], base=8)
        assert len(fields.split()) == len(struct.unpack(fmt, bytes(struct.calcsize(fmt)))), name


def _records(path):
    """(header bytes, [(type, size, tid, record bytes)]) of a version-1 trace."""
    with open(path, "rb") as f:
        data = f.read()
    hsize = struct.unpack_from("<I", data, 12)[0]
    recs, off = [], hsize
    while off < len(data):
        t, sz, tid = struct.unpack_from("<HHI", data, off)
        recs.append((t, sz, tid, data[off:off + sz]))
        off += sz
    return data[:hsize], recs


def _field(layout, sname, rec, name):
    size, fields = layout["structs"][sname]
    for n, off, fsize, kind, count in fields:
        if n == name:
            if kind == "s":
                return rec[off:off + fsize].rstrip(b"\0")
            code = {1: "b", 2: "h", 4: "i", 8: "q"}[fsize // count]
            code = {"u": code.upper(), "i": code, "f": "d"}[kind]
            v = struct.unpack_from("<%d%s" % (count, code), rec, off)
            return v[0] if count == 1 else v
    raise KeyError(name)


def test_gtrwrite_against_header(layout, tmp_path):
    types = layout["types"]
    assert gtrwrite.MAGIC.decode() == layout["const"]["GT_TRACE_MAGIC"]
    assert gtrwrite.HEADER_SIZE == layout["structs"]["gt_file_header"][0]
    assert 1 <= gtrwrite.VERSION <= int(layout["const"]["GT_TRACE_VERSION"])
    for const, cname in (("REC_STRING", "string"), ("REC_API", "api"), ("REC_KERNEL", "kernel"),
                         ("REC_MEMCPY", "memcpy"), ("REC_RANGE", "range"), ("REC_NCCL_COLL", "nccl_coll")):
        assert getattr(gtrwrite, const) == types[cname][0], const

    path = str(tmp_path / "trace.gtr")
    w = gtrwrite.TraceWriter(path, "rank3", "node7", pid=4321, start_ns=1000)
    w.api("cuLaunchKernel", 1100, 1200, 77, tid=9)
    w.kernel("gemm", 2, 13, 1300, 1400, 77)
    w.memcpy(1, 3, 14, 1500, 1600, 4096, 78)
    w.range("step", 1050, 1700, tid=9, kind=2)
    w.nccl_coll(0xABCDEF, 5, 1800, 1900, "AllReduce", "RING", "SIMPLE", 1 << 20, 1, 4, tid=9)
    w.close()
    hdr, recs = _records(path)
    H = "gt_file_header"
    assert _field(layout, H, hdr, "magic") == b"GPUTAPTR"
    assert _field(layout, H, hdr, "version") == gtrwrite.VERSION
    assert _field(layout, H, hdr, "header_size") == len(hdr)
    assert _field(layout, H, hdr, "pid") == 4321
    assert _field(layout, H, hdr, "start_ns") == 1000
    assert _field(layout, H, hdr, "end_ns") == w.end_ns == 1400  # the writer moves it on API calls and kernels
    assert _field(layout, H, hdr, "records") == len(recs)
    assert _field(layout, H, hdr, "proc") == b"rank3"
    assert _field(layout, H, hdr, "host") == b"node7"

    num = {v[0]: k for k, v in types.items()}
    strings, seen = {}, []
    for t, sz, tid, rec in recs:
        cname = num[t]
        S = "gt_rec_" + cname
        if cname == "string":
            sid, n = _field(layout, S, rec, "id"), _field(layout, S, rec, "len")
            strings[sid] = rec[layout["structs"][S][0]:layout["structs"][S][0] + n].decode()
            continue
        assert sz == layout["structs"][S][0], cname  # written at today's full size
        f = lambda name: _field(layout, S, rec, name)  # noqa: E731
        seen.append(cname)
        if cname == "api":
            assert (strings[f("name_id")], f("domain"), f("copy_kind"), f("start_ns"), f("end_ns"),
                    f("corr_id"), tid) == ("cuLaunchKernel", 2, -1, 1100, 1200, 77, 9)
        elif cname == "kernel":
            assert (strings[f("name_id")], f("device"), f("stream"), f("start_ns"), f("end_ns"), f("corr_id"),
                    f("block"), tid) == ("gemm", 2, 13, 1300, 1400, 77, (128, 1, 1), 0)
        elif cname == "memcpy":
            assert (f("copy_kind"), f("device"), f("stream"), f("start_ns"), f("end_ns"), f("bytes"), f("corr_id"),
                    f("dst_device")) == (1, 3, 14, 1500, 1600, 4096, 78, 3)
        elif cname == "range":
            assert (strings[f("name_id")], f("kind"), f("end_tid"), f("start_ns"), f("end_ns"), f("range_id"),
                    tid) == ("step", 2, 9, 1050, 1700, 1, 9)
        elif cname == "nccl_coll":
            assert (f("comm_hash"), f("seq"), f("start_ns"), f("end_ns"), f("count"), strings[f("func_id")],
                    strings[f("algo_id")], strings[f("proto_id")], strings[f("dtype_id")], f("rank"), f("nranks"),
                    f("root"), f("nchannels"), f("nwarps"), f("plugin_version")) == \
                (0xABCDEF, 5, 1800, 1900, 1 << 20, "AllReduce", "RING", "SIMPLE", "ncclFloat32", 1, 4, -1, 16, 8, 4)
    assert seen == ["api", "kernel", "memcpy", "range", "nccl_coll"]
