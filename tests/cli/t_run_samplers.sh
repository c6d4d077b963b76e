#!/usr/bin/env bash
# gputap run --tools power,vram and gputap info with a fake NVML library
# (built here), and without any NVML (as on a machine with no driver).
. "$(dirname "$0")/lib.sh"
PY=${PYTHON:-python3}
jget() { "$PY" -c 'import json,sys; j=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"; }

# No NVML: one clear message, the command still runs and its status is kept.
GPUTAP_NVML_LIB="$T/none.so" "$GPUTAP" run -o "$T/n1" --tools power,vram -- sh -c 'exit 4' >"$T/o" 2>"$T/e"
rc=$?
[ $rc -eq 4 ] && ok no-nvml-status-kept || notok no-nvml-status-kept "exit $rc"
contains no-nvml-message "$T/e" "power, vram: NVML is not available"
[ "$(grep -c 'NVML is not available' "$T/e")" -eq 1 ] && ok no-nvml-one-message || notok no-nvml-one-message "$(cat "$T/e")"
[ ! -e "$T/n1/gpu_info_power_profiler_output.csv" ] && ok no-nvml-no-csv || notok no-nvml-no-csv
[ "$(jget "$T/n1/run.json" 'j["tools"][0]["status"].startswith("not run: NVML")')" = True ] &&
	ok no-nvml-json-status || notok no-nvml-json-status
GPUTAP_NVML_LIB="$T/none.so" GPUTAP_CUDA_LIB="$T/none.so" "$GPUTAP" info >"$T/i0" 2>&1
rc=$?
[ $rc -eq 0 ] && ok info-no-driver-exit-0 || notok info-no-driver-exit-0 "exit $rc"
contains info-no-driver-line "$T/i0" "NVIDIA driver: not found"
GPUTAP_NVML_LIB="$T/none.so" "$GPUTAP" info --format json >"$T/i0.json" 2>&1
check info-json-valid "$PY" -m json.tool "$T/i0.json"
expect_status info-bad-format 2 "$GPUTAP" info --format xml

cat >"$T/fake_nvml.c" <<'CEOF'
/* A fake NVML: 3 GPUs; GPU 1 does not report power; GPU 2 reports only memory.
 * Power and energy come from nvmlDeviceGetFieldValues (instant power 234.567 W)
 * or from the plain calls (123.456 W); with -DNO_FIELDS the library lacks
 * nvmlDeviceGetFieldValues.  At exit the number of calls goes to $FAKE_NVML_COUNTS,
 * with how many energy reads came from the thread that reads power (none should).
 * gputap calls it from two threads: the counts are atomic. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#define INC(x) __atomic_fetch_add(&(x), 1, __ATOMIC_RELAXED)
typedef struct { unsigned long long total, free, used; } mem_t;
typedef struct { unsigned gpu, memory; } util_t;
typedef struct { unsigned id, scope; long long ts, lat; int type, ret; union { unsigned ui; unsigned long long ull; } v; } field_t;
static unsigned long long energy;
static unsigned n_fpower[3], n_fenergy[3], n_power[3], n_energy[3], n_mem[3], n_util[3], n_clock[3], n_temp[3];
static int power_tid, energy_on_power_thread, energy_tids[2];
static void saw_power(void) { __atomic_store_n(&power_tid, gettid(), __ATOMIC_RELAXED); }
static void saw_energy(void) {
	int t = gettid();
	if (t == __atomic_load_n(&power_tid, __ATOMIC_RELAXED)) INC(energy_on_power_thread);
	if (!energy_tids[0]) energy_tids[0] = t; else if (t != energy_tids[0]) energy_tids[1] = t;
}
int nvmlInit_v2(void) { return 0; }
int nvmlShutdown(void) {
	const char *p = getenv("FAKE_NVML_COUNTS");
	FILE *f = p ? fopen(p, "w") : NULL;
	for (int i = 0; f && i < 3; i++)
		fprintf(f, "dev%d fpower=%u fenergy=%u power=%u energy=%u mem=%u util=%u clock=%u temp=%u\n", i, n_fpower[i],
			n_fenergy[i], n_power[i], n_energy[i], n_mem[i], n_util[i], n_clock[i], n_temp[i]);
	if (f) fprintf(f, "threads energy_on_power_thread=%d energy_threads=%d\n", energy_on_power_thread, !!energy_tids[0] + !!energy_tids[1]);
	if (f) fclose(f);
	return 0;
}
const char *nvmlErrorString(int r) { return r ? "Not Supported" : "Success"; }
int nvmlDeviceGetCount_v2(unsigned *n) { *n = 3; return 0; }
int nvmlDeviceGetHandleByIndex_v2(unsigned i, void **h) { *h = (void *)(unsigned long)(i + 1); return 0; }
static int idx(void *h) { return (int)(unsigned long)h - 1; }
int nvmlDeviceGetName(void *h, char *b, unsigned n) { snprintf(b, n, "Fake GPU %d", idx(h)); return 0; }
int nvmlDeviceGetUUID(void *h, char *b, unsigned n) { snprintf(b, n, "GPU-fake-%d", idx(h)); return 0; }
int nvmlDeviceGetMemoryInfo(void *h, mem_t *m) { INC(n_mem[idx(h)]); m->total = 1ull << 34; m->used = (unsigned long long)(idx(h) + 1) << 32; m->free = m->total - m->used; return 0; }
int nvmlDeviceGetPowerUsage(void *h, unsigned *mw) { INC(n_power[idx(h)]); saw_power(); if (idx(h)) return 3; *mw = 123456; return 0; }
int nvmlDeviceGetTotalEnergyConsumption(void *h, unsigned long long *e) { INC(n_energy[idx(h)]); saw_energy(); if (idx(h)) return 3; *e = 1000000 + (energy += 500); return 0; }
#ifndef NO_FIELDS
int nvmlDeviceGetFieldValues(void *h, int n, field_t *v) {
	for (int k = 0; k < n; k++) {
		v[k].ret = idx(h) ? 3 : 0;
		if (v[k].id == 186) INC(n_fpower[idx(h)]), saw_power(), v[k].type = 1, v[k].v.ui = 234567;
		else if (v[k].id == 83) INC(n_fenergy[idx(h)]), saw_energy(), v[k].type = 3, v[k].v.ull = 1000000 + (energy += 500);
		else v[k].ret = 2;
	}
	return 0;
}
#endif
int nvmlDeviceGetUtilizationRates(void *h, util_t *u) { INC(n_util[idx(h)]); if (idx(h) == 2) return 3; u->gpu = 90; u->memory = 30; return 0; }
int nvmlDeviceGetClockInfo(void *h, int c, unsigned *v) { INC(n_clock[idx(h)]); if (idx(h) == 2) return 3; *v = 1500; return 0; }
int nvmlDeviceGetTemperature(void *h, int s, unsigned *v) { INC(n_temp[idx(h)]); if (idx(h) == 2) return 3; *v = 50; return 0; }
int nvmlDeviceGetCudaComputeCapability(void *h, int *a, int *b) { *a = 9; *b = 0; return 0; }
int nvmlSystemGetDriverVersion(char *b, unsigned n) { snprintf(b, n, "999.01"); return 0; }
int nvmlSystemGetNVMLVersion(char *b, unsigned n) { snprintf(b, n, "99.999.01"); return 0; }
int nvmlSystemGetCudaDriverVersion_v2(int *v) { *v = 13000; return 0; }
CEOF
if ! ${CC:-cc} -shared -fPIC -o "$T/libfakenvml.so" "$T/fake_nvml.c" 2>"$T/cc.err" ||
	! ${CC:-cc} -shared -fPIC -DNO_FIELDS -o "$T/libfakenvml-nofields.so" "$T/fake_nvml.c" 2>>"$T/cc.err"; then
	notok fake-nvml-build "$(cat "$T/cc.err")"
	finish
fi
export GPUTAP_NVML_LIB="$T/libfakenvml.so"

"$GPUTAP" info >"$T/i1" 2>&1
contains info-driver "$T/i1" "NVIDIA driver: 999.01"
contains info-gpu "$T/i1" "GPU 2: Fake GPU 2, 16.0 GiB, compute capability 9.0"
"$GPUTAP" info --format json >"$T/i1.json"
[ "$(jget "$T/i1.json" '(len(j["gpus"]), j["gpus"][1]["uuid"], j["features"]["power_sampler"])')" = "(3, 'GPU-fake-1', True)" ] &&
	ok info-json-gpus || notok info-json-gpus "$(cat "$T/i1.json")"

# 3 devices, 20 ms period, for about 2 s (the energy reader: GPU 0 at the start, GPU 1 a
# second later, GPU 2 perhaps just before the end: the reads are free here, and 1 s is the
# shortest wait; the checks read the number of reads from run.json rather than guess the timing).
FAKE_NVML_COUNTS="$T/counts1" DEVICE=all SAMPLING_RATE=0.02 "$GPUTAP" run -o "$T/r1" --tools power,vram -- sleep 2 2>"$T/e1"
rc=$?
[ $rc -eq 0 ] && ok run-status || notok run-status "exit $rc" "$(cat "$T/e1")"
P="$T/r1/gpu_info_power_profiler_output.csv"
V="$T/r1/gpu_info_vram_profiler_output.csv"
S="$T/r1/gpu_samples.csv"
[ "$(head -n1 "$P")" = "time,Power(Watt) GPU0,Power(Watt) GPU1,Power(Watt) GPU2" ] && ok power-header-3 || notok power-header-3 "$(head -n1 "$P")"
[ "$(head -n1 "$V")" = "time,vram(%) GPU0,vram(%) GPU1,vram(%) GPU2" ] && ok vram-header-3 || notok vram-header-3 "$(head -n1 "$V")"
# instant power from the field values; GPU 1 refuses the fields and the plain call: empty
[ "$(sed -n 2p "$P" | cut -d, -f2-)" = "234.567,," ] && ok power-not-supported-empty || notok power-not-supported-empty "$(sed -n 2p "$P")"
[ "$(cut -d, -f2- "$P" | sort -u | grep -vc Power)" = 1 ] && ok power-same-source-every-row || notok power-same-source-every-row "$(cut -d, -f2- "$P" | sort -u)"
[ "$(sed -n 2p "$V" | cut -d, -f2-)" = "25.00,50.00,75.00" ] && ok vram-values || notok vram-values "$(sed -n 2p "$V")"
n=$(($(wc -l <"$P") - 1))
[ "$n" -ge 85 ] && [ "$n" -le 110 ] && ok power-rows-at-rate || notok power-rows-at-rate "$n rows for 2 s at 20 ms"
contains rich-header "$S" "time_ns,device,power_W,energy_J,mem_used_MiB,mem_total_MiB,sm_util_pct,mem_util_pct,sm_clock_MHz,temperature_C"
# the report's power and memory plots draw gpu_samples.csv: a line per GPU with a value, a point per row
"$GPUTAP" report "$T/r1" >"$T/r1.rep" 2>&1
if "$PY" "$GT_TEST_SRCDIR/report/check_samples.py" "$T/r1" "$T/r1.rep" >"$T/r1.chk" 2>&1; then
	ok report-plots-the-samples
else
	notok report-plots-the-samples "$(grep -v '^ok' "$T/r1.chk")"
fi
grep -q '^[0-9]*,2,,,12288.0,16384.0,,,,$' "$S" && ok rich-gpu2-empty-fields || notok rich-gpu2-empty-fields "$(head -n 5 "$S")"
# utilisation, clock, temperature: every 5th tick at 20 ms (100 ms), empty in between
grep -q '^[0-9]*,0,234.567,[0-9.]*,4096.0,16384.0,90,30,1500,50$' "$S" && ok rich-slow-metrics-read || notok rich-slow-metrics-read "$(head -n 8 "$S")"
grep -q '^[0-9]*,0,234.567,[0-9.]*,4096.0,16384.0,,,,$' "$S" && ok rich-slow-metrics-empty-between || notok rich-slow-metrics-empty-between "$(head -n 8 "$S")"
# NVML calls: GPU 0 power by field value every tick, never the plain calls; a device that refused
# the fields is asked once per field; utilisation about every 5th tick (memory: +1 for run.json's
# GPU list); the energy counter by one other thread only, one device a second at most, in turn
out=$("$PY" - "$T/counts1" "$(($(wc -l <"$P") - 1))" "$T/r1/run.json" <<'PYEOF'
import json, sys
c = {l.split()[0]: dict(kv.split("=") for kv in l.split()[1:]) for l in open(sys.argv[1])}
ticks = int(sys.argv[2])
d0, d1 = {k: int(v) for k, v in c["dev0"].items()}, {k: int(v) for k, v in c["dev1"].items()}
th = {k: int(v) for k, v in c["threads"].items()}
tool = json.load(open(sys.argv[3]))["tools"][0]
reads, cut = tool["energy_reads"], tool["reads_cut_for_energy"]  # cut: ticks that read only the power of a GPU under an energy read
bad = []
if not 2 <= reads <= 3: bad.append("energy reads %d" % reads)
if d0["fpower"] != ticks or d0["power"] or d0["energy"] or d0["fenergy"] != 1: bad.append("dev0 %s ticks %d" % (d0, ticks))
if d1["fpower"] != 1 or d1["fenergy"] != 1 or d1["power"] != ticks or d1["energy"] != 1: bad.append("dev1 %s ticks %d" % (d1, ticks))
if th["energy_on_power_thread"] or th["energy_threads"] != 1: bad.append("threads %s" % th)
# memory (vram at 50 Hz, no tap here): every tick for the first 5 (nothing changes), then every 5th
if not (ticks // 5 - cut <= d0["util"] <= ticks // 5 + 1) or not ticks // 5 + 4 - cut <= d0["mem"] <= ticks // 5 + 7:
    bad.append("slow %s ticks %d cut %d" % (d0, ticks, cut))
vr = json.load(open(sys.argv[3]))["tools"][1]
# (a tick that finds a GPU under an energy read leaves its memory for the next: `cut` shifts a few)
if vr["memory_reads_when"] != "10 Hz, on change" or abs(vr["memory_reads"] - 3 * (d0["mem"] - 1)) > 3 * (cut + 1):
    bad.append("vram %s" % vr)
print("ok" if not bad else "; ".join(bad))
PYEOF
)
[ "$out" = ok ] && ok nvml-calls-per-tick || notok nvml-calls-per-tick "$out"
out=$("$PY" - "$S" <<'PYEOF'
import csv, sys
rows = [r for r in csv.DictReader(open(sys.argv[1])) if r["device"] == "0"]
t = [int(r["time_ns"]) for r in rows]
d = [(b - a) / 1e6 for a, b in zip(t, t[1:])]
mean = sum(d) / len(d)
e = [float(r["energy_J"]) for r in rows if r["energy_J"]]
ok = abs(mean - 20) < 3 and e == [0.0]
print("ok" if ok else "bad mean=%.2f energy=%s of %d rows" % (mean, e, len(rows)))
PYEOF
)
[ "$out" = ok ] && ok rich-period-and-energy || notok rich-period-and-energy "$out"
[ -f "$T/r1/samplers/trace.gtr" ] && ok samplers-trace || notok samplers-trace "$(ls "$T/r1")"
[ "$(jget "$T/r1/run.json" '[(t["name"], t["status"], t["settings"]["DEVICE"], t["samples"] > 5) for t in j["tools"]]')" = \
	"[('power', 'ok', 'all', True), ('vram', 'ok', 'all', True)]" ] && ok json-sampler-tools || notok json-sampler-tools "$(jget "$T/r1/run.json" 'j["tools"]')"
# the sampler's CPU: both threads together, then each; the reader read GPU 0 and GPU 1
[ "$(jget "$T/r1/run.json" '[(abs(t["thread_cpu_s"] - t["tick_thread_cpu_s"] - t["energy_thread_cpu_s"]) < 2e-6, t["energy_thread_cpu_s"] > 0, 2 <= t["energy_reads"] <= 3, t["thread_cpu_pct"] >= t["energy_thread_cpu_pct"] > 0) for t in j["tools"]]')" = \
	"[(True, True, True, True), (True, True, True, True)]" ] && ok json-sampler-thread-cpu || notok json-sampler-thread-cpu "$(jget "$T/r1/run.json" 'j["tools"]')"
[ "$(jget "$T/r1/run.json" '(len(j["gpus"]), j["gpus"][0]["name"], j["driver_version"], j["cuda_driver_version"])')" = \
	"(3, 'Fake GPU 0', '999.01', '13.0')" ] && ok json-gpus || notok json-gpus
[ "$(jget "$T/r1/run.json" '"DEVICE" in j["environment"] or "SAMPLING_RATE" in j["environment"]')" = False ] &&
	ok sampler-keys-not-exported || notok sampler-keys-not-exported

# madengine's vram CSV and gpu_samples.csv have memory on every row (held between reads), the trace a
# point where it was read
[ "$(awk -F, 'NR > 1 { for (i = 2; i <= NF; i++) if ($i == "") e++ } END { print e + 0 }' "$V")" = 0 ] &&
	ok vram-value-every-row || notok vram-value-every-row "$(head -n 5 "$V")"
# (a GPU's first tick cut for the energy reader's first read has nothing to hold yet)
[ "$(grep -c ',16384\.0,' "$S")" -ge "$(($(wc -l <"$S") - 1 - $(jget "$T/r1/run.json" 'j["tools"][1]["reads_cut_for_energy"]')))" ] &&
	ok rich-memory-every-row || notok rich-memory-every-row "$(grep -c ',16384\.0,' "$S") of $(wc -l <"$S")"

# GPUTAP_SAMPLE_EVERY_TICK=1: memory on every tick, whatever the rate
FAKE_NVML_COUNTS="$T/counts3" GPUTAP_SAMPLE_EVERY_TICK=1 DEVICE=0 SAMPLING_RATE=0.02 "$GPUTAP" run -o "$T/r3" --tools vram -- sleep 0.5 2>"$T/e3"
out=$(jget "$T/r3/run.json" '(j["tools"][0]["memory_reads"] == j["tools"][0]["samples"] > 10, j["tools"][0]["memory_reads_when"], j["tools"][0]["memory_cells_held"])')
[ "$out" = "(True, 'every tick', 0)" ] && ok vram-every-tick-when-asked || notok vram-every-tick-when-asked "$out" "$(cat "$T/e3")"

# GPUTAP_SAMPLE_VERIFY=1: every tick read, the rules run beside; run.json counts what they would have held
GPUTAP_SAMPLE_VERIFY=1 DEVICE=all SAMPLING_RATE=0.02 "$GPUTAP" run -o "$T/r4" --tools power,vram -- sleep 0.5 2>"$T/e4"
# (memory_reads: the reads the rules would have made; the fake's power never changes, so it is read on every tick)
out=$(jget "$T/r4/run.json" '[(t["name"], 0 <= 3 * t["samples"] - t["memory_reads"] - t["verify"]["memory_cells_skipped"] <= t["reads_cut_for_energy"], t["verify"]["memory_cells_skipped"] > 3 * t["samples"] // 2, t["verify"]["memory_cells_differ"], t["verify"]["power_cells_skipped"], t["power_reads_when"]) for t in j["tools"][:1]]')
[ "$out" = "[('power', True, True, 0, 0, \"around the driver's refresh\")]" ] && ok sample-verify ||
	notok sample-verify "$out" "$(cat "$T/e4")"

# With the tap (stand-in libcuda, tests/fakecuda): each allocation and free the program makes is
# followed by a memory read on the next tick, between the 10 Hz ones; the shared counter's page is
# gone after the run and the program has no more descriptors open than without the vram tool.
CUDA_INC=${CUDA_HOME:-/usr/local/cuda}/include
mkdir -p "$T/cuda"
if cc -O1 -shared -fPIC -Wl,-soname,libcuda.so.1 -Wl,-Bsymbolic -I"$CUDA_INC" -o "$T/cuda/libcuda.so.1" \
	"$GT_TEST_SRCDIR/fakecuda/libcuda.c" -lpthread 2>"$T/cc2.err" &&
	cc -O1 -I"$CUDA_INC" -o "$T/alloc_prog" "$GT_TEST_SRCDIR/fakecuda/alloc_prog.c" -ldl 2>>"$T/cc2.err"; then
	for tools in kernel_trace,vram kernel_trace; do
		LD_LIBRARY_PATH="$T/cuda${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" DEVICE=all SAMPLING_RATE=0.01 \
			"$GPUTAP" run -o "$T/a-$tools" --tools $tools -- "$T/alloc_prog" 5 150 >"$T/a-$tools.out" 2>"$T/a-$tools.err"
	done
	out=$(jget "$T/a-kernel_trace,vram/run.json" '[(t["memory_reads_when"], 15 <= t["memory_reads_after_alloc"] <= 30, t["memory_reads_after_alloc"] % 3) for t in j["tools"] if t["name"] == "vram"]')
	[ "$out" = "[('10 Hz, on change, after allocations', True, 0)]" ] && ok vram-reads-after-allocations ||
		notok vram-reads-after-allocations "$out" "$(cat "$T/a-kernel_trace,vram.err")"
	grep -q '^done$' "$T/a-kernel_trace,vram.out" && [ "$(grep '^fds' "$T/a-kernel_trace,vram.out")" = "$(grep '^fds' "$T/a-kernel_trace.out")" ] &&
		ok vram-counter-no-descriptor-left || notok vram-counter-no-descriptor-left "$(cat "$T"/a-*.out)"
	name=$(sed -n 's/^memgen \/\(gputap-mem\..*\)$/\1/p' "$T/a-kernel_trace,vram.out")
	[ -n "$name" ] && [ ! -e "/dev/shm/$name" ] && grep -qx 'memgen -' "$T/a-kernel_trace.out" && ok vram-counter-removed ||
		notok vram-counter-removed "$name" "$(cat "$T"/a-*.out)"
else
	notok fakecuda-build "$(cat "$T/cc2.err")"
fi

# Without nvmlDeviceGetFieldValues (older drivers), or with GPUTAP_NVML_NO_FIELDS=1: the plain calls.
for v in lib env; do
	if [ $v = lib ]; then lib="$T/libfakenvml-nofields.so" nf=; else lib="$GPUTAP_NVML_LIB" nf=1; fi
	GPUTAP_NVML_LIB="$lib" GPUTAP_NVML_NO_FIELDS=$nf DEVICE=all SAMPLING_RATE=0.02 \
		"$GPUTAP" run -o "$T/nf$v" --tools power -- sleep 0.1 2>"$T/enf"
	[ "$(sed -n 2p "$T/nf$v/gpu_info_power_profiler_output.csv" | cut -d, -f2-)" = "123.456,," ] && ok no-fields-$v-plain-calls ||
		notok no-fields-$v-plain-calls "$(head -n 3 "$T/nf$v/gpu_info_power_profiler_output.csv")" "$(cat "$T/enf")"
	grep -q '^[0-9]*,0,123.456,0.000,' "$T/nf$v/gpu_samples.csv" && ok no-fields-$v-energy || notok no-fields-$v-energy "$(head -n 3 "$T/nf$v/gpu_samples.csv")"
done

# No DEVICE given: the one GPU a numeric CUDA_VISIBLE_DEVICES shows; under a launcher that gives the
# process its rank on the machine (torchrun's LOCAL_RANK, Open MPI's, srun's SLURM_LOCALID) the rank's
# GPU, through a numeric CUDA_VISIBLE_DEVICES; a DEVICE given wins; GPUs named by UUID, or fewer
# visible GPUs than the rank, keep the default (GPU 0).
lr() { # NAME WANT-DEVICE WANT-FROM ENV...
	local n=$1 want=$2 from=$3; shift 3
	env -u DEVICE -u LOCAL_RANK -u OMPI_COMM_WORLD_LOCAL_RANK -u MV2_COMM_WORLD_LOCAL_RANK -u SLURM_LOCALID \
		-u CUDA_VISIBLE_DEVICES "$@" SAMPLING_RATE=0.05 "$GPUTAP" run -o "$T/lr-$n" --tools power -- true 2>"$T/lr-$n.err"
	local got
	got=$(jget "$T/lr-$n/run.json" '(j["tools"][0]["settings"]["DEVICE"], j["tools"][0]["settings"].get("DEVICE_from", "-"), j["tools"][0]["devices"])')
	[ "$got" = "('$want', '$from', [$want])" ] && ok "local-rank-$n" || notok "local-rank-$n" "$got" "$(cat "$T/lr-$n.err")"
}
lr plain 2 LOCAL_RANK=2 LOCAL_RANK=2
lr visible 0 "LOCAL_RANK=1, CUDA_VISIBLE_DEVICES=2,0" LOCAL_RANK=1 CUDA_VISIBLE_DEVICES=2,0
lr uuid 0 - LOCAL_RANK=1 CUDA_VISIBLE_DEVICES=GPU-aaaa,GPU-bbbb
lr none 0 - LOCAL_RANK=
lr one-visible 2 CUDA_VISIBLE_DEVICES=2 CUDA_VISIBLE_DEVICES=2 LOCAL_RANK=0
lr openmpi 1 OMPI_COMM_WORLD_LOCAL_RANK=1 OMPI_COMM_WORLD_LOCAL_RANK=1 SLURM_LOCALID=2
lr srun 2 SLURM_LOCALID=2 SLURM_LOCALID=2
lr beyond-visible 0 - LOCAL_RANK=3 CUDA_VISIBLE_DEVICES=0,1
env LOCAL_RANK=1 DEVICE=all SAMPLING_RATE=0.05 "$GPUTAP" run -o "$T/lr-given" --tools power -- true 2>/dev/null
[ "$(jget "$T/lr-given/run.json" '(j["tools"][0]["settings"]["DEVICE"], "DEVICE_from" in j["tools"][0]["settings"])')" = "('all', False)" ] &&
	ok local-rank-device-given-wins || notok local-rank-device-given-wins "$(jget "$T/lr-given/run.json" 'j["tools"][0]["settings"]')"

# A device that does not exist: one message, the run goes on.
"$GPUTAP" run -o "$T/r2" --context '{"tools":[{"name":"gpu_info_power_profiler","env_vars":{"DEVICE":"5"}}]}' -- true 2>"$T/e2"
rc=$?
[ $rc -eq 0 ] && ok bad-device-run-goes-on || notok bad-device-run-goes-on "exit $rc"
contains bad-device-message "$T/e2" "GPU 5 does not exist (3 GPUs found)"
finish
