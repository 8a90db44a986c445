#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# The differential test at 10^8 operations: test_heap_diff --mode routes (every
# route, realloc across routes, bulk, contiguous blocks; every address, size,
# alignment and content checked against a model, validate and heap check on the
# live set at intervals, the statistics back at the baseline after each seed's
# drain) in 10 runs of 10^7, each from its own seeds: half on anonymous memory,
# half on EAL hugepages, two at a time. Builds build/ (release) if needed.
# Prints each run's result and the total; fails if any run fails.
# Usage: devtools/run-diff-1e8.sh [TOTAL_OPS]     (default 100000000)
# Environment: HPM_DIFF_JOBS (runs at a time, default 2), HPM_TEST_SEED (first seed).
set -euo pipefail
cd "$(dirname "$0")/.."

total=${1:-100000000}
runs=10
per=$((total / runs))
jobs=${HPM_DIFF_JOBS:-2}
seed=${HPM_TEST_SEED:-1000}
if [ ! -f build/build.ninja ]; then
	meson setup build -Dtests=true -Dbuildtype=release >/dev/null
fi
ninja -C build test/test_heap_diff >/dev/null
log=build/diff-1e8
mkdir -p "$log"
rm -f "$log"/run-*.log

start=$(date +%s)
names=()
for ((r = 0; r < runs; r++)); do
	if [ $((r % 2)) -eq 0 ]; then src=anon; else src=eal; fi
	# at most $jobs at a time
	while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do
		wait -n || true
	done
	HPM_TEST_SEED=$((seed + r * 100)) build/test/test_heap_diff --source "$src" \
		--mode routes --seeds 5 --ops "$per" >"$log/run-$r.log" 2>&1 &
	names+=("run $r ($src, seed $((seed + r * 100)))")
done
wait || true
status=0
for ((r = 0; r < runs; r++)); do
	if grep -q 'heap_diff: passed' "$log/run-$r.log"; then
		echo "${names[$r]}: passed: $(grep '^ops:' "$log/run-$r.log" | cut -d';' -f1)"
	elif grep -q 'skipped' "$log/run-$r.log"; then
		echo "${names[$r]}: skipped: $(tail -1 "$log/run-$r.log")"
	else
		echo "${names[$r]}: FAILED (log $log/run-$r.log):"
		grep -m 5 FAIL "$log/run-$r.log" || tail -5 "$log/run-$r.log"
		status=1
	fi
done
ops=$(sed -n 's/^ops: \([0-9]*\) in.*/\1/p' "$log"/run-*.log | awk '{ s += $1 } END { print s + 0 }')
echo "diff: $ops operations checked in $(($(date +%s) - start)) s, $runs runs" \
	"($(grep -l 'heap_diff: passed' "$log"/run-*.log | wc -l) passed); logs in $log/"
exit $status
