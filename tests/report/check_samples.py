#!/usr/bin/env python3
"""Check that the report's power and memory plots draw the run's gpu_samples.csv, and that the
terminal report's peak power is that file's.

usage: check_samples.py RUN_DIR REPORT.txt
RUN_DIR holds gpu_samples.csv and the report.html `gputap report RUN_DIR` wrote; REPORT.txt is what
that command printed.  Per plot ("GPU power", "GPU memory used (driver view)") and GPU: the line has
one point per row of the file with a value for that GPU, in time order, and its highest point (the
smallest y on the page) is at a row holding that GPU's largest value; then "power peak N W" of the
text equals the largest power of the file.  Prints "ok NAME" / "not ok NAME: why" per check.
"""
import csv
import re
import sys


def samples(path):
    """{column: {device: [(time_ns, value), ...]}} for power_W and mem_used_MiB, empty cells skipped."""
    out = {"power_W": {}, "mem_used_MiB": {}}
    with open(path) as f:
        for row in csv.DictReader(f):
            for col, per in out.items():
                v = row.get(col, "")
                if v not in ("", None):
                    per.setdefault(int(row["device"]), []).append((int(row["time_ns"]), float(v)))
    return out


def plot(page, title):
    """The point lists of the polylines of the SVG whose <title> is `title`, in drawing order."""
    m = re.search(r"<svg[^>]*><title>%s</title>(.*?)</svg>" % re.escape(title), page, re.S)
    if not m:
        return None
    return [[tuple(float(x) for x in p.split(",")) for p in pts.split()]
            for pts in re.findall(r'<polyline class="ln"[^>]*points="([^"]*)"', m.group(1))]


def main():
    run, txt = sys.argv[1], open(sys.argv[2]).read()
    page = open(run + "/report.html").read()
    s = samples(run + "/gpu_samples.csv")
    res = []

    def check(name, cond, why=""):
        res.append("ok %s" % name if cond else "not ok %s: %s" % (name, why))

    for col, title in (("power_W", "GPU power"), ("mem_used_MiB", "GPU memory used (driver view)")):
        per = s[col]
        lines = plot(page, title)
        check("%s-plot" % col, lines is not None and len(lines) == len(per),
              "%s: %s lines for %d GPUs" % (title, None if lines is None else len(lines), len(per)))
        for line, dev in zip(lines or [], sorted(per)):
            rows = sorted(per[dev])  # the file's rows in time order
            check("%s-gpu%d-points" % (col, dev), len(line) == len(rows), "%d points, %d rows" % (len(line), len(rows)))
            xs = [p[0] for p in line]
            check("%s-gpu%d-time-order" % (col, dev), xs == sorted(xs), "x not increasing")
            if line and len(line) == len(rows):
                top = min(range(len(line)), key=lambda i: line[i][1])
                best = max(v for _, v in rows)
                lo = min(v for _, v in rows)
                tol = (best - lo) * 0.01  # a tenth of a pixel of a ~150-pixel plot, and then some
                check("%s-gpu%d-peak" % (col, dev), rows[top][1] >= best - tol,
                      "highest point at row %d (%.3f), the file's largest %.3f" % (top, rows[top][1], best))
    if s["power_W"]:
        m = re.search(r"power +peak (\d+) W", txt)
        best = max(v for rows in s["power_W"].values() for _, v in rows)
        check("text-power-peak", m and int(m.group(1)) == int("%.0f" % best),
              "text %s, file %.3f" % (m and m.group(1), best))
    print("\n".join(res))
    print("%d passed, %d failed" % (sum(r.startswith("ok") for r in res), sum(r.startswith("not") for r in res)))
    return 1 if any(r.startswith("not") for r in res) else 0


if __name__ == "__main__":
    raise SystemExit(main())
