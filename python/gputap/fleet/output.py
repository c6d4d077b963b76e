"""The files of `gputap fleet -o DIR`: Parquet tables, summary.json, summary.txt, report.html.

Each file is written as NAME.partial and renamed when complete, as every gputap output."""
import html
import json
import math
import os

import numpy as np



def _clean(o):
    if isinstance(o, float):
        return o if math.isfinite(o) else None
    if isinstance(o, dict):
        return {k: _clean(v) for k, v in o.items()}
    if isinstance(o, (list, tuple)):
        return [_clean(v) for v in o]
    if hasattr(o, "item"):  # numpy scalars
        return _clean(o.item())
    return o


def _atomic(path, write):
    tmp = path + ".partial"
    write(tmp)
    os.replace(tmp, path)


def _arrow_type(pa, col):
    """The Arrow type of a numpy column (list columns come with a schema: collectives_schema)."""
    if col.dtype == object:
        return pa.string()
    return pa.from_numpy_dtype(col.dtype)


def _buf(pa, a, dtype):
    return pa.py_buffer(np.ascontiguousarray(a, dtype=dtype))


def _arrow(pa, col, typ):
    """One column as an Arrow array, built from its buffers: pyarrow's converters (pa.array) import
    pandas, half a second that fleet's command does not otherwise spend."""
    if pa.types.is_list(typ):
        n = np.fromiter((len(v) for v in col), dtype=np.int64, count=len(col))
        flat = np.fromiter((x for v in col for x in v), dtype=typ.value_type.to_pandas_dtype(), count=int(n.sum()))
        off = np.zeros(len(col) + 1, np.int32)
        np.cumsum(n, out=off[1:])
        return pa.Array.from_buffers(typ, len(col), [None, _buf(pa, off, np.int32)],
                                     children=[_arrow(pa, flat, typ.value_type)])
    if pa.types.is_string(typ):
        data = [v.encode("utf-8", "replace") for v in np.asarray(col, dtype=object).tolist()]
        off = np.zeros(len(data) + 1, np.int64)
        np.cumsum(np.fromiter(map(len, data), dtype=np.int64, count=len(data)), out=off[1:])
        if off[-1] >= 2 ** 31:
            typ = pa.large_string()
        return pa.Array.from_buffers(typ, len(data), [None, _buf(pa, off, np.int64 if typ == pa.large_string()
                                                                  else np.int32), pa.py_buffer(b"".join(data))])
    if pa.types.is_boolean(typ):
        return pa.Array.from_buffers(typ, len(col), [None, pa.py_buffer(np.packbits(np.asarray(col, bool),
                                                                                   bitorder="little"))])
    return pa.Array.from_buffers(typ, len(col), [None, _buf(pa, col, typ.to_pandas_dtype())])


def _parquet(t, path, schema=None):
    """A table of numpy columns (columns.py) as a Parquet file; strings as strings, each column's type
    the same with or without rows."""
    import pyarrow as pa
    import pyarrow.parquet as pq  # only when files are written: a tenth of a second to import

    if schema is None:
        schema = pa.schema([(k, _arrow_type(pa, v)) for k, v in t.items()])
    arrays = [_arrow(pa, t[f.name], f.type) for f in schema]
    table = pa.Table.from_arrays(arrays, names=[f.name for f in schema])
    _atomic(path, lambda p: pq.write_table(table, p))


def collectives_schema():
    import pyarrow as pa

    return pa.schema([
        ("comm", pa.string()), ("seq", pa.int64()), ("iteration", pa.int64()), ("name", pa.string()),
        ("count", pa.int64()), ("dtype", pa.string()), ("bytes", pa.int64()), ("algo", pa.string()), ("proto", pa.string()), ("match", pa.string()),
        ("ranks", pa.list_(pa.int64())), ("arrival_ms", pa.list_(pa.float64())), ("skew_ms", pa.float64()),
        ("wait_ms", pa.float64()), ("late_rank", pa.int64()), ("first_rank", pa.int64()), ("late_ms", pa.float64()),
        ("held_ms", pa.float64()), ("is_late", pa.bool_()), ("late_ranks", pa.list_(pa.int64())),
        ("late_by_ms", pa.list_(pa.float64())), ("cause", pa.string()),
        ("duration_ms", pa.float64()), ("end_spread_ms", pa.float64()), ("start_ns", pa.int64()),
    ])


TEXT_ROWS = 20  # rows per table of the text summary (the C command's); summary.json and the Parquet files hold the rest


