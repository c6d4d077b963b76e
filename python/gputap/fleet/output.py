"""The files of `gputap fleet -o DIR`: Parquet tables, summary.json, summary.txt, report.html.

Each file is written as NAME.partial and renamed when complete, as every gputap output."""
import html
import json
import math
import os

import pyarrow as pa
import pyarrow.parquet as pq


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


def _parquet(df, path, schema=None):
    table = pa.Table.from_pandas(df, schema=schema, preserve_index=False)
    _atomic(path, lambda p: pq.write_table(table, p))


def collectives_schema():
    return pa.schema([
        ("comm", pa.string()), ("seq", pa.int64()), ("iteration", pa.int64()), ("name", pa.string()),
        ("algo", pa.string()), ("proto", pa.string()), ("match", pa.string()),
        ("ranks", pa.list_(pa.int64())), ("arrival_ms", pa.list_(pa.float64())), ("skew_ms", pa.float64()),
        ("wait_ms", pa.float64()), ("late_rank", pa.int64()), ("first_rank", pa.int64()),
        ("duration_ms", pa.float64()), ("end_spread_ms", pa.float64()), ("start_ns", pa.int64()),
    ])


def text_summary(res):
    s = res.summary
    r = res.ranks
    lines = ["gputap fleet: %d ranks on %d hosts, %d iterations, %d collectives matched across ranks" % (
        s["ranks"], len(s["hosts"]), s["iterations"], s["collectives"])]
    if s["failed"]:
        lines.append("")
        lines.append("Left out (%d):" % len(s["failed"]))
        lines += ["  %s: %s" % (f["path"], f["error"]) for f in s["failed"]]
    if len(r):
        lines.append("")
        lines.append("Per rank (ms)       median        min        max")
        for col in ("span_ms", "busy_ms", "idle_ms", "compute_ms", "comm_ms", "exposed_comm_ms", "wait_ms", "work_ms"):
            lines.append("  %-16s %10.3f %10.3f %10.3f" % (col[:-3], r[col].median(), r[col].min(), r[col].max()))
    if s["slow_ranks"]:
        lines.append("")
        lines.append("Slow ranks, slowest first:")
        lines += ["  rank %d (%s): %s" % (x["rank"], x["host"] or "?", x["reason"]) for x in s["slow_ranks"][:20]]
    if s["late_collectives"]:
        lines.append("")
        lines.append("Late collectives (arrival skew after clock alignment), largest first:")
        lines += ["  iteration %d, %s seq %d (%s): rank %d arrived %.3f ms after the first (usual %.3f ms)" % (
            x["iteration"], x["comm"], x["seq"], x["name"], x["late_rank"], x["skew_ms"], x["typical_skew_ms"])
            for x in s["late_collectives"][:20]]
    if s["per_iteration"]:
        lines.append("")
        lines.append("Per iteration (time not waiting for other ranks, ms):")
        lines.append("  iter   slowest rank        fastest rank        spread  phase of the slowest")
        for x in s["per_iteration"]:
            lines.append("  %4d   %5d %10.3f   %5d %10.3f  %10.3f  %s" % (
                x["iteration"], x["slowest_rank"], x["slowest_ms"], x["fastest_rank"], x["fastest_ms"],
                x["spread_ms"], x["phase"]))
    if s["clock"] and len(s["clock"]) > 1:
        lines.append("")
        lines.append("Clocks (offset from %s; fit = residual of the collectives' common completion):" % s["clock"][0]["host"])
        lines.append("  (a clock is a machine, or a rank when the trace does not name its machine)")
        for c in s["clock"]:
            fit = ("rms %.1f us, p95 %.1f us over %d collective ends" % (c["rms_us"], c["p95_us"], c["collectives"])
                   if "rms_us" in c else c["source"])
            lines.append("  %-20s %+12.3f ms  %s" % (c["host"] or "?", c["offset_ms"], fit))
    if s["outliers"]:
        lines.append("")
        lines.append("Outliers:")
        lines += ["  rank %d %s: %s" % (o["rank"], o["gpu"], o["reason"]) for o in s["outliers"][:40]]
    return "\n".join(lines) + "\n"


