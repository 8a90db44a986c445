#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Instructions per operation on the cache hit path, counted by callgrind:
# bench_hit_path run with COUNT operations and with 0, the difference divided
# by COUNT. Deterministic, so it compares builds on a busy machine. The
# mempool-* kinds are the reference: rte_mempool's get+put and bulk, the same way.
# inline-KIND runs KIND on bench_hit_inline: through hpm_inline.h, the hit
# path compiled into the loop, without the calls into libhpm.so.
# Usage: devtools/hit-path-instructions.sh [--time|--l1] [BUILD_DIR] [KIND...]
#   LIB_DIR=dir  runs the same benchmark on another build's libhpm.so
#                (e.g. the commit before a change: before and after)
#   --time       times each kind instead (bench_hit_path's windows: the
#                fastest, p10, median ns), three turns; with LIB_DIR, that
#                build and this one in turns
#   --l1         L1 data misses per operation instead (cachegrind, a 32 KiB
#                8-way L1 of 64-byte lines): what a layout costs in misses,
#                e.g. on the mix kind, where every class is busy
set -euo pipefail

timed=false
l1=false
if [ "${1:-}" = --time ]; then
	timed=true
	shift
elif [ "${1:-}" = --l1 ]; then
	l1=true
	shift
fi
build=${1:-build}
shift || true
kinds=("$@")
[ ${#kinds[@]} -gt 0 ] || kinds=(pair64 pair1000 pair4k pair64k burst4k bulk4k bulk64 \
	inline-pair64 inline-pair4k mempool-pair64 mempool-bulk64)
bench=$build/test/bench_hit_path
count=20000
[ -x "$bench" ] || { echo "no $bench: build with -Dtests=true" >&2; exit 1; }

# what an EAL run of the bench leaves in hugetlbfs
clean() {
	rm -f /dev/hugepages/hpmt_hit_path* 2>/dev/null || true
}

# the binary and the kind it runs: inline-KIND is KIND on bench_hit_inline
bench_of() {
	case $1 in
	inline-*) echo "${bench%_path}_inline ${1#inline-}" ;;
	*) echo "$bench $1" ;;
	esac
}

# One figure of a run of kind $1 with count $2 under a valgrind tool: instructions
# (callgrind), or with --l1 the L1 data misses, reads and writes (cachegrind)
grind() {
	local out tool=callgrind opts=()
	# shellcheck disable=SC2016 # awk's fields, not the shell's
	local figure='/^summary:/ { print $2 }'
	out=$(mktemp)
	if $l1; then
		tool=cachegrind
		# shellcheck disable=SC2054 # the cache geometry: size,ways,line
		opts=(--cache-sim=yes --D1=32768,8,64 --LL=1048576,16,64)
		# shellcheck disable=SC2016 # awk's fields, not the shell's
		figure='/^events:/ { for (i = 2; i <= NF; i++) name[i] = $i }
			/^summary:/ { for (i = 2; i <= NF; i++) if (name[i] ~ /^D1m[rw]$/) s += $i; print s }'
	fi
	# shellcheck disable=SC2046 # two words: the binary and the kind
	LD_LIBRARY_PATH=${LIB_DIR:-} valgrind --tool=$tool "${opts[@]}" \
		--$tool-out-file="$out" $(bench_of "$1") "$2" >/dev/null 2>&1
	awk "$figure" "$out"
	rm -f "$out"
	clean
}

# the fastest window, p10 and median of a kind (its name cut from the bench's line)
timed_run() {
	# shellcheck disable=SC2046 # two words: the binary and the kind
	LD_LIBRARY_PATH=$1 $(bench_of "$2") 2000000 time 2>/dev/null | tail -1 | sed 's/^[^:]*: //'
}

if $timed; then
	for turn in 1 2 3; do
		for k in "${kinds[@]}"; do
			if [ -n "${LIB_DIR:-}" ]; then
				echo "turn $turn, LIB_DIR: $k: $(timed_run "$LIB_DIR" "$k")"
			fi
			echo "turn $turn, $build: $k: $(timed_run '' "$k")"
			clean
		done
	done
	exit 0
fi

command -v valgrind >/dev/null || { echo "valgrind is not installed" >&2; exit 1; }
what="instructions"
digits=1
if $l1; then
	what="L1 data misses"
	digits=2
fi
for k in "${kinds[@]}"; do
	base=$(grind "$k" 0)
	full=$(grind "$k" "$count")
	per=$(awk -v a="$full" -v b="$base" -v n="$count" -v d="$digits" \
		'BEGIN { printf "%.*f", d, (a - b) / n }')
	case $k in
	*burst*|*bulk*) unit="per burst of 32" ;;
	*) unit="per alloc+free pair" ;;
	esac
	echo "$k: $per $what $unit"
done
