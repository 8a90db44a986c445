#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Instructions per operation on the cache hit path, counted by callgrind:
# bench_hit_path run with COUNT operations and with 0, the difference divided
# by COUNT. Deterministic, so it compares builds on a busy machine.
# Usage: devtools/hit-path-instructions.sh [BUILD_DIR] [KIND...]
#   LIB_DIR=dir  runs the same benchmark on another build's libhpm.so
#                (e.g. the commit before a change: before and after)
set -euo pipefail

build=${1:-build}
shift || true
kinds=("$@")
[ ${#kinds[@]} -gt 0 ] || kinds=(pair64 pair1000 pair4k pair64k burst4k bulk4k bulk64)
bench=$build/test/bench_hit_path
count=20000
command -v valgrind >/dev/null || { echo "valgrind is not installed" >&2; exit 1; }
[ -x "$bench" ] || { echo "no $bench: build with -Dtests=true" >&2; exit 1; }

instructions() {
	local out
	out=$(mktemp)
	LD_LIBRARY_PATH=${LIB_DIR:-} valgrind --tool=callgrind --callgrind-out-file="$out" \
		"$bench" "$1" "$2" >/dev/null 2>&1
	awk '/^summary:/ { print $2 }' "$out"
	rm -f "$out"
	rm -f /dev/hugepages/hpmt_hit_path* 2>/dev/null || true
}

for k in "${kinds[@]}"; do
	base=$(instructions "$k" 0)
	full=$(instructions "$k" "$count")
	per=$(awk -v a="$full" -v b="$base" -v n="$count" 'BEGIN { printf "%.1f", (a - b) / n }')
	case $k in
	burst*|bulk*) unit="per burst of 32" ;;
	*) unit="per alloc+free pair" ;;
	esac
	echo "$k: $per instructions $unit"
done
