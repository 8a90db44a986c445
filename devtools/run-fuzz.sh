#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Build the libFuzzer harness test/fuzz/fuzz_heap.c with clang, AddressSanitizer
# and UndefinedBehaviorSanitizer, the library's sources (the list in
# lib/hpm/meson.build) compiled into it, and run it for SECONDS from the corpus
# kept in the tree (test/fuzz/corpus, read only; new inputs go to the build
# directory), one fuzzing process per CPU (they share the corpus directory).
# Prints executions, executions per second and coverage; fails on any crash,
# leak or check.
# Usage: devtools/run-fuzz.sh [SECONDS]        (default 60)
#        devtools/run-fuzz.sh FILE...          (run these inputs once: reproduce a crash)
#        devtools/run-fuzz.sh --grow [SECONDS] (fuzz, then add to test/fuzz/corpus the
#                                              inputs that bring new coverage: -merge=1)
# A crash leaves its input in build-fuzz/artifacts/; `devtools/run-fuzz.sh
# build-fuzz/artifacts/crash-...` replays it on a fresh heap (HPM_FUZZ_REINIT=1 in the
# environment also makes the heap again before each input of a run).
# Environment: HPM_FUZZ_DIR (build directory, default build-fuzz), CC (default clang),
# HPM_FUZZ_CFLAGS (more compiler options, given first), HPM_FUZZ_JOBS (fuzzing
# processes, default: the CPUs), HPM_FUZZ_MAX_LEN (longest input, default 128 bytes),
# HPM_FUZZ_MIN_EXECS (inputs a run executes at least, default 10^6: a run that has
# fewer after SECONDS goes on until it has them, for at most 3 x SECONDS more).
set -euo pipefail
cd "$(dirname "$0")/.."

secs=60
inputs=()
grow=false
if [ "${1:-}" = --grow ]; then
	grow=true
	shift
