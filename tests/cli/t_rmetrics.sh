#!/usr/bin/env bash
# Range metrics without a GPU: option and metric-list checks, the tool entry,
# the library's entry points and its no-GPU path, `info --metrics` without a
# GPU, and the summary/report tables read from a range_metrics.csv recorded on
# an H100 (tests/fixtures/range-metrics).
. "$(dirname "$0")/lib.sh"

expect_status bad-metric-name 2 "$GPUTAP" run -o "$T/r1" --metrics 'gpu__time_duration.sum,rm;x' -- /bin/true
contains bad-metric-message "$T/.out" "--metrics: 'rm;x' is not a metric name"
[ ! -e "$T/r1" ] && ok bad-metric-nothing-created || notok bad-metric-nothing-created "$(ls "$T/r1")"
expect_status bad-mode 2 "$GPUTAP" run -o "$T/r2" --metrics-mode fast -- /bin/true
contains bad-mode-message "$T/.out" "--metrics-mode 'fast': expected auto, kernel or range"
expect_status tools-help 0 "$GPUTAP" run --tools help
contains tools-help-lists-range-metrics "$T/.out" "range_metrics"
expect_status run-help 0 "$GPUTAP" help run
contains run-help-metrics "$T/.out" "--metrics-mode auto|kernel|range"

# the command runs, its environment says what was asked (no GPU here: nothing is measured)
expect_status run-no-gpu 0 "$GPUTAP" run -o "$T/r3" --metrics default --metrics-mode kernel -- /bin/true
contains run-json-metrics "$T/r3/run.json" "gpu__time_duration.sum,smsp__inst_executed.sum,dram__bytes_read.sum"
contains run-json-mode "$T/r3/run.json" "\"GPUTAP_METRICS_MODE\": \"kernel\""
contains run-json-nvtx "$T/r3/run.json" "nvtx"
# per range with the kernel trace named: the tap is told to keep kernel records (values marked not exact);
# per range without naming it, or the default tools: not told (kernel records stop, values exact)
expect_status run-range-ktrace 0 "$GPUTAP" run -o "$T/r3k" --tools kernel_trace --metrics default --metrics-mode range -- /bin/true
contains run-range-ktrace-keeps-records "$T/r3k/run.json" "\"GPUTAP_METRICS_KERNEL_TRACE\": \"1\""
expect_status run-range-default-tools 0 "$GPUTAP" run -o "$T/r3d" --metrics default --metrics-mode range -- /bin/true
! grep -q GPUTAP_METRICS_KERNEL_TRACE "$T/r3d/run.json" && ok run-range-default-tools-exact ||
	notok run-range-default-tools-exact "$(grep -n METRICS "$T/r3d/run.json")"
expect_status tool-env 0 "$GPUTAP" run -o "$T/r4" --context '{"tools":[{"name":"range_metrics","env_vars":{"GPUTAP_METRICS":"smsp__inst_executed.sum"}}]}' -- /bin/true
contains tool-env-list "$T/r4/run.json" "\"GPUTAP_METRICS\": \"smsp__inst_executed.sum\""
expect_status metrics-without-tap 0 "$GPUTAP" run -o "$T/r5" --tools power --metrics default -- /bin/true
contains metrics-without-tap-warns "$T/.out" "--metrics needs the tap"

# info --metrics: without a GPU one clear error; a bad name is refused before anything
expect_status info-no-gpu 1 env GPUTAP_CUDA_LIB=/nonexistent/libcuda.so.1 "$GPUTAP" info --metrics
contains info-no-gpu-message "$T/.out" "info --metrics: no CUDA GPU here"
expect_status info-bad-name 1 "$GPUTAP" info --metrics 'smsp__x.sum,oops'
contains info-bad-name-message "$T/.out" "'oops' is not a metric name"

# the tables, from a range_metrics.csv recorded on an H100
mkdir -p "$T/run"
cp -r "$FIX/range-metrics/pid2621" "$T/run/"
expect_status report-table 0 "$GPUTAP" report "$T/run"
contains report-table-title "$T/.out" "Range metrics of pid2621 (per-kernel"
contains report-table-row "$T/.out" "  iter/phase_a       6 smsp__inst_executed... inst   3145728    524288    524288"
contains report-html-table "$T/run/report.html" "<h2 id=\"range-metrics\">Range metrics</h2>"
contains report-html-row "$T/run/report.html" "<tr><td>iter/phase_b</td><td>6</td>"
w=$(awk 'length($0) > 80' "$T/.out" | grep -c "^  " || true)
[ "$w" -eq 0 ] && ok report-table-80-columns || notok report-table-80-columns "$(awk 'length($0) > 80' "$T/.out")"

# the library's entry points without a GPU: clear errors, the program unaffected
if command -v cc >/dev/null; then
	cat >"$T/rm.c" <<'EOC'
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
int main(void)
{
	int (*en)(const char *, const char *) = (int (*)(const char *, const char *))dlsym(RTLD_DEFAULT, "gputap_metrics_enable");
	const char *(*why)(void) = (const char *(*)(void))dlsym(RTLD_DEFAULT, "gputap_last_error");
	int (*push)(const char *) = (int (*)(const char *))dlsym(RTLD_DEFAULT, "gputap_range_push");
	int (*pop)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "gputap_range_pop");
	if (!en || !why || !push || !pop)
		return 9;
	int rc = en(NULL, "fast");
	printf("badmode %d %s\n", rc, why());
	rc = en("inst executed", "auto");
	printf("badname %d %s\n", rc, why());
	rc = en("smsp__inst_executed.sum", "kernel");
	printf("nogpu %d %s\n", rc, why());
	push("a");
	pop();
	return 0;
}
EOC
	if cc -o "$T/rm" "$T/rm.c" -ldl 2>"$T/cc.err"; then
		env LD_PRELOAD="$LIBGPUTAP" GPUTAP_OUT="$T/o" GPUTAP_CUDA_LIB=/nonexistent "$T/rm" >"$T/rm.out" 2>"$T/rm.err"
		rc=$?
		[ $rc -eq 0 ] && ok api-program-runs || notok api-program-runs "rc $rc" "$(cat "$T/rm.err")"
		contains api-bad-mode "$T/rm.out" "badmode -4 unknown range-metrics mode 'fast': expected auto, kernel or range"
		contains api-bad-name "$T/rm.out" "badname -4 gputap_metrics_enable: 'inst' is not a metric name"
		grep -qE "^nogpu -1 .+" "$T/rm.out" && ok api-no-gpu || notok api-no-gpu "$(cat "$T/rm.out")"
		env LD_PRELOAD="$LIBGPUTAP" "$T/rm" >"$T/rm2.out" 2>&1
		contains api-not-recording "$T/rm2.out" "nogpu -5 gputap is not recording in this process"
		# GPUTAP_METRICS set, the program never uses CUDA: nothing measured, nothing written, no message
		env LD_PRELOAD="$LIBGPUTAP" GPUTAP_OUT="$T/o3" GPUTAP_METRICS=smsp__inst_executed.sum sh -c 'exit 0' >"$T/rm3.out" 2>&1
		[ ! -s "$T/rm3.out" ] && ! ls "$T"/o3/*/range_metrics.csv >/dev/null 2>&1 && ok env-no-cuda-quiet ||
			notok env-no-cuda-quiet "$(cat "$T/rm3.out")"
	else
		notok api-build "$(cat "$T/cc.err")"
	fi
fi
finish
