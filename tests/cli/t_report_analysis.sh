#!/usr/bin/env bash
# gputap report on traces — the real two-rank NCCL job, small Kineto traces with planted idle gaps,
# queue depths and bandwidth — and on a recorded run: the sections of the per-op analyses (idle by
# cause, launches and the queue, top kernels per kind, memory bandwidth over time) hold the numbers
# 'gputap analyze' computes; bad inputs are errors that name the file and write no page.
. "$(dirname "$0")/lib.sh"
K="$FIX/kineto-2rank-nccl"
REC="$GT_TEST_SRCDIR/../examples/recorded"
D="$T/hi"
python3 "$GT_TEST_SRCDIR/analyze-data/make_hta_inputs.py" "$D" || notok generate "make_hta_inputs.py failed"

# The page's per-op sections against analyze's JSON: every stream's idle time by cause and queue
# maximum, every rank's launch counts, every top-N row, every bandwidth row; no section says "No data".
cat >"$T/cmp.py" <<'PY'
import html, json, re, sys
page, js, top = open(sys.argv[1]).read(), json.load(open(sys.argv[2]))["results"][0], int(sys.argv[3])
bad = []
def section(i):
    m = re.search(r'<h2 id="%s">(.*?)(?=<h2 )' % i, page, re.S)
    if not m:
        bad.append("no section " + i)
        return ""
    if 'class="absent"' in m.group(1):
        bad.append("section %s says No data" % i)
    return m.group(1)
def rows(sec):
    out = []
    for tr in re.findall(r"<tr><td.*?</tr>", sec, re.S):
        # a long name is shortened in the cell, whole in its title
        out.append([html.unescape(re.search(r'title="([^"]*)"', c).group(1) if 'title="' in c else re.sub(r"<[^>]+>", "", c))
                    for c in re.findall(r"<td[^>]*>(.*?)</td>", tr, re.S)])
    return out
def near(what, got, want, tol):
    if (got == "-") != (want is None):  # unknown: "-" on the page, null in the JSON
        bad.append("%s: page %s, analyze %s" % (what, got, want))
        return
    if want is None:
        return
    if abs(float(got) - float(want)) > tol:
        bad.append("%s: page %s, analyze %s" % (what, got, want))
idle = {(r[0], int(r[1])): r for r in rows(section("idle"))}
for s in js["streams"]:
    r = idle.get((s["gpu"], s["stream"]))
    if not r:
        bad.append("idle: no row for %s stream %d" % (s["gpu"], s["stream"]))
        continue
    near("ops", r[2], s["ops"], 0)
    near("host wait", r[4], s["idle_host_wait_ms"], 6e-4)
    near("kernel wait", r[5], s["idle_kernel_wait_ms"], 6e-4)
    near("other", r[6], s["idle_other_ms"], 6e-4)
    near("queue max", r[7], s["queue_max"], 0)
lsec = section("launches")
launch = {r[0]: r for r in rows(lsec)}
per = {}
for k in js["kernels_per_rank"]["rows"]:
    p = per.setdefault(k["rank"], [0, 0, 0])
    p[0] += k["count"]; p[1] += k["launched"]; p[2] += k["short"]
for rank, (ops, la, sh) in per.items():
    r = launch.get(rank)
    if not r:
        bad.append("launches: no row for " + rank)
        continue
    near(rank + " ops", r[1], ops, 0); near(rank + " launched", r[2], la, 0); near(rank + " short", r[5], sh, 0)
tsec = section("topkernels")
want, n = [], {}
for k in js["kernels_per_rank"]["rows"]:
    key = (k["rank"], k["kind"])
    n[key] = n.get(key, 0) + 1
    if n[key] <= top:
        want.append(k)
got = rows(tsec)
if len(got) != len(want):
    bad.append("top kernels: %d rows, analyze has %d" % (len(got), len(want)))
for g, w in zip(got, want):
    if (g[0], g[1], g[9]) != (w["rank"], w["kind"], w["name"]):
        bad.append("top kernels: row %r, analyze %r" % (g[:2] + g[9:], (w["rank"], w["kind"], w["name"])))
    near("time " + w["name"][:30], g[2], w["time_ms"], 6e-4)
    near("share " + w["name"][:30], g[3], w["share_pct"], 6e-3)
