"""The files of `gputap fleet -o DIR`: Parquet tables, summary.json, summary.txt, report.html.

Each file is written as NAME.partial and renamed when complete, as every gputap output."""
import html
import json
import math
import os

import numpy as np

from gputap.fleet.columns import nrows


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


TEXT_ROWS = 20  # rows per table of the text summary; summary.json and the Parquet files hold the rest


def _size(x):
    """A collective's message: bytes when the records give the data type, else elements ("" unknown)."""
    b, n = x.get("bytes") or 0, x.get("count") or 0
    if b:
        for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
            if b >= scale:
                return "%.1f %s" % (b / scale, unit)
        return "%d B" % b
    return "%d el" % n if n else "-"


def _more(n, shown, where):
    return ["  ... %d more in %s" % (n - shown, where)] if n > shown else []


def headline(s):
    if s["hosts"]:
        where = "on %d host%s" % (len(s["hosts"]), "" if len(s["hosts"]) == 1 else "s")
    else:
        where = "(the traces do not name their machines: each rank is its own clock)"
    by = s.get("collective_rows_by_match") or {}
    how = {"nccl": "NCCL's profiler plugin", "trace": "the trace's sequence numbers", "order": "order"}
    m = ", ".join("%s %d rows" % (how.get(k, k), v) for k, v in sorted(by.items(), key=lambda kv: -kv[1]))
    return "gputap fleet: %d ranks %s, %d iterations, %d collectives matched across ranks%s" % (
        s["ranks"], where, s["iterations"], s["collectives"], (" (by %s)" % m) if m else "")


