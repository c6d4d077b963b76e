#!/usr/bin/env bash
. "$(dirname "$0")/lib.sh"
expect_status version 0 "$GPUTAP" --version
contains version-text "$T/.out" "gputap "
# the trace format this build writes, from the format header (not a number of its own)
v=$(sed -n 's/^#define GT_TRACE_VERSION \([0-9]*\)u.*/\1/p' "$(dirname "$0")/../../include/gputap/format.h")
contains version-trace-format "$T/.out" "(trace format $v)"
expect_status help 0 "$GPUTAP" --help
contains help-lists-run "$T/.out" "run "
contains help-lists-analyze "$T/.out" "analyze "
expect_status no-args-is-usage 2 "$GPUTAP"
expect_status unknown-command 2 "$GPUTAP" frobnicate
contains unknown-command-message "$T/.out" "'frobnicate' is not a gputap command"
expect_status help-help 0 "$GPUTAP" help help
expect_status help-unknown 2 "$GPUTAP" help nope
finish
