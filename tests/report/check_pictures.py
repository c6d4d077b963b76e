#!/usr/bin/env python3
"""Check that the plots of a report.html agree with the tables beside them (and with gputap analyze).

usage: check_pictures.py PAGE.html ANALYZE.json ANALYZE.txt [--warmup]
Prints "ok NAME" / "not ok NAME: why" per check.  The page is read as text here; the same checks
run on the DOM a browser rendered in tests/report/browser_check.js (tests/cli/t_report_browser.sh).
"""
import html
import json
import re
import sys


def section(page, sid):
    m = re.search(r'<h2 id="%s">.*?(?=<h2 |</body>)' % sid, page, re.S)
    return m.group(0) if m else ""


def cells(tr):
    out = []
    for c in re.findall(r"<td[^>]*>(.*?)</td>", tr, re.S):
        t = re.search(r'title="([^"]*)"', c)
        out.append((html.unescape(re.sub(r"<[^>]+>", "", c)), html.unescape(t.group(1)) if t else None))
    return out


def rows(sec):
    return [cells(tr) for tr in re.findall(r"<tr><td.*?</tr>", sec, re.S)]


def main():
    page, js, txt = open(sys.argv[1]).read(), json.load(open(sys.argv[2]))["results"][0], open(sys.argv[3]).read()
    warm = "--warmup" in sys.argv
    res = []

    def check(name, cond, why=""):
        res.append("ok %s" % name if cond else "not ok %s: %s" % (name, why))

    # no number with an exponent anywhere on the page (style sheet left aside)
    body = re.sub(r"<style>.*?</style>", "", page, flags=re.S)
    texts = [html.unescape(t) for t in re.findall(r">([^<]+)<", body)]
    exp = [t for t in texts if re.search(r"\d[eE][+-]?\d", t)]
    check("no-exponent", not exp, exp[:3])

    # iterations: the bars are numbered as gputap analyze numbers its rows
    isec = section(page, "iterations")
    svg = re.search(r"<svg.*?</svg>", isec, re.S)
    labels = re.findall(r'class="xt">([^<]*)</text>', svg.group(0)) if svg else []
    g0 = js["timeline"]["gpus"][0]
    an_rows = re.findall(r"^(\d+) %s " % re.escape(g0["label"]), txt, re.M)
    want = [str(i) for i in range(len(g0["iterations"]))]
    check("iteration-numbers", labels == want == an_rows, "plot %s, analyze %s, json %s" % (labels, an_rows, want))

    if warm:  # one bar far above the rest: cut, with its value; the others keep most of the height
        cut = re.findall(r'class="clipped"[^>]*data-bar="([^"]*)">([^<]*)<', svg.group(0))
        check("warmup-bar-cut", cut == [("0", "286500 ms (cut)")], cut)
        hs = {}
        for bar, h in re.findall(r'height="([0-9.]+)"[^>]*><title>(\d+): compute', svg.group(0)):
            hs[h] = float(bar)
        others = [hs.get(str(i), 0) for i in range(1, 6)]
        check("warmup-others-readable", min(others) > 0.5 * 250, "heights %s of 250" % others)
        print("\n".join(res))
        return

    # the bandwidth plot's labelled peak is the table's peak of that series, and the largest of all
    msec = section(page, "membw")
    pk = re.search(r'class="peak"[^>]*data-series="([^"]*)">peak ([0-9.]+) GB/s', msec)
    table = {}
    for r in rows(msec):
        kind = r[1][0][7:] if r[1][0].startswith("Memcpy ") else r[1][0]
        table["%s %s" % (r[0][0], kind)] = float(r[6][0])
    if pk:
        v = float(pk.group(2))
        t = table.get(html.unescape(pk.group(1)))
        check("bandwidth-peak-equals-table", t is not None and abs(v - t) < 5e-4 and abs(v - max(table.values())) < 5e-4,
              "plot %s %s, table %s" % (pk.group(1), v, table))
        jm = max(m["peak_gbps"] for m in js["memory_bandwidth"])
        check("bandwidth-peak-equals-analyze", abs(v - jm) < 5e-4, "plot %s, analyze %s" % (v, jm))
    else:
        check("bandwidth-peak-equals-table", False, "no labelled peak")

    # the launch-delay bars are the p90, as the table's p90 column (same rank, same whole name)
    lsec, tsec = section(page, "launches"), section(page, "topkernels")
    top = {}
    for r in rows(tsec):
        top[(r[0][0], r[9][1] or r[9][0])] = r
    bars = re.findall(r"<title>([^<]*)</title></rect><text[^>]*class=\"bv\">p90 ([0-9.]+) us", lsec)
    matched, bad = 0, []
    jk = {(k["rank"], k["name"]): k for k in js["kernels_per_rank"]["rows"]}
    for title, p90 in bars:
        rank, name = html.unescape(title).split(": ", 1)
        k = jk.get((rank, name))
        if not k or abs(float(p90) - k["delay_p90_us"]) > 0.051:
            bad.append((rank, name[:40], p90, k and k["delay_p90_us"]))
        r = top.get((rank, name))
        if r:
            matched += 1
            if r[6][0] != p90:
                bad.append(("table", rank, name[:40], p90, r[6][0]))
    check("launch-delay-bars-are-p90", bars and matched and not bad, "%d bars, %d in the table, %s" % (len(bars), matched, bad))

    # long names: short in the cell, whole in its title
    names = [r[9] for r in rows(tsec)]
    long_cells = [c for c in names if c[1] and len(c[1]) > 100]
    check("long-names-shortened", long_cells and all(len(c[0]) <= 100 for c in names) and
          all(c[1] is not None for c in names), [(len(c[0]), len(c[1] or "")) for c in names][:5])

    # the zoomed iteration is one rank's: its lanes only
    tl = section(page, "timeline")
    svgs = re.findall(r"<svg.*?</svg>", tl, re.S)
    if len(svgs) == 2:
        lanes = re.findall(r'class="bl">([^<]*)<', svgs[1])
        title = re.search(r'class="pt">([^<]*)<', svgs[1]).group(1)
        rank = re.search(r"iteration \d+ of (\S+),", title)
        ok = rank and lanes and all(l.startswith(rank.group(1) + "/") for l in lanes)
        all_lanes = re.findall(r'class="bl">([^<]*)<', svgs[0])
        check("zoom-draws-one-rank", ok and len(set(l.split("/")[0] for l in all_lanes)) > 1, (title, lanes))
    print("\n".join(res))


main()
