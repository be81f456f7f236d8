#!/usr/bin/env bash
# Runs the parser fuzz target for a fixed time: first every regression input
# once (inputs that crashed it before their fix), then libFuzzer from the
# seeds, in a temporary corpus so that nothing under tests/ is written.
# A crash leaves its input in the temporary folder and fails the test; copy
# it into tests/fuzz/regressions/ with the fix.
# Usage: run.sh FUZZER SECONDS
set -euo pipefail
fuzzer=$1 seconds=$2
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/geodes_fuzz.XXXXXX")
trap 'rm -rf "$work"' EXIT
regressions=("$here"/regressions/*)
if [ -e "${regressions[0]}" ]; then
  "$fuzzer" -rss_limit_mb=2048 "${regressions[@]}"
fi
cp "$here"/seeds/* "$work"/
mkdir "$work/corpus"
"$fuzzer" -seed=1 -max_total_time="$seconds" -rss_limit_mb=2048 -max_len=8192 \
  -timeout=10 -print_final_stats=1 -artifact_prefix="$work/" \
  "$work/corpus" "$work"
