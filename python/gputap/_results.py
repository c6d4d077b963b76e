"""Results: the document gputap_results_json() returns, its reductions, the
printed tables (the GMP profiler's layout), the CSV and the DataFrame.

Pure functions over plain dicts: no library, no GPU.  The document's format is
described in docs/python.md; `merge` adds to each range the hardware metrics
of the range-metrics engine (document key "metrics"), summed over the
occurrences of the range's path.
"""
import csv
import io
import json

REDUCTIONS = ("SUM", "MAX", "MEAN")
MB = 1024.0 * 1024.0

# per-range fields of the document, in CSV order, with their units
RANGE_FIELDS = (
    "calls",
    "open",
    "wall_ns",
    "wall_min_ns",
    "wall_max_ns",
    "kernels",
    "gpu_ns",
    "gpu_min_ns",
    "gpu_max_ns",
    "alloc_count",
    "alloc_bytes",
    "free_count",
    "free_bytes",
    "peak_bytes",
)


# GPU time is null when kernels were counted but not timed (kernel records off while range
# metrics measured per range); the metrics' gpu__time_duration.sum stands in where present
NULLABLE_FIELDS = ("gpu_ns", "gpu_min_ns", "gpu_max_ns")


class ResultsFormatError(ValueError):
    """The results document is not what this version of the package understands."""


def parse(text):
    """The results document from JSON text (str or bytes)."""
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    try:
        doc = json.loads(text)
    except ValueError as e:
        raise ResultsFormatError("results are not valid JSON: %s" % e) from None
    return normalize(doc)


def normalize(doc):
    if not isinstance(doc, dict) or not isinstance(doc.get("ranges", []), list):
        raise ResultsFormatError("results must be an object with a 'ranges' list")
    out = dict(doc)
    ranges = []
    for i, r in enumerate(doc.get("ranges", [])):
        if not isinstance(r, dict) or not isinstance(r.get("path"), str):
            raise ResultsFormatError("range %d has no 'path'" % (i + 1))
        rr = dict(r)
        rr.setdefault("name", r["path"].rsplit("/", 1)[-1])
        rr.setdefault("level", r["path"].count("/"))
        for f in RANGE_FIELDS:
            v = rr.get(f, 0)
            if v is None and f in NULLABLE_FIELDS:
                rr[f] = None
                continue
            if not isinstance(v, (int, float)) or isinstance(v, bool):
                raise ResultsFormatError("range %r: %s is not a number" % (r["path"], f))
            rr[f] = v
        ranges.append(rr)
    out["ranges"] = ranges
    return merge(out)


def _metric_names(mdoc):
    names = []
    for m in (mdoc or {}).get("metrics", []) or []:
        n = m.get("name") if isinstance(m, dict) else m
        if isinstance(n, str) and n not in names:
            names.append(n)
    return names


def merge(doc):
    """Attach metrics[path] = {metric: {sum,max,min,mean,kernels}} to each range."""
    mdoc = doc.get("metrics")
    names = _metric_names(mdoc) if isinstance(mdoc, dict) else []
    by_path = {}
    if isinstance(mdoc, dict):
        for occ in mdoc.get("ranges", []) or []:
            if not isinstance(occ, dict):
                continue
            path = occ.get("path") or occ.get("name")
            if not isinstance(path, str):
                continue
            kernels = occ.get("kernels", 0) or 0
            acc = by_path.setdefault(path, {})
            for metric, v in (occ.get("values") or {}).items():
                if not isinstance(v, dict):
                    continue
                a = acc.get(metric)
                s, mx, mn = v.get("sum"), v.get("max"), v.get("min")
                k = v.get("kernels", kernels) or 0
                if a is None:
                    acc[metric] = a = {"sum": 0.0, "max": None, "min": None, "kernels": 0}
                if isinstance(s, (int, float)):
                    a["sum"] += s
                if isinstance(mx, (int, float)):
                    a["max"] = mx if a["max"] is None else max(a["max"], mx)
                if isinstance(mn, (int, float)):
                    a["min"] = mn if a["min"] is None else min(a["min"], mn)
                a["kernels"] += k
        for acc in by_path.values():
            for a in acc.values():
                a["mean"] = a["sum"] / a["kernels"] if a["kernels"] else None
    for r in doc["ranges"]:
        r["metrics"] = by_path.get(r["path"], {})
    doc["metric_names"] = names
    return doc


def check_reduction(reduction):
    if not isinstance(reduction, str) or reduction.upper() not in REDUCTIONS:
        raise ValueError("reduction must be one of SUM, MAX, MEAN (got %r)" % (reduction,))
    return reduction.upper()


def reduce_range(r, reduction):
    """{name: value} for one range: wall and GPU time (µs) and each hardware metric, reduced."""
    red = check_reduction(reduction)
    out = {}
    calls, kernels = r["calls"], r["kernels"]
    if red == "SUM":
        wall, gpu = r["wall_ns"], r["gpu_ns"]
    elif red == "MAX":
        wall, gpu = r["wall_max_ns"], r["gpu_max_ns"]
    else:
        wall = r["wall_ns"] / calls if calls else 0
        timed = r.get("timed_kernels", kernels)
        gpu = None if r["gpu_ns"] is None else r["gpu_ns"] / timed if timed else 0
    if gpu is None:  # not timed by kernel records: the range's measured GPU time, if any
        gpu = ((r.get("metrics") or {}).get("gpu__time_duration.sum") or {}).get(red.lower())
    out["wall_time_us"] = wall / 1000.0
    out["gpu_time_us"] = None if gpu is None else gpu / 1000.0
    for metric, a in (r.get("metrics") or {}).items():
        out[metric] = a.get(red.lower())
    return out


