#!/usr/bin/env python3
"""The DOM a browser rendered (chromium --dump-dom of report.html with tests/report/browser_check.js)
against gputap analyze: the bandwidth plot's peak label = the table's peak (as the browser shows the
table), the launch-delay bars' p90 = the table's p90 of the same kernel, the iteration labels = analyze's
numbers; every such label laid out inside its plot.  Also checks the screenshot PNG is a real picture.

usage: check_browser.py DOM.html ANALYZE.json ANALYZE.txt SHOT.png WIDTH HEIGHT
"""
import html
import json
import re
import struct
import sys
import zlib


def main():
    dom, js = open(sys.argv[1]).read(), json.load(open(sys.argv[2]))["results"][0]
    txt, png, w, h = open(sys.argv[3]).read(), sys.argv[4], int(sys.argv[5]), int(sys.argv[6])
    res = []

    def check(name, cond, why=""):
        res.append("ok %s" % name if cond else "not ok %s: %s" % (name, why))

    m = re.findall(r'<pre id="gt-result">(.*?)</pre>', dom, re.S)
    check("script-ran", bool(m), "no result in the rendered DOM")
    if not m:
        print("\n".join(res))
        return
    r = json.loads(html.unescape(m[-1]))
    # peak label vs the table as rendered
    table = {}
    for row in r["membw"]:
        kind = row[1]["text"]
        table["%s %s" % (row[0]["text"], kind[7:] if kind.startswith("Memcpy ") else kind)] = float(row[6]["text"])
    pk = r["peak"]
    ok = len(pk) == 1 and pk[0]["inside"]
    if ok:
        v = float(re.match(r"peak ([0-9.]+) GB/s", pk[0]["text"]).group(1))
        ok = abs(v - table.get(pk[0]["series"], -1)) < 5e-4 and abs(v - max(table.values())) < 5e-4
    check("bandwidth-peak-label-equals-table", ok, (pk, table))
    # p90 bars vs the table's p90 column (rank, whole name from the cell's title)
    top = {(row[0]["text"], row[9]["title"] or row[9]["text"]): row for row in r["top"]}
    jk = {(k["rank"], k["name"]): k for k in js["kernels_per_rank"]["rows"]}
    bad, matched = [], 0
    for b in r["p90"]:
        mm = re.match(r"p90 ([0-9.]+) us", b["text"])
        rank, _, name = (b["of"] or "").partition(": ")
        if not mm or not b["inside"]:
            bad.append(b)
            continue
        k = jk.get((rank, name))
        if not k or abs(float(mm.group(1)) - k["delay_p90_us"]) > 0.051:
            bad.append((b["text"], k and k["delay_p90_us"]))
        row = top.get((rank, name))
        if row:
            matched += 1
            if row[6]["text"] != mm.group(1):
                bad.append((b["text"], row[6]["text"]))
    check("launch-delay-p90-labels-equal-table", r["p90"] and matched and not bad, bad[:3])
    # iteration labels
    g0 = js["timeline"]["gpus"][0]
    an_rows = re.findall(r"^(\d+) %s " % re.escape(g0["label"]), txt, re.M)
    labels = [x["text"] for x in r["iterations"]]
    check("iteration-labels-equal-analyze", labels == an_rows and all(x["inside"] for x in r["iterations"]),
          (labels, an_rows))
    # the screenshot: a PNG of the window's size, not one colour
    data = open(png, "rb").read()
    okp = data[:8] == b"\x89PNG\r\n\x1a\n" and struct.unpack(">II", data[16:24]) == (w, h)
    if okp:
        idat, i = b"", 8
        while i < len(data):
            n, t = struct.unpack(">I4s", data[i:i + 8])
            if t == b"IDAT":
                idat += data[i + 8:i + 8 + n]
            i += 12 + n
        raw = zlib.decompress(idat)
        okp = len(set(raw[::97])) > 8  # a blank page has one or two byte values
    check("screenshot-is-a-picture", okp, "%d bytes" % len(data))
    print("\n".join(res))


main()
