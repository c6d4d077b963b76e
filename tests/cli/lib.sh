# Sourced by tests/cli/t_*.sh.  Each check prints "ok NAME" or "not ok NAME".
# GPUTAP, LIBGPUTAP, GT_TEST_SRCDIR come from tests/run-tests.sh.
set -u
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
FIX="$GT_TEST_SRCDIR/fixtures"
_script=$(basename "$0" .sh)
_fails=0

ok() { echo "ok cli/$_script/$1"; }
notok() { echo "not ok cli/$_script/$1"; shift; [ $# -gt 0 ] && printf '  %s\n' "$@" >&2; _fails=$((_fails + 1)); }
# check NAME CMD...: passes if CMD exits 0
check() { local n=$1; shift; if "$@" >"$T/.out" 2>&1; then ok "$n"; else notok "$n" "$(tail -n 20 "$T/.out")"; fi; }
# expect_status NAME STATUS CMD...
expect_status() {
	local n=$1 want=$2; shift 2
	"$@" >"$T/.out" 2>&1; local rc=$?
	if [ "$rc" -eq "$want" ]; then ok "$n"; else notok "$n" "exit $rc, wanted $want" "$(tail -n 20 "$T/.out")"; fi
}
# contains NAME FILE TEXT
contains() { if grep -qF -- "$3" "$2"; then ok "$1"; else notok "$1" "$2 lacks: $3" "$(head -c 2000 "$2")"; fi; }
finish() { exit 0; }