def _fmt(v):
    if v is None:
        return "n/a"
    if isinstance(v, float):
        if v == int(v) and abs(v) < 1e15:
            return "%d" % int(v)
        return "%.2f" % v
    return str(v)


def _select(doc, names):
    if names is None:
        return list(doc["ranges"])
    return [r for r in doc["ranges"] if r["name"] in names or r["path"] in names]


def metrics_note(doc):
    """One line on the hardware metrics, or '' when they are present."""
    if doc.get("metric_names"):
        return ""
    why = doc.get("metrics_error") or "no metrics were asked for"
    return "hardware metrics: not available (%s)" % why


def format_ranges(doc, reduction="SUM", names=None):
    """The GMP profiler's kernel table: 'Range N: name' and one 'metric: value' line each."""
    red = check_reduction(reduction)
    rs = _select(doc, names)
    lines = ["Kernel Profiling Results (%s):" % red, "Number of ranges: %d" % len(rs)]
    note = metrics_note(doc)
    if note:
        lines.append(note)
    if not doc.get("gpu_activity", True):
        lines.append("GPU activity: not recorded (%s)" % (doc.get("gpu_activity_note") or "see gputap docs"))
    for i, r in enumerate(rs, 1):
        lines.append("Range %d: %s" % (i, r["path"]))
        lines.append("  calls: %d" % r["calls"])
        lines.append("  kernels: %d" % r["kernels"])
        for k, v in reduce_range(r, red).items():
            lines.append("  %s: %s" % (k, _fmt(v)))
    return "\n".join(lines) + "\n"


def memory_activity(doc, names=None):
    """Plain structures: one dict per range with allocations, deallocations and peak."""
    out = []
    for r in _select(doc, names):
        out.append(
            {
                "name": r["name"],
                "path": r["path"],
                "calls": r["calls"],
                "allocations": {"count": r["alloc_count"], "bytes": r["alloc_bytes"]},
                "deallocations": {"count": r["free_count"], "bytes": r["free_bytes"]},
                "peak_bytes": r["peak_bytes"],
            }
        )
    return out


def format_memory(doc, names=None):
    """The GMP profiler's memory table: 'Allocations: N operations, B bytes (X MB)'."""
    acts = memory_activity(doc, names)
    lines = ["Memory Activity Results:"]
    if not acts:
        lines.append("No memory ranges recorded.")
    for i, a in enumerate(acts, 1):
        al, de = a["allocations"], a["deallocations"]
        lines.append("Range %d: %s" % (i, a["path"]))
        lines.append("  Allocations: %d operations, %d bytes (%.2f MB)" % (al["count"], al["bytes"], al["bytes"] / MB))
        lines.append(
            "  Deallocations: %d operations, %d bytes (%.2f MB)" % (de["count"], de["bytes"], de["bytes"] / MB)
        )
        lines.append("  Peak in use: %d bytes (%.2f MB)" % (a["peak_bytes"], a["peak_bytes"] / MB))
    return "\n".join(lines) + "\n"


CSV_FIXED = (
    "range",
    "name",
    "path",
    "level",
    "calls",
    "reduction",
    "kernels",
    "wall_time_us",
    "gpu_time_us",
    "alloc_count",
    "alloc_bytes",
    "free_count",
    "free_bytes",
    "peak_bytes",
)


def rows(doc, reduction="SUM", names=None):
    """One dict per range: CSV_FIXED columns, then one column per hardware metric."""
    red = check_reduction(reduction)
    out = []
    for i, r in enumerate(_select(doc, names), 1):
        red_vals = reduce_range(r, red)
        row = {
            "range": i,
            "name": r["name"],
            "path": r["path"],
            "level": r["level"],
            "calls": r["calls"],
            "reduction": red,
            "kernels": r["kernels"],
            "wall_time_us": red_vals.pop("wall_time_us"),
            "gpu_time_us": red_vals.pop("gpu_time_us"),
            "alloc_count": r["alloc_count"],
            "alloc_bytes": r["alloc_bytes"],
            "free_count": r["free_count"],
            "free_bytes": r["free_bytes"],
            "peak_bytes": r["peak_bytes"],
        }
        for m in doc.get("metric_names", []):
            row[m] = red_vals.get(m)
        out.append(row)
    return out


def csv_text(doc, reduction="SUM", names=None):
    cols = list(CSV_FIXED) + list(doc.get("metric_names", []))
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(cols)
    for row in rows(doc, reduction, names):
        w.writerow(["" if row.get(c) is None else _csv_val(row.get(c)) for c in cols])
    return buf.getvalue()


def _csv_val(v):
    if isinstance(v, float):
        return repr(v) if v != int(v) or abs(v) >= 1e15 else "%d" % int(v)
    return str(v)


def table(doc):
    """Column name -> list, one entry per range: every field, and metric:sum/max/mean/min."""
    cols = {"path": [], "name": [], "level": []}
    for f in RANGE_FIELDS:
        cols[f] = []
    names = doc.get("metric_names", [])
    for m in names:
        for red in ("sum", "max", "mean", "min"):
            cols["%s:%s" % (m, red)] = []
    for r in doc["ranges"]:
        cols["path"].append(r["path"])
        cols["name"].append(r["name"])
        cols["level"].append(r["level"])
        for f in RANGE_FIELDS:
            cols[f].append(r[f])
        for m in names:
            a = r["metrics"].get(m, {})
            for red in ("sum", "max", "mean", "min"):
                cols["%s:%s" % (m, red)].append(a.get(red))
    return cols


def dataframe(doc):
    """A pandas DataFrame of table(doc), indexed by path; ImportError without pandas."""
    import pandas as pd  # optional dependency

    t = table(doc)
    return pd.DataFrame(t).set_index("path", drop=False)
