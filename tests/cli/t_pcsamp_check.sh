#!/usr/bin/env bash
# tests/gpu/pcsamp_check.py (gputap's PC sampling against Nsight Compute's) on exports shaped like
# ncu 2025.3's: tests/fixtures/pcsamp-check holds a gputap run of the check program on an H100
# (pc_sampling.json, period 2^17), nvdisasm -g of its module (the .text sections and the data
# sections after them), and an ncu raw page and SASS source page made from that run's counts
# (two launches a kernel, each count halved with up to 10 % noise; addresses 0x7f3a1c0x0000 on).
# The checker must pass them, still pass when the addresses do not parse (offsets by place), and
# fail a moved hottest line, a different dominant reason and shares beyond the tolerance.
. "$(dirname "$0")/lib.sh"
F="$FIX/pcsamp-check"
chk="$GT_TEST_SRCDIR/gpu/pcsamp_check.py"
py=${PYTHON:-python3}
run_chk() { # RAW SASS TOL: the checker's output in $T/o, its exit status returned
	"$py" "$chk" "$F/run" "$1" "$2" "$F/nvdisasm-g.txt" "$3" t >"$T/o" 2>&1
}

run_chk "$F/ncu-raw.csv" "$F/ncu-sass.csv" 0.10
rc=$?
if [ $rc -eq 0 ] && grep -q '^t: 9 passed, 0 failed; largest share difference 1.8 points' "$T/o"; then
	ok agree
else
	notok agree "exit $rc" "$(cat "$T/o")"
fi
for k in k_mem:13 k_fma:22 k_sync:33; do
	grep -q "^ok t ${k%:*} hottest line: gputap pcsamp_kernels.cuh:${k#*:}, ncu pcsamp_kernels.cuh:${k#*:} " "$T/o" &&
		ok "line-${k%:*}" || notok "line-${k%:*}" "$(cat "$T/o")"
done
# every instruction of ncu's listing at nvdisasm's offset (its opcode the same there)
grep -q 'k_sync hottest line.*(.* samples; 208 of 208 opcodes as nvdisasm.s, placed by address)' "$T/o" &&
	ok placed-by-address || notok placed-by-address "$(cat "$T/o")"
grep -q '^info t k_mem hottest PC: gputap +0x1e0 95.7% `FADD R11, R11, R11`, ncu +0x1e0 95.8% `FADD' "$T/o" &&
	ok hottest-pc || notok hottest-pc "$(cat "$T/o")"

# addresses that do not parse: each instruction's place in the list is its offset
sed 's/^"0x7f3a1c0\([0-9a-f]*\)",/"addr\1",/' "$F/ncu-sass.csv" >"$T/sass-noaddr.csv"
run_chk "$F/ncu-raw.csv" "$T/sass-noaddr.csv" 0.10
rc=$?
[ $rc -eq 0 ] && grep -q 'k_mem hottest line.*96 of 96 opcodes as nvdisasm.s, placed by index' "$T/o" &&
	ok placed-by-index || notok placed-by-index "exit $rc" "$(cat "$T/o")"

# k_mem's hottest instruction (+0x1e0, line 13) given to +0x130 (line 12): the line check fails
awk -F'","' 'BEGIN { OFS = FS } /^"0x7f3a1c0101e0"/ { $3 = "0"; $5 = "0" } /^"0x7f3a1c010130"/ { $3 = "9000"; $5 = "9000" } { print }' \
	"$F/ncu-sass.csv" >"$T/sass-moved.csv"
run_chk "$F/ncu-raw.csv" "$T/sass-moved.csv" 0.10
rc=$?
[ $rc -eq 1 ] && grep -q '^not ok t k_mem hottest line: gputap pcsamp_kernels.cuh:13, ncu pcsamp_kernels.cuh:12 ' "$T/o" &&
	grep -q '^t: 8 passed, 1 failed' "$T/o" && ok moved-line-fails || notok moved-line-fails "exit $rc" "$(cat "$T/o")"

# ncu's k_sync barrier samples shrunk to a tenth: Wait leads there, and the shares are far off
"$py" - "$F/ncu-raw.csv" "$T/raw-barrier.csv" <<'PY'
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
c = rows[0].index("smsp__pcsamp_warps_issue_stalled_barrier")
for r in rows[2:]:
    if r[4].startswith("k_sync"):
        r[c] = str(int(r[c].replace(",", "")) // 10)
csv.writer(open(sys.argv[2], "w", newline=""), quoting=csv.QUOTE_ALL, lineterminator="\n").writerows(rows)
PY
run_chk "$T/raw-barrier.csv" "$F/ncu-sass.csv" 0.10
rc=$?
[ $rc -eq 1 ] && grep -q '^not ok t k_sync dominant: gputap Barrier, ncu Wait ' "$T/o" &&
	grep -q '^not ok t k_sync shares: largest difference' "$T/o" && grep -q '^ok t k_mem shares' "$T/o" &&
	ok other-reason-fails || notok other-reason-fails "exit $rc" "$(cat "$T/o")"

# the tolerance is applied: k_fma's 1.8 points fail at 1.0, k_mem's 0.1 pass
run_chk "$F/ncu-raw.csv" "$F/ncu-sass.csv" 0.01
rc=$?
[ $rc -eq 1 ] && grep -q '^not ok t k_fma shares: largest difference 1.8 points (tolerance 1.0)' "$T/o" &&
	grep -q '^ok t k_mem shares: largest difference 0.1 points (tolerance 1.0)' "$T/o" &&
	ok tolerance || notok tolerance "exit $rc" "$(cat "$T/o")"

# nothing of a kernel in ncu's export: a failure, not a pass
grep -v 'k_fma' "$F/ncu-raw.csv" >"$T/raw-nofma.csv"
run_chk "$T/raw-nofma.csv" "$F/ncu-sass.csv" 0.10
rc=$?
[ $rc -eq 1 ] && grep -q '^not ok t k_fma: missing (gputap True, ncu raw page False)' "$T/o" &&
	ok missing-kernel-fails || notok missing-kernel-fails "exit $rc" "$(cat "$T/o")"
finish
