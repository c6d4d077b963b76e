#!/usr/bin/env bash
# gputap analyze on nsys summary CSVs: the GPU Performance Analyzer's config and output, header spellings, errors.
. "$(dirname "$0")/lib.sh"
D="$GT_TEST_SRCDIR/analyze-data"
L="$FIX/nsys-llama2-70b"

# The GPU Performance Analyzer config on the fixture prints that tool's output exactly (byte for byte: its
# header lines end in padding spaces, and we keep them; no normalisation is needed).
expect_status fixture-config 0 "$GPUTAP" analyze --config "$L/config.json"
"$GPUTAP" analyze --config "$L/config.json" >"$T/fix.txt" 2>"$T/fix.err"
if cmp -s "$T/fix.txt" "$L/expected-output.txt"; then ok fixture-exact; else notok fixture-exact "$(diff "$T/fix.txt" "$L/expected-output.txt" | head -20)"; fi
contains fixture-ambiguity-note "$T/fix.err" "match keys of two classes"

# The same config written as that tool documents it: // comments, trailing commas, relative paths.
mkdir -p "$T/cfg"
cp "$L"/*.csv "$T/cfg/"
cat >"$T/cfg/c.json" <<'JSON'
{
    "inputs": [ // one input
        {
            "format": "csv", // csv or nsys-rep
            "title": "Llama2-70B-From-CSV",
            "nsys_csv_file_path": {
                "kernel_sum": "llama2-70B-GBS512-FSDP256_cuda_gpu_kern_sum.csv",
                "nvtx_proj_trace": "llama2-70B-GBS512-FSDP256_nvtx_gpu_proj_trace.csv",
                "mem_time_sum": "llama2-70B-GBS512-FSDP256_cuda_gpu_mem_time_sum.csv", // "with // in a string"
            },
            "analysis_args": { "num_of_iters": 5, "num_of_gpus": 1,
                "nvtx_tag_of_iter": "TSL:XlaModule:#hlo_module=pjit__train_step,program_id=11#", },
        },
    ],
    "kernel_to_class_map": { "xmma_gemm": "gemm", "fmha_": "fmha", "compute_dot_do_o": "fmha",
        "convert_dq_to_16bits": "fmha", "fusion": "fusion", },
}
JSON
(cd / && "$GPUTAP" analyze --config "$T/cfg/c.json" >"$T/c.txt" 2>/dev/null)
if cmp -s "$T/c.txt" "$L/expected-output.txt"; then ok config-comments-trailing-commas; else notok config-comments-trailing-commas "$(diff "$T/c.txt" "$L/expected-output.txt" | head)"; fi

# Old nsys names and headers (gpukernsum / gpumemtimesum, "Total Time", "Operations", HtoD).
expect_status old-headers 0 "$GPUTAP" analyze --iters 2 --nvtx step --map "$D/map.json" "$D/old/run"
contains old-gemm-total "$T/.out" "gemm                        1.50                1           60.00            3.00                3         60.00"
contains old-others "$T/.out" "others                      1.00                1           40.00            2.00                2         40.00"
contains old-nccl "$T/.out" "AllReduce                   2.00                2           4.00                4"
contains old-memcpy-name "$T/.out" "[CUDA memcpy H2D]"
contains old-memcpy-d2h "$T/.out" "[CUDA memcpy D2H]"
contains old-nvtx-count "$T/.out" "NVTX range count: 2"
contains old-nvtx-total "$T/.out" "NVTX total range time: 12.000 (ms)"
# Given as one of its files instead of the prefix: the same
"$GPUTAP" analyze --iters 2 --nvtx step --map "$D/map.json" "$D/old/run_gpukernsum.csv" >"$T/o2.txt" 2>&1
if diff -q <(sed 1d "$T/.out") <(sed 1d "$T/o2.txt") >/dev/null; then ok csv-file-as-input; else notok csv-file-as-input; fi

# Quoted fields with commas and doubled quotes, CRLF line ends, a byte-order mark.
expect_status quoted-crlf-bom 0 "$GPUTAP" analyze --map "$D/map.json" "$D/quoted/q"
contains quoted-nccl "$T/.out" "SendRecv"
contains quoted-gemm "$T/.out" "gemm                        5.00                7           83.33"
contains quoted-others "$T/.out" "others                      1.00                1           16.67"

# A missing NVTX tag: a clear message, and the rest still prints.
expect_status missing-tag 0 "$GPUTAP" analyze --nvtx nope --map "$D/map.json" "$D/old/run"
contains missing-tag-message "$T/.out" "no NVTX range named \"nope\""
contains missing-tag-rest "$T/.out" "NCCL total instances: 4"

# A missing NVTX file named in a config: a message, the rest prints.
sed 's/llama2-70B-GBS512-FSDP256_nvtx_gpu_proj_trace.csv/missing.csv/' "$L/config.json" >"$T/cfg/m.json"
expect_status missing-nvtx-file 0 "$GPUTAP" analyze --config "$T/cfg/m.json"
contains missing-nvtx-file-message "$T/.out" "missing.csv: No such file or directory"
contains missing-nvtx-file-rest "$T/.out" "Kernel total instances: 39385"

# Overlapping map keys of two classes: an error that names both.
echo '{"gemm": "a", "xmma_gemm": "b"}' >"$T/bad-map.json"
expect_status overlapping-keys 1 "$GPUTAP" analyze --map "$T/bad-map.json" "$D/old/run"
contains overlapping-keys-named "$T/.out" "\"gemm\" (class a) and \"xmma_gemm\" (class b) overlap"

# Bad input: file and line named, status 1.
expect_status bad-number 1 "$GPUTAP" analyze "$D/bad/num"
contains bad-number-line "$T/.out" "num_cuda_gpu_kern_sum.csv:3: not a number"
expect_status bad-columns 1 "$GPUTAP" analyze "$D/bad/cols"
contains bad-columns-line "$T/.out" "cols_cuda_gpu_kern_sum.csv:2: 3 fields, the header has 4"
expect_status bad-config-json 1 "$GPUTAP" analyze --config "$D/bad/config.json"
contains bad-config-line "$T/.out" "config.json:4: invalid JSON"
expect_status no-such-input 1 "$GPUTAP" analyze "$T/nothing-here"
contains no-such-input-message "$T/.out" "nothing-here"

# Usage errors: status 2.
expect_status usage-no-input 2 "$GPUTAP" analyze
expect_status usage-bad-format 2 "$GPUTAP" analyze --format xml "$D/old/run"
expect_status usage-bad-iters 2 "$GPUTAP" analyze --iters zero "$D/old/run"
# Options may follow the inputs, as with most commands.
expect_status options-after-input 0 "$GPUTAP" analyze "$D/old/run" --format json
contains options-after-input-json "$T/.out" '"schema_version"'
expect_status help 0 "$GPUTAP" analyze --help
contains help-text "$T/.out" "Exit status"
# the set's three files named (a shell's *.csv) are one input, read once: totals as with the kernel file alone
"$GPUTAP" analyze "$L"/llama2-70B-GBS512-FSDP256_cuda_gpu_kern_sum.csv >"$T/one.txt" 2>/dev/null
"$GPUTAP" analyze "$L"/*.csv >"$T/glob.txt" 2>/dev/null
if [ -s "$T/one.txt" ] && cmp -s "$T/one.txt" "$T/glob.txt"; then ok csv-set-named-thrice-read-once; else
	notok csv-set-named-thrice-read-once "$(diff "$T/one.txt" "$T/glob.txt" | head -8)"; fi
# a folder of nsys summary CSVs beside the config: read as the CSVs (not as Kineto traces), the config pointed to
mkdir -p "$T/nsysdir" && cp "$L"/*.csv "$T/nsysdir/" && printf '{"inputs": [], "kernel_to_class_map": {}}\n' >"$T/nsysdir/config.json"
"$GPUTAP" analyze "$T/nsysdir" >"$T/dir.txt" 2>"$T/dir.err"
rc=$?
if [ $rc -eq 0 ] && diff <(sed 1d "$T/one.txt") <(sed 1d "$T/dir.txt") >/dev/null; then ok csv-folder; else
	notok csv-folder "exit $rc" "$(head -5 "$T/dir.err")"; fi
contains csv-folder-points-to-config "$T/dir.err" "config.json is not read (gputap analyze --config $T/nsysdir/config.json"
# a folder holding a trace itself (trace.gtr copied out of a run): read as that trace, not refused
"$GPUTAP" analyze "$FIX/trace-v2/trace.gtr" >"$T/gtr1.txt" 2>/dev/null
"$GPUTAP" analyze "$FIX/trace-v2" >"$T/gtrdir.txt" 2>"$T/gtrdir.err"
rc=$?
if [ $rc -eq 0 ] && [ -s "$T/gtr1.txt" ] && diff <(grep -v "^=====" "$T/gtr1.txt") <(grep -v "^=====" "$T/gtrdir.txt") >/dev/null; then
	ok gtr-folder; else notok gtr-folder "exit $rc" "$(head -3 "$T/gtrdir.err")"; fi
# its .partial is left out when the finished trace is beside it, read when alone
mkdir -p "$T/gp" && cp "$FIX/trace-v2/trace.gtr" "$T/gp/trace.gtr" && cp "$FIX/trace-v2/trace.gtr" "$T/gp/trace.gtr.partial"
"$GPUTAP" analyze "$T/gp" >"$T/gp.txt" 2>/dev/null
diff <(grep -v "^=====" "$T/gtr1.txt") <(grep -v "^=====" "$T/gp.txt") >/dev/null && ok gtr-folder-partial-twin-left-out ||
	notok gtr-folder-partial-twin-left-out "$(diff <(grep -v "^=====" "$T/gtr1.txt") <(grep -v "^=====" "$T/gp.txt") | head -5)"
# a folder of gputap runs (one per machine, as gputap fleet takes a job): each run, as if each were named
mkdir -p "$T/job/m2/p7" && cp -r "$FIX/fleet-ddp-2xh200" "$T/job/m1" && cp "$FIX/trace-v2/trace.gtr" "$T/job/m2/p7/" &&
	echo '{}' >"$T/job/m2/run.json"
"$GPUTAP" analyze --format json "$T/job/m1" "$T/job/m2" 2>/dev/null | grep -v '"title"' >"$T/runs1.json"
"$GPUTAP" analyze --format json "$T/job" 2>"$T/runs.err" | grep -v '"title"' >"$T/runs.json"
rc=$?
if [ $rc -eq 0 ] && grep -q '"label": "p7' "$T/runs.json" && grep -q '"label": "rank1' "$T/runs.json" &&
	cmp -s "$T/runs1.json" "$T/runs.json"; then ok runs-folder; else
	notok runs-folder "exit $rc" "$(head -3 "$T/runs.err")" "$(diff "$T/runs1.json" "$T/runs.json" | head -5)"; fi

# NCCL profiler-plugin records matched to kernels by the record's own thread: two threads of one process
# launch AllReduces a microsecond apart (each record just after its own launch, after the other's)
python3 "$GT_TEST_SRCDIR/analyze-data/two_threads_nccl.py" "$T/tt.gtr" >"$T/tt.want" &&
	"$GPUTAP" analyze --format json --collectives "$T/tt.gtr" >"$T/tt.json" 2>"$T/tt.err"
if python3 -c '
import json, sys
want = json.load(open(sys.argv[1]))
rows = json.load(open(sys.argv[2]))["results"][0]["collectives"]
got = sorted((r["comm"], r["seq"], r["start_ns"], r["match"]) for r in rows)
exp = sorted((w["comm"], w["seq"], w["start_ns"], "nccl") for w in want)
assert got == exp, [g for g in got if g not in exp][:4]
' "$T/tt.want" "$T/tt.json" 2>"$T/tt.chk"; then ok nccl-records-by-thread; else notok nccl-records-by-thread "$(cat "$T/tt.chk" "$T/tt.err")"; fi
finish