fi
if [ $# -gt 0 ]; then
	if [[ $1 =~ ^[0-9]+$ ]]; then
		secs=$1
	else
		inputs=("$@")
	fi
fi
dir=${HPM_FUZZ_DIR:-build-fuzz}
cc=${CC:-clang}
if ! command -v "$cc" >/dev/null; then
	cc=clang-14
fi
if ! command -v "$cc" >/dev/null; then
	echo "clang not found (devtools/install-deps.sh installs clang and libclang-rt-14-dev)" >&2
	exit 1
fi

# every C file lib/hpm/meson.build names (the sources, and heap.c on its own)
mapfile -t srcs < <(grep -o "'[A-Za-z0-9_]*\.c'" lib/hpm/meson.build | tr -d "'" | sort -u)
if [ ${#srcs[@]} -eq 0 ]; then
	echo "no sources found in lib/hpm/meson.build" >&2
	exit 1
fi
read -r -a dpdk_cflags <<<"$(pkg-config --cflags libdpdk)"
read -r -a dpdk_libs <<<"$(pkg-config --libs libdpdk)"
read -r -a extra_cflags <<<"${HPM_FUZZ_CFLAGS:-}"
sanitizers=address,undefined
cflags=("${extra_cflags[@]}" -g -O1 -std=gnu11 -fno-omit-frame-pointer -fsanitize="$sanitizers"
	-fno-sanitize-recover=all -D_FILE_OFFSET_BITS=64 -DHPM_DEBUG=1 -Wall -Wextra
	-Wno-missing-field-initializers -Iinclude -Ilib/hpm -Ilib/compat "${dpdk_cflags[@]}")

# objects: rebuilt when their source or a header is newer, all of them when the options change
mkdir -p "$dir/obj" "$dir/corpus" "$dir/artifacts"
if [ "$(cat "$dir/obj/cflags" 2>/dev/null)" != "$cc ${cflags[*]}" ]; then
	rm -f "$dir"/obj/*.o
	echo "$cc ${cflags[*]}" >"$dir/obj/cflags"
fi
newest_header=$(find include lib/hpm -name '*.h' -printf '%T@\n' | sort -n | tail -1)
objs=()
for s in "${srcs[@]}" ../../test/fuzz/fuzz_heap.c; do
	src=lib/hpm/$s
	obj=$dir/obj/$(basename "${s%.c}").o
	objs+=("$obj")
	if [ -f "$obj" ] && [ "$obj" -nt "$src" ] &&
		[ "$(stat -c %Y "$obj")" -gt "${newest_header%.*}" ]; then
		continue
	fi
	echo "fuzz: cc $src"
	# coverage of the library guides the fuzzer; the harness's own loops would be noise
	if [ "$s" = heap.c ]; then
		# as in meson.build: the heap works inside memory it poisons
		"$cc" "${cflags[@]}" -fno-sanitize=address -fsanitize=fuzzer-no-link -c "$src" \
			-o "$obj"
	elif [ "$s" = "${s#../}" ]; then
		# edges guide it; comparison tracing (trace-cmp) would cost a third of the
		# time in the checkers' loops and find no magic values in an allocator
		"$cc" "${cflags[@]}" -fsanitize=fuzzer-no-link -fno-sanitize-coverage=trace-cmp \
			-c "$src" -o "$obj"
	else
		"$cc" "${cflags[@]}" -c "$src" -o "$obj"
	fi
done
"$cc" "${cflags[@]}" -fsanitize=fuzzer "${objs[@]}" -o "$dir/fuzz_heap" "${dpdk_libs[@]}" \
	-lnuma -lpthread

export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1:print_stacktrace=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
if [ ${#inputs[@]} -gt 0 ]; then
	exec "$dir/fuzz_heap" "${inputs[@]}"
fi

jobs=${HPM_FUZZ_JOBS:-$(nproc)}
max_len=${HPM_FUZZ_MAX_LEN:-128}
min_execs=${HPM_FUZZ_MIN_EXECS:-1000000}
rm -f "$dir"/fuzz-*.log

# One round: every process for at most $1 s, and at most $2 inputs each (0: no
# bound); logs $dir/fuzz-$3-J.log. Sets status, failed_log, execs_round, log0.
fuzz_round() {
	local j e pids=() runs=()

	if [ "$2" -gt 0 ]; then
		runs=(-runs="$2")
	fi
	# entropic_scale_per_exec_time: of two inputs that reach the same rare features,
	# the quicker is mutated more (up to 30x): 1.8x the inputs a second at the same
	# coverage (20 s, one process: 4014 -> 7314 a second, cov 1468 -> 1470)
	for ((j = 0; j < jobs; j++)); do
		"$dir/fuzz_heap" -seed=$((j + 1 + jobs * rounds)) -max_len="$max_len" \
			-max_total_time="$1" "${runs[@]}" -timeout=30 \
			-entropic_scale_per_exec_time=1 \
			-rss_limit_mb=4096 -print_final_stats=1 -artifact_prefix="$dir/artifacts/" \
			"$dir/corpus" test/fuzz/corpus >"$dir/fuzz-$3-$j.log" 2>&1 &
		pids+=($!)
	done
	for ((j = 0; j < jobs; j++)); do
		if ! wait "${pids[$j]}"; then
			status=1
			failed_log=$dir/fuzz-$3-$j.log
		fi
	done
	execs_round=0
	for ((j = 0; j < jobs; j++)); do
		e=$(awk '/stat::number_of_executed_units:/ { print $2 }' "$dir/fuzz-$3-$j.log" |
			tail -1)
		execs_round=$((execs_round + ${e:-0}))
	done
	log0=$dir/fuzz-$3-0.log
	rounds=$((rounds + 1))
}

echo "fuzz: running $dir/fuzz_heap for $secs s, $jobs processes (logs: $dir/fuzz-*.log)"
status=0
failed_log=
rounds=0
start=$SECONDS
fuzz_round "$secs" 0 main
execs=$execs_round
# A slow machine (CI's ran 0.99 to 1.7 million inputs in 60 s) tops up to
# min_execs inputs, each process its share, bounded by 3 x secs more.
if [ $status -eq 0 ] && [ "$execs" -lt "$min_execs" ]; then
	share=$(((min_execs - execs + jobs - 1) / jobs))
	echo "fuzz: $execs inputs in $secs s; $share more per process, up to $min_execs"
	fuzz_round $((3 * secs)) "$share" more
	execs=$((execs + execs_round))
	if [ "$execs" -lt "$min_execs" ]; then
		echo "fuzz: $execs inputs, short of $min_execs when the time bound came"
	fi
fi
elapsed=$((SECONDS - start))
done_line=$(grep -E '^#[0-9]+[[:space:]]+(DONE|pulse|NEW|REDUCE|INITED)' "$log0" |
	tail -1 || true)
cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$done_line")
ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$done_line")
if [ $status -ne 0 ]; then
	tail -n 80 "$failed_log"
	echo "fuzz: FAILED after $execs executions; inputs in $dir/artifacts/" >&2
	echo "fuzz: reproduce with devtools/run-fuzz.sh $dir/artifacts/<file>" >&2
	exit 1
fi
echo "fuzz: passed: $execs executions in $elapsed s ($((execs / (elapsed > 0 ? elapsed : 1))) per second," \
	"$jobs processes), cov ${cov:-?}, ft ${ft:-?} (process 0)," \
	"corpus: $(find "$dir/corpus" -type f | wc -l) new inputs," \
	"$(find test/fuzz/corpus -type f | wc -l) kept ($(($(du -sb test/fuzz/corpus | cut -f1) / 1024)) KiB)"

if $grow; then
	# the kept corpus takes the new inputs that add coverage; nothing is removed from it
	"$dir/fuzz_heap" -merge=1 -max_len="$max_len" test/fuzz/corpus "$dir/corpus" \
		>"$dir/merge.log" 2>&1 || {
		tail -n 40 "$dir/merge.log"
		exit 1
	}
	kib=$(($(du -sb test/fuzz/corpus | cut -f1) / 1024))
	echo "fuzz: test/fuzz/corpus: $(find test/fuzz/corpus -type f | wc -l) inputs, $kib KiB;" \
		"$(sed -n 's/^MERGE-OUTER: //p' "$dir/merge.log" | tail -1)"
	if [ "$kib" -gt 2048 ]; then
		echo "fuzz: the kept corpus passed 2 MiB: minimise it (see test/fuzz/README.md)" >&2
		exit 1
	fi
fi