msec = section("membw")
bw = {(r[0], r[1]): r for r in rows(msec)}
for m in js["memory_bandwidth"]:
    r = bw.get((m["gpu"], m["kind"]))
    if not r:
        bad.append("bandwidth: no row for %s %s" % (m["gpu"], m["kind"]))
        continue
    near("count", r[2], m["count"], 0); near("peak", r[6], m["peak_gbps"], 6e-4)
for plot in ("idle time per stream by cause", "launch queue per stream", "memory bandwidth per kind"):
    if plot not in page:
        bad.append("no plot: " + plot)
print("\n".join(bad) if bad else "same")
sys.exit(1 if bad else 0)
PY

# --- the real two-rank NCCL job: the page goes to report.html in the current folder ---
mkdir -p "$T/w"
(cd "$T/w" && "$GPUTAP" report "$K/rank0.json.gz" "$K/rank1.json.gz") >"$T/two.out" 2>&1
rc=$?
[ $rc -eq 0 ] && ok two-ranks-exit-0 || notok two-ranks-exit-0 "exit $rc" "$(tail -5 "$T/two.out")"
[ -s "$T/w/report.html" ] && [ ! -e "$T/w/report.html.partial" ] && ok two-ranks-page-in-cwd || notok two-ranks-page-in-cwd
contains two-ranks-summary-iterations "$T/two.out" "iterations   2 (profiler-step) on 2 GPUs"
contains two-ranks-summary-overlap "$T/two.out" "overlap      communication 775 ms, 17.4% of it hidden by compute"
contains two-ranks-summary-idle "$T/two.out" "idle gaps    8.38 s on 10 streams: host wait 83.4%"
contains two-ranks-summary-queue "$T/two.out" "queue up to 91 (rank1/gpu1 stream 7)"
contains two-ranks-summary-nccl "$T/two.out" "top comm     ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t: 396 ms"
contains two-ranks-summary-bandwidth "$T/two.out" "memory bw    peak 960.2 GB/s (Memcpy DtoD on rank0/gpu0)"
contains two-ranks-summary-page "$T/two.out" "report       report.html"
P="$T/w/report.html"
contains two-ranks-inputs "$P" "rank1.json.gz"
contains two-ranks-timeline-lane "$P" "rank1/gpu1 stream 25"
contains two-ranks-zoom "$P" "iteration 0 of rank0, its streams only"
contains two-ranks-iterations "$P" "rank0/gpu0, 2 iterations (from profiler-step)"
contains two-ranks-iterations-rank1 "$P" "GPU time per iteration: rank1/gpu1"
contains two-ranks-nccl-class "$P" "nccl (communication)"
contains two-ranks-hta-note "$P" "1179 GPU ops launched in the last ProfilerStep (666.891 ms)"
contains two-ranks-idle-causes "$P" "host wait 83.4%, kernel wait 0.1%, other 16.5%"
if grep -q "<script\|http" "$P"; then notok two-ranks-self-contained; else ok two-ranks-self-contained; fi
"$GPUTAP" analyze --format json "$K/rank0.json.gz" "$K/rank1.json.gz" >"$T/two.json" 2>/dev/null
if python3 "$T/cmp.py" "$P" "$T/two.json" 5 >"$T/cmp.out" 2>&1; then ok two-ranks-page-equals-analyze; else
	notok two-ranks-page-equals-analyze "$(head -20 "$T/cmp.out")"; fi
# the hand-checked numbers of the real traces (HTA's, in tests/cli/t_analyze_hta.sh) on the page
contains two-ranks-idle-rank0-s7 "$P" "<td>rank0/gpu0</td><td class=\"n\">7</td><td class=\"n\">1052</td><td class=\"n\">1000.017</td><td class=\"n\">397.917</td>"
contains two-ranks-queue-rank1-s7 "$P" "<td class=\"n\">91</td>"