def _bars(ranks, width=760):
    """An SVG of each rank's time not waiting (dark) and waiting (light), in rank order (`ranks`: columns
    rank, work_ms, wait_ms, as a dict of arrays or a DataFrame)."""
    work = np.asarray(ranks["work_ms"], dtype=float)
    wait = np.asarray(ranks["wait_ms"], dtype=float)
    rk = np.asarray(ranks["rank"]).astype(int)
    n = len(work)
    if not n:
        return ""
    top = max(float((work + wait).max()), 1e-9)
    bw = (width - 60) / n  # a fraction of a pixel for thousands of ranks: every bar inside the chart
    h = 160
    parts = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" role="img">' % (width, h + 30)]
    for i, (rank, wk, wt) in enumerate(zip(rk.tolist(), work.tolist(), wait.tolist())):
        x = 50 + i * bw
        hw = h * wk / top
        hv = h * wt / top
        parts.append('<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="#2b6cb0"><title>rank %d: %.3f ms '
                     'not waiting</title></rect>' % (x, h - hw, bw * 0.9, hw, rank, wk))
        parts.append('<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="#bee3f8"><title>rank %d: %.3f ms '
                     'waiting</title></rect>' % (x, max(h - hw - hv, 0.0), bw * 0.9, hv, rank, wt))
    parts.append('<text x="0" y="12" font-size="11">%.1f ms</text><text x="0" y="%d" font-size="11">0</text>' % (top, h))
    parts.append('<text x="50" y="%d" font-size="11">ranks %d..%d</text></svg>' % (h + 20, rk.min(), rk.max()))
    return "".join(parts)


def report_html(res):
    s = res.summary

    def table(rows, cols):
        out = ["<table><tr>%s</tr>" % "".join("<th>%s</th>" % html.escape(c) for c in cols)]
        for r in rows:
            out.append("<tr>%s</tr>" % "".join("<td>%s</td>" % html.escape(
                ("%.3f" % r[c]) if isinstance(r.get(c), float) else str(r.get(c, ""))) for c in cols))
        out.append("</table>")
        return "".join(out)

    body = ["<h2>Fleet</h2>", "<p>%s</p>" % html.escape(res.headline[len("gputap fleet: "):])]
    body.append("<h3>Time per rank: not waiting (dark) and waiting in collectives (light)</h3>" + _bars(res.tables["ranks"]))
    if s["stragglers"]:
        body.append("<h3>Stragglers</h3>" + table(s["stragglers"], ["rank", "host", "cost_ms", "pattern", "cause",
                                                                     "late_collectives", "iterations_late", "reason"]))
    if s["late_collectives"]:
        body.append("<h3>Late collectives</h3>" + table(s["late_collectives"],
                                                         ["iteration", "comm", "seq", "name", "count", "bytes",
                                                          "late_rank",
                                                          "late_ms", "held_ms", "cause"]))
    if s["per_iteration"]:
        body.append("<h3>Per iteration</h3>" + table(s["per_iteration"][:1000], [
            "iteration", "late_rank", "late_ms", "cause", "slowest_rank", "slowest_ms", "fastest_rank", "fastest_ms",
            "spread_ms"]))
    body.append("<h3>Clocks</h3>" + table(s["clock"], ["host", "offset_ms", "source", "rms_us", "p95_us",
                                                       "collectives"]))
    if s["outliers"]:
        body.append("<h3>Outliers</h3>" + table(s["outliers"], ["rank", "gpu", "metric", "value", "median", "reason"]))
    if s["failed"]:
        body.append("<h3>Left out</h3>" + table(s["failed"], ["path", "error"]))
    if s.get("partial"):
        body.append("<h3>Partial traces (left out of the statistics)</h3>" + table(s["partial"], ["path", "reason"]))
    if s.get("warnings"):
        body.append("<h3>Warnings</h3><ul>%s</ul>" % "".join("<li>%s</li>" % html.escape(w) for w in s["warnings"]))
    return ("<!doctype html><html><head><meta charset=\"utf-8\"><title>gputap fleet</title><style>"
            "body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}td,th{border:1px solid #ccc;"
            "padding:2px 6px;font-size:13px}</style></head><body><section id=\"fleet\">%s</section></body></html>\n"
            % "".join(body))


def write_all(res, out):
    os.makedirs(out, exist_ok=True)
    _parquet(res.tables["ranks"], os.path.join(out, "ranks.parquet"))
    _parquet(res.tables["iterations"], os.path.join(out, "iterations.parquet"))
    _parquet(res.tables["collectives"], os.path.join(out, "collectives.parquet"), schema=collectives_schema())

    def wj(p):
        with open(p, "w") as f:
            json.dump(_clean(res.summary), f, indent=2)
            f.write("\n")

    _atomic(os.path.join(out, "summary.json"), wj)
    text = res.text

    def wt(p):
        with open(p, "w") as f:
            f.write(text)

    _atomic(os.path.join(out, "summary.txt"), wt)
    page = report_html(res)

    def wh(p):
        with open(p, "w") as f:
            f.write(page)

    _atomic(os.path.join(out, "report.html"), wh)