def _bars(ranks, width=760):
    """An SVG of each rank's time not waiting (dark) and waiting (light), in rank order."""
    if not len(ranks):
        return ""
    n = len(ranks)
    top = max(float((ranks["work_ms"] + ranks["wait_ms"]).max()), 1e-9)
    bw = max(1.0, (width - 60) / n)
    h = 160
    parts = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" role="img">' % (width, h + 30)]
    for i, (_, r) in enumerate(ranks.iterrows()):
        x = 50 + i * bw
        hw = h * float(r["work_ms"]) / top
        hv = h * float(r["wait_ms"]) / top
        parts.append('<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="#2b6cb0"><title>rank %d: %.3f ms '
                     'not waiting</title></rect>' % (x, h - hw, max(bw - 1, 0.5), hw, r["rank"], r["work_ms"]))
        parts.append('<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="#bee3f8"><title>rank %d: %.3f ms '
                     'waiting</title></rect>' % (x, h - hw - hv, max(bw - 1, 0.5), hv, r["rank"], r["wait_ms"]))
    parts.append('<text x="0" y="12" font-size="11">%.1f ms</text><text x="0" y="%d" font-size="11">0</text>' % (top, h))
    parts.append('<text x="50" y="%d" font-size="11">ranks %d..%d</text></svg>' % (h + 20, ranks["rank"].min(),
                                                                                   ranks["rank"].max()))
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

    body = ["<h2>Fleet</h2>", "<p>%d ranks on %d hosts, %d iterations, %d collectives.</p>" % (
        s["ranks"], len(s["hosts"]), s["iterations"], s["collectives"])]
    body.append("<h3>Time per rank: not waiting (dark) and waiting in collectives (light)</h3>" + _bars(res.ranks))
    if s["slow_ranks"]:
        body.append("<h3>Slow ranks</h3>" + table(s["slow_ranks"], ["rank", "host", "work_ms", "reason"]))
    if s["late_collectives"]:
        body.append("<h3>Late collectives</h3>" + table(s["late_collectives"],
                                                         ["iteration", "comm", "seq", "name", "late_rank", "skew_ms"]))
    if s["per_iteration"]:
        body.append("<h3>Per iteration</h3>" + table(s["per_iteration"], ["iteration", "slowest_rank", "slowest_ms",
                                                                         "fastest_rank", "fastest_ms", "spread_ms",
                                                                         "phase"]))
    body.append("<h3>Clocks</h3>" + table(s["clock"], ["host", "offset_ms", "source", "rms_us", "p95_us",
                                                       "collectives"]))
    if s["outliers"]:
        body.append("<h3>Outliers</h3>" + table(s["outliers"], ["rank", "gpu", "metric", "value", "median", "reason"]))
    if s["failed"]:
        body.append("<h3>Left out</h3>" + table(s["failed"], ["path", "error"]))
    return ("<!doctype html><html><head><meta charset=\"utf-8\"><title>gputap fleet</title><style>"
            "body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}td,th{border:1px solid #ccc;"
            "padding:2px 6px;font-size:13px}</style></head><body><section id=\"fleet\">%s</section></body></html>\n"
            % "".join(body))


def write_all(res, out):
    os.makedirs(out, exist_ok=True)
    _parquet(res.ranks, os.path.join(out, "ranks.parquet"))
    _parquet(res.iterations, os.path.join(out, "iterations.parquet"))
    cols = [f.name for f in collectives_schema()]
    _parquet(res.collectives[cols] if len(res.collectives) else res.collectives.reindex(columns=cols),
             os.path.join(out, "collectives.parquet"), schema=collectives_schema())

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
