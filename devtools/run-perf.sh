#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Build hpmalloc and run malloc_perf's default comparison: hpmalloc against
# rte_malloc on seed-grow, pair, burst and fwd, 5 repetitions, medians, and
# print the table.
# Usage: devtools/run-perf.sh [malloc_perf options]
#   e.g. --json perf.json, --backend all --workload all, --quick
# EAL gets lcores 0-1 (main + one worker) when there are 2 CPUs, else 0. With
# 1 GiB of free hugepages EAL preallocates it (--socket-mem 1024), so that no
# hugepage fault or EAL page allocation is timed; without, it runs on
# anonymous memory (--no-huge -m 2048) and says so. Charts:
# devtools/plot-perf perf.json -o DIR.
set -euo pipefail
cd "$(dirname "$0")/.."

builddir=${BUILDDIR:-build}
prefix=hpm_perf

# the list covers the tests, the fuzzer and the docs too: a package missing
# for those (not root: not installed) must not stop a benchmark that builds
# without them; meson and ninja below say what the build itself lacks
if ! devtools/install-deps.sh; then
	echo "run-perf: some packages are missing (above); building with what is there" >&2
fi
devtools/setup-hugepages.sh 2048

if [ ! -f "$builddir/build.ninja" ]; then
	meson setup "$builddir"
fi
ninja -C "$builddir" app/malloc_perf/malloc_perf

# shellcheck disable=SC2317 # called by the trap
cleanup() {
	local m
	while read -r m; do
		rm -f "$m/$prefix"map_* 2>/dev/null || true
	done < <(awk '$3 == "hugetlbfs" { print $2 }' /proc/mounts)
	rm -rf "/var/run/dpdk/$prefix" 2>/dev/null || true
}
trap cleanup EXIT

lcores=0
if [ "$(nproc)" -ge 2 ]; then
	lcores=0-1
fi
free_kib=$(awk '/^HugePages_Free:/ { f = $2 } /^Hugepagesize:/ { s = $2 }
	END { print f * s }' /proc/meminfo)
if [ "$free_kib" -ge $((1024 * 1024)) ] && grep -qs " hugetlbfs " /proc/mounts; then
	eal=(-l "$lcores" --no-pci --socket-mem 1024 --file-prefix "$prefix")
else
	echo "fewer than 1 GiB of free hugepages: running on anonymous memory (EAL --no-huge)"
	eal=(-l "$lcores" --no-pci --no-huge -m 2048 --file-prefix "$prefix")
fi
echo "+ $builddir/app/malloc_perf/malloc_perf ${eal[*]} -- $*"
"$builddir/app/malloc_perf/malloc_perf" "${eal[@]}" -- "$@"
