# Sourced by bench/overhead/ab.sh and phases.sh: one process of an in-process benchmark.
# gt_bench_one FILE ROUND MODE OUTDIR CMD...: runs CMD, keeps its JSON line as "A ROUND MODE {json}"
# in FILE (bench/overhead/runs.py reads them), says so if it failed, removes its output folder OUTDIR.
gt_bench_one() {
	local file=$1 r=$2 m=$3 o=$4 tmp
	shift 4
	tmp=$(mktemp -d)
	"$@" >"$tmp/out" 2>"$tmp/err" || echo "# $m run $r failed: $(tail -1 "$tmp/err")"
	echo "A $r $m $(cat "$tmp/out")" >>"$file"
	rm -rf "$o" "$tmp"
}
# gt_bench_setup [REPS] [OUT]: REPS (default 7), OUT (default a new folder, made), B (GT_GPU_BUILD or
# .carry/build), LIB (its libgputap.so), W (a scratch folder removed at exit); run from the top.
gt_bench_setup() {
	REPS=${1:-7}
	OUT=${2:-$(mktemp -d)}
	B=${GT_GPU_BUILD:-$PWD/.carry/build}
	LIB=$B/libgputap.so
	W=$(mktemp -d)
	trap 'rm -rf "$W"' EXIT
	mkdir -p "$OUT"
}