# --- planted numbers (every category in capitals): idle 55 us host wait, 5 us kernel wait, 125 us other,
# queue 3, a 1 MB copy in 10 us = 100 GB/s; -o names the page ---
mkdir -p "$T/w2"
check planted-exit-0 sh -c 'cd "$1" && "$2" report -o "$3" "$4"' sh "$T/w2" "$GPUTAP" "$T/p.html" "$D/capitals.json"
[ -s "$T/p.html" ] && [ ! -e "$T/w2/report.html" ] && ok planted-page-at-o || notok planted-page-at-o
contains planted-idle "$T/p.html" "<td>capitals.json/gpu0</td><td class=\"n\">7</td><td class=\"n\">4</td><td class=\"n\">0.185</td><td class=\"n\">0.055</td><td class=\"n\">0.005</td><td class=\"n\">0.125</td><td class=\"n\">3</td>"
contains planted-bandwidth "$T/p.html" "<td>capitals.json/gpu0</td><td>Memcpy HtoD</td><td class=\"n\">1</td><td class=\"n\">977 KiB</td><td class=\"n\">0.010</td><td class=\"n\">100.000</td><td class=\"n\">100.000</td>"
contains planted-launches "$T/p.html" "<td>capitals.json</td><td class=\"n\">6</td><td class=\"n\">5</td><td class=\"n\">56.20</td>"
contains planted-hta-before "$T/p.html" "1 GPU ops launched before the trace began (0.003 ms)"
contains planted-hta-sync "$T/p.html" "1 cuda_sync events are not GPU work here"
"$GPUTAP" analyze --format json "$D/capitals.json" >"$T/p.json" 2>/dev/null
if python3 "$T/cmp.py" "$T/p.html" "$T/p.json" 5 >"$T/cmp.out" 2>&1; then ok planted-page-equals-analyze; else
	notok planted-page-equals-analyze "$(head -20 "$T/cmp.out")"; fi
expect_status quiet-prints-page 0 "$GPUTAP" report --quiet -o "$T/q.html" "$D/kineto.json"
contains quiet-prints-page-path "$T/.out" "$T/q.html"

# --- a trace without launch calls: no delay and no queue, said so ---
python3 - "$D/kineto.json" "$T/nolaunch.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["traceEvents"] = [e for e in d["traceEvents"] if e.get("cat") != "cuda_runtime"]
json.dump(d, open(sys.argv[2], "w"))
PY
check no-launches-exit-0 "$GPUTAP" report -o "$T/nl.html" "$T/nolaunch.json"
contains no-launches-said "$T/nl.html" "no op&#39;s launch call is in the inputs"

# --- nsys summary CSVs (no timeline): the classes drawn, the timeline sections say why they are empty ---
check nsys-csv "$GPUTAP" report -o "$T/n.html" "$FIX/nsys-llama2-70b/llama2-70B-GBS512-FSDP256"
contains nsys-csv-classes "$T/n.html" "nccl (communication)"
n=$(grep -c 'No data: the inputs have no GPU timeline (summary CSVs hold only totals)' "$T/n.html")
[ "$n" -eq 4 ] && ok nsys-csv-four-sections-said || notok nsys-csv-four-sections-said "$n of 4"

# --- errors: no page, the file named ---
expect_status missing-input 1 "$GPUTAP" report -o "$T/m.html" "$K/rank0.json.gz" "$T/none.json"
contains missing-input-named "$T/.out" "$T/none.json"
[ ! -e "$T/m.html" ] && ok missing-input-no-page || notok missing-input-no-page
expect_status no-gpu-activity 1 "$GPUTAP" report -o "$T/c.html" "$D/cpu-only.json"
contains no-gpu-activity-said "$T/.out" "no GPU activity"
[ ! -e "$T/c.html" ] && ok no-gpu-activity-no-page || notok no-gpu-activity-no-page
expect_status o-needs-file 2 "$GPUTAP" report "$D/kineto.json" -o

# --- a recorded run directory (PyTorch, steps marked): the same sections; -o puts the page elsewhere ---
cp -r "$REC/torch-train" "$T/tt"
check run-dir-exit-0 "$GPUTAP" report "$T/tt"
contains run-dir-summary-iterations "$T/.out" "iterations   10 (profiler-step) on 1 GPU"
contains run-dir-summary-launches "$T/.out" "launches     202 of 207 ops launched in the trace"
"$GPUTAP" analyze --format json "$T/tt" >"$T/tt.json" 2>/dev/null
if python3 "$T/cmp.py" "$T/tt/report.html" "$T/tt.json" 5 >"$T/cmp.out" 2>&1; then ok run-dir-page-equals-analyze; else
	notok run-dir-page-equals-analyze "$(head -20 "$T/cmp.out")"; fi
contains run-dir-still-power "$T/tt/report.html" "power gpu0"
rm -f "$T/tt/report.html"
check run-dir-o "$GPUTAP" report -o "$T/tt.html" "$T/tt"
[ -s "$T/tt.html" ] && [ ! -e "$T/tt/report.html" ] && ok run-dir-o-elsewhere || notok run-dir-o-elsewhere
finish
