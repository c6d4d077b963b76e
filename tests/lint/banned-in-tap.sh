#!/usr/bin/env bash
# The tap lives in other people's processes: its code must not call what can
# exit, abort, or (in hook paths) allocate, lock stdio or print with stdio.
# Calls allowed on purpose carry a trailing comment "/* lint-ok: why */".
set -u
cd "$(dirname "$0")/../.."
banned='\b(exit|abort|_Exit|quick_exit|assert|gets|sprintf|strcpy|strcat|system|popen|atexit|printf|fprintf|puts|perror|tmpnam)\s*\('
# Hot-path files may not allocate or lock either.
hot_banned='\b(malloc|calloc|realloc|free|strdup|fopen|fwrite|fputs|pthread_mutex_lock|dlopen)\s*\('
bad=0
for f in src/tap/*.c src/tap/*.h; do
	[ -f "$f" ] || continue
	if grep -nE "$banned" "$f" | grep -v 'lint-ok' | grep -vE '^\S+:\s*(\*|//)'; then
		echo "  ^ $f: banned call in the injected library"
		bad=1
	fi
	case "$(basename "$f")" in hook*|ring*|record*|hot*)
		if grep -nE "$hot_banned" "$f" | grep -v 'lint-ok'; then
			echo "  ^ $f: allocation, stdio or lock in a hot-path file"
			bad=1
		fi;;
	esac
done
exit $bad
