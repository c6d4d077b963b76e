#!/usr/bin/env bash
# gputap report on run directories holding only some files.
. "$(dirname "$0")/lib.sh"

expect_status usage-no-dir 2 "$GPUTAP" report
expect_status not-a-dir 1 "$GPUTAP" report "$T/none"
contains not-a-dir-named "$T/.out" "$T/none"

# an empty folder is not a run (nor a folder of traces): refused, no page dropped into it
mkdir -p "$T/empty"
expect_status empty-dir 1 "$GPUTAP" report "$T/empty"
contains empty-dir-says-not-a-run "$T/.out" "not a gputap run directory"
[ ! -e "$T/empty/report.html" ] && ok empty-dir-no-page || notok empty-dir-no-page
# a run that holds only run.json: its page says what is missing
mkdir -p "$T/empty-run" && echo '{"command": ["true"]}' >"$T/empty-run/run.json"
check empty-run "$GPUTAP" report "$T/empty-run"
contains empty-summary-names-page "$T/.out" "$T/empty-run/report.html"
contains empty-page-says-missing "$T/empty-run/report.html" "no &lt;proc&gt;/trace.gtr in the run directory"
if grep -q "<svg" "$T/empty-run/report.html"; then notok empty-no-plots; else ok empty-no-plots; fi

mkdir -p "$T/lib"
printf 'jobid,created_date,model,library,config,calls\nj,d,m,cublasLt,op=gemm m=<script>x</script>,7\n' >"$T/lib/library_trace.csv"
printf 'time,Power(Watt) GPU0\n0,100\n0.5,300\n1.0,250\n' >"$T/lib/gpu_info_power_profiler_output.csv"
check lib-and-power "$GPUTAP" report --quiet "$T/lib"
contains lib-escaped "$T/lib/report.html" "op=gemm m=&lt;script&gt;x&lt;/script&gt;"
if grep -q "<script" "$T/lib/report.html"; then notok lib-no-raw-script; else ok lib-no-raw-script; fi
if grep -q "http" "$T/lib/report.html"; then notok no-urls; else ok no-urls; fi
contains power-plot "$T/lib/report.html" "power gpu0"
[ ! -e "$T/lib/report.html.partial" ] && ok no-partial-left || notok no-partial-left
# what is wrong first: the summary's findings line lists the kinds `gputap advise` lists, in its order
F=$FIX/findings
check findings-straggler "$GPUTAP" report -o "$T/fd.html" "$F/straggler.planted.rank0.json.gz" "$F/straggler.planted.rank1.json.gz"
cp "$T/.out" "$T/fd.sum"
"$GPUTAP" advise "$F/straggler.planted.rank0.json.gz" "$F/straggler.planted.rank1.json.gz" >"$T/fd.adv" 2>&1
want=$(sed -n 's/^[0-9]*\. \[\([a-z-]*\)\].*/\1/p' "$T/fd.adv" | tr '\n' ' ')
got=$(sed -n 's/^  findings     [0-9]*: //p' "$T/fd.sum" | sed 's/ of an iteration.*//; s/ up to [0-9.]*%//g; s/ [0-9.]*%//g' | tr -d ',' | tr ' ' '\n' | sed '/^$/d' | tr '\n' ' ')
[ -n "$want" ] && [ "$want" = "$got" ] && ok findings-line-as-advise || notok findings-line-as-advise "advise: $want" "summary: $got" "$(cat "$T/fd.sum")"
case $want in straggler*) ok findings-straggler-first ;; *) notok findings-straggler-first "$want" ;; esac
check findings-twin "$GPUTAP" report -o "$T/fd2.html" "$F/straggler.twin.rank0.json.gz" "$F/straggler.twin.rank1.json.gz"
contains findings-twin-none "$T/.out" "findings     none with an estimated gain of 2% of an iteration or more"
# an input the findings cannot read (nsys summaries, no timeline): said, on the page and in the summary
check findings-nsys "$GPUTAP" report -o "$T/nsys.html" "$FIX/nsys-llama2-70b"
contains findings-nsys-none-checked "$T/.out" "findings     none checked: the input has no timeline"
contains findings-nsys-page "$T/nsys.html" "0 (no iteration time in this input)"
finish