def text_summary(res):
    s = res.summary
    r = res.tables["ranks"]
    lines = [headline(s)]
    if s["collectives"]:
        lines.append("late = arriving more than %.3f ms after the others (%.0f x their usual scatter of %.3f ms, "
                     "at least %.1f ms)" % (s["late_threshold_ms"], 6, s["arrival_noise_ms"], 0.1))
    for w in s.get("warnings") or []:
        lines.append("warning: " + w)
    if s["failed"]:
        lines += ["", "Left out (%d):" % len(s["failed"])]
        lines += ["  %s: %s" % (f["path"], f["error"]) for f in s["failed"][:TEXT_ROWS]]
        lines += _more(len(s["failed"]), TEXT_ROWS, "summary.json")
    if s.get("partial"):
        lines += ["", "Partial traces, left out of the statistics (%d):" % len(s["partial"])]
        lines += ["  %s: %s" % (f["path"], f["reason"]) for f in s["partial"][:TEXT_ROWS]]
        lines += _more(len(s["partial"]), TEXT_ROWS, "summary.json")
    if s.get("skipped"):
        lines += ["", "Skipped, no GPU work (a launcher) (%d): %s%s" % (
            len(s["skipped"]), ", ".join(x["path"] for x in s["skipped"][:5]), " ..." if len(s["skipped"]) > 5 else "")]
    st = s.get("stragglers") or []
    if st:
        its = bool(s.get("iterations"))
        lines += ["", "Stragglers, costliest first (cost: time the others waited for the rank alone%s):" % (
                      "; ranked by its part in the iterations" if its else ""),
                  "  %6s %-14s %11s %11s %13s %11s %10s %-12s %-18s %11s" % (
                      "rank", "host", "cost ms", "in its. ms", "per late it.", "late colls", "late its", "pattern",
                      "cause", "max late ms")]
        for x in st[:TEXT_ROWS]:
            lines.append("  %6d %-14s %11.3f %11s %13.3f %11s %10s %-12s %-18s %11.3f" % (
                x["rank"], (x["host"] or "-")[:14], x["cost_ms"],
                "%.3f" % x["cost_in_iterations_ms"] if its else "-", x["cost_per_late_iteration_ms"],
                "%d/%d" % (x["late_collectives"], x["collectives"]), "%d/%d" % (x["iterations_late"], x["iterations"]),
                x["pattern"] or "-", x["cause"] or "-", x["max_late_ms"]))
        lines += _more(len(st), TEXT_ROWS, "summary.json (stragglers) and ranks.parquet")
    lc = s["late_collectives"]
    if lc:
        lines += ["", "Late collectives, longest hold first (%d in all; each in collectives.parquet):"
                  % s.get("late_collectives_total", len(lc)),
                  "  %5s %-20s %7s %-14s %10s %6s %9s %9s %-18s %s" % (
                      "iter", "comm", "seq", "collective", "size", "rank", "late ms", "held ms", "cause",
                      "also late (rank: ms)")]
        for x in lc[:TEXT_ROWS]:
            also = " ".join("%d:%.3f" % (a, b) for a, b in x["late_ranks"][1:4])
            lines.append("  %5d %-20s %7d %-14s %10s %6d %9.3f %9.3f %-18s %s" % (
                x["iteration"], x["comm"][:20], x["seq"], x["name"][:14], _size(x), x["late_rank"], x["late_ms"],
                x["held_ms"], x["cause"] or "-", also))
        lines += _more(s.get("late_collectives_total", len(lc)), TEXT_ROWS, "collectives.parquet (is_late)")
    pi = s["per_iteration"]
    if pi:
        shown = pi
        if len(pi) > TEXT_ROWS:
            keep = sorted(pi, key=lambda x: -x["cost_ms"])[:TEXT_ROWS]
            shown = sorted(keep, key=lambda x: x["iteration"])
        host = dict(zip(r["rank"].tolist(), r["host"].tolist())) if nrows(r) else {}
        lines += ["", "Per iteration (time not waiting for other ranks, ms)%s:" % (
            "; the %d with the most waiting" % TEXT_ROWS if len(pi) > TEXT_ROWS else ""),
            "  %5s %6s %-14s %9s %-18s %7s %10s %7s %10s %10s" % (
                "iter", "late", "host", "late ms", "cause", "slowest", "ms", "fastest", "ms", "spread")]
        for x in shown:
            lr = x["late_rank"]
            lines.append("  %5d %6s %-14s %9.3f %-18s %7d %10.3f %7d %10.3f %10.3f" % (
                x["iteration"], lr if lr >= 0 else "-", (host.get(lr) or "-")[:14] if lr >= 0 else "-", x["late_ms"],
                x["cause"] or "-", x["slowest_rank"], x["slowest_ms"], x["fastest_rank"], x["fastest_ms"],
                x["spread_ms"]))
        lines += _more(len(pi), len(shown), "summary.json (per_iteration) and iterations.parquet")
    if nrows(r):
        lines += ["", "Per rank (ms)       median        min        max"]
        for col in ("span_ms", "busy_ms", "idle_ms", "compute_ms", "comm_ms", "exposed_comm_ms", "wait_ms", "work_ms"):
            v = np.asarray(r[col], dtype=float)
            lines.append("  %-16s %10.3f %10.3f %10.3f" % (col[:-3], np.nanmedian(v), np.nanmin(v), np.nanmax(v)))
    if s["clock"] and len(s["clock"]) > 1:
        cl = s["clock"]
        shown = cl[:1] + sorted(cl[1:], key=lambda c: -c.get("p95_us", 0))[:TEXT_ROWS // 2 - 1]
        lines += ["", "Clocks (offset from %s; fit = residual of the collectives' common completion; worst fits):"
                  % cl[0]["host"]]
        for c in shown:
            fit = ("rms %.1f us, p95 %.1f us over %d collective ends" % (c["rms_us"], c["p95_us"], c["collectives"])
                   if "rms_us" in c else c["source"])
            lines.append("  %-20s %+12.3f ms  %s" % (c["host"] or "?", c["offset_ms"], fit))
        lines += _more(len(cl), len(shown), "summary.json (clock)")
    if s["outliers"]:
        lines += ["", "Outliers:"]
        lines += ["  rank %d %s: %s" % (o["rank"], o["gpu"], o["reason"]) for o in s["outliers"][:TEXT_ROWS]]
        lines += _more(len(s["outliers"]), TEXT_ROWS, "summary.json (outliers)")
    return "\n".join(lines) + "\n"


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

    body = ["<h2>Fleet</h2>", "<p>%s</p>" % html.escape(headline(s)[len("gputap fleet: "):])]
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
    text = text_summary(res)

    def wt(p):
        with open(p, "w") as f:
            f.write(text)

    _atomic(os.path.join(out, "summary.txt"), wt)
    page = report_html(res)

    def wh(p):
        with open(p, "w") as f:
            f.write(page)

    _atomic(os.path.join(out, "report.html"), wh)
