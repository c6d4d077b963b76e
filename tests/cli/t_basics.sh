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
# GPUTAP_LOG sets the CLI's level too: quiet silences an error (the exit status still says it),
# a bad value is named once and the default level is kept
expect_status log-default-error 2 "$GPUTAP" frobnicate
contains log-default-error-text "$T/.out" "is not a gputap command"
GPUTAP_LOG=quiet expect_status log-quiet 2 "$GPUTAP" frobnicate
if [ -s "$T/.out" ]; then notok log-quiet-silent "printed: $(head -c 300 "$T/.out")"; else ok log-quiet-silent; fi
GPUTAP_LOG=loud expect_status log-bad-value 2 "$GPUTAP" frobnicate
contains log-bad-value-named "$T/.out" "GPUTAP_LOG=loud is not valid"
contains log-bad-value-default "$T/.out" "is not a gputap command"
# every command's help is printed as written: no printf escapes left in it
for c in $("$GPUTAP" --help | sed -n 's/^  \([a-z]*\)  .*/\1/p'); do
	"$GPUTAP" help "$c" >"$T/h.$c" 2>&1
	if grep -q '%%' "$T/h.$c"; then notok "help-$c-no-double-percent" "$(grep '%%' "$T/h.$c")"; else ok "help-$c-no-double-percent"; fi
done
finish
