#!/usr/bin/env bash
# Installs what gputap needs to build and test on a fresh Debian/Ubuntu machine.
# Idempotent: installs only what is missing.  The CUDA toolkit (headers, CUPTI)
# is expected under /usr/local/cuda (set CUDA_HOME otherwise); the driver is
# only needed at run time on a GPU machine.
set -eu
pkgs="build-essential pkg-config libyajl-dev libsqlite3-dev zlib1g-dev cppcheck python3 python3-dev python3-pip python3-venv python3-setuptools sqlite3"
missing=""
for p in $pkgs; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
	SUDO=""
	[ "$(id -u)" -ne 0 ] && SUDO=sudo
	echo "gputap setup: installing$missing"
	$SUDO apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $missing >/dev/null
fi
# libFuzzer (make check runs each fuzz target for a few seconds): clang, and on Debian 12 its
# runtime libraries come apart in libclang-rt-dev (older releases ship them with clang)
if ! echo 'int LLVMFuzzerTestOneInput(const char *d, long n) { return 0; }' |
	clang -x c -fsanitize=fuzzer -o /dev/null - 2>/dev/null; then
	SUDO=""
	[ "$(id -u)" -ne 0 ] && SUDO=sudo
	rt=""
	apt-cache show libclang-rt-dev >/dev/null 2>&1 && rt=libclang-rt-dev
	echo "gputap setup: installing clang $rt (libFuzzer)"
	$SUDO apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq clang $rt >/dev/null
fi
# report.html checked in a real browser (tests/cli/t_report_browser.sh): Debian's chromium, run headless
if ! command -v chromium >/dev/null 2>&1 && ! command -v chromium-browser >/dev/null 2>&1; then
	SUDO=""
	[ "$(id -u)" -ne 0 ] && SUDO=sudo
	echo "gputap setup: installing chromium (headless browser for the report test)"
	$SUDO apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium >/dev/null
fi
PY=${PYTHON:-python3}
if ! "$PY" -c 'import pytest' 2>/dev/null; then
	"$PY" -m pip install -q pytest 2>/dev/null || "$PY" -m pip install -q --break-system-packages pytest
fi
# gputap fleet (the Python package's fleet extra) and its tests: Dask, Arrow/Parquet, pandas, DuckDB
if ! "$PY" -c 'import dask.distributed, pyarrow, pandas, duckdb' 2>/dev/null; then
	"$PY" -m pip install -q 'dask[distributed]' pyarrow pandas duckdb 2>/dev/null ||
		"$PY" -m pip install -q --break-system-packages 'dask[distributed]' pyarrow pandas duckdb
fi
# the Python package's build (pip install --no-build-isolation ./python, used by its tests)
if ! "$PY" -c 'import setuptools, wheel, venv' 2>/dev/null; then
	"$PY" -m pip install -q setuptools wheel 2>/dev/null || "$PY" -m pip install -q --break-system-packages setuptools wheel
fi
cuda=${CUDA_HOME:-/usr/local/cuda}
if [ ! -f "$cuda/include/cupti.h" ]; then
	echo "gputap setup: warning: $cuda/include/cupti.h not found; install the CUDA toolkit or set CUDA_HOME" >&2
fi
echo "gputap setup: dependencies present"
