#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Build and run every test suite three times: a release build (build/), a
# debug build with AddressSanitizer and UndefinedBehaviorSanitizer
# (build-asan/), and a debug build that checks the whole heap after every
# locked operation (build-expensive/, with shorter runs); the unit suite
# (short runs) under valgrind's memcheck (build-valgrind/); then the
# multi-lcore cache test and a short concurrent differential test (10^5
# operations) under ThreadSanitizer (build-tsan/), and the libFuzzer harness for
# a minute with ASan and UBSan (build-fuzz/, devtools/run-fuzz.sh; one test in
# the tally). The soak (suite soak, a minute) runs in the release build only.
# The layer check (devtools/check-layers: calls and includes that run back up,
# from build/'s objects; one test in the tally) follows the release build.
# The guides and the API reference are built in build/ too (meson target doc,
# warnings as errors, and the performance page checked against doc/perf's
# JSON: one test in the tally).
# Usage: devtools/run-tests.sh [meson test options]   e.g. --suite unit
# Environment: HPM_FUZZ_SECONDS (default 60; 0 leaves the fuzzer out).
# Exits non-zero if anything fails. Tests that need hugepages should skip (exit 77) without.
set -euo pipefail
cd "$(dirname "$0")/.."

devtools/install-deps.sh
# parallel tests each map hundreds of MiB of hugepages
devtools/setup-hugepages.sh 4096

# what the tests leave behind: hugepage files and runtime dirs of prefix hpmt_*
# shellcheck disable=SC2317 # called by the trap
cleanup() {
	local m
	while read -r m; do
		rm -f "$m"/hpmt_* 2>/dev/null || true
	done < <(awk '$3 == "hugetlbfs" { print $2 }' /proc/mounts)
	rm -rf /var/run/dpdk/hpmt_* 2>/dev/null || true
}
trap cleanup EXIT

passed=0
failed=0
skipped=0
status=0

# count the results of one meson test run from its log
count() {
	local counts
	counts=$(python3 - "$1/meson-logs/testlog.json" <<'PY'
import json, sys
ok = fail = skip = 0
try:
    with open(sys.argv[1]) as f:
        for line in f:
            r = json.loads(line).get("result", "")
            if r in ("OK", "EXPECTEDFAIL"):
                ok += 1
            elif r == "SKIP":
                skip += 1
            else:
                fail += 1
except OSError:
    pass
print(ok, fail, skip)
PY
)
	read -r p f s <<<"$counts"
	passed=$((passed + p))
	failed=$((failed + f))
	skipped=$((skipped + s))
}

# setup DIR OPTIONS...: configure a build directory once, then keep its options
setup() {
	local dir=$1
	shift
	if [ -f "$dir/build.ninja" ]; then
		meson configure "$dir" -Dtests=true "$@"
	else
		meson setup "$dir" -Dtests=true "$@"
	fi
}

echo "=== release build (build/)"
setup build -Dbuildtype=release
if ninja -C build; then
	meson test -C build --print-errorlogs "$@" || status=1
	count build
else
	status=1
fi

echo "=== layers: calls and includes that run back up (devtools/check-layers)"
if devtools/check-layers --build build; then
	passed=$((passed + 1))
else
	failed=$((failed + 1))
	status=1
fi

echo "=== guides and API reference (build/doc/html; Sphinx and doxygen warnings are errors)"
# the performance page must be made from doc/perf's JSON as it is; --reconfigure:
# a build directory made before the docs option existed learns it
if devtools/perf-report --check && meson setup --reconfigure build -Ddocs=enabled >/dev/null &&
	meson compile -C build doc; then
	passed=$((passed + 1))
else
	failed=$((failed + 1))
	status=1
fi

echo "=== debug build with ASan and UBSan (build-asan/)"
setup build-asan -Db_sanitize=address,undefined -Db_lundef=false -Dbuildtype=debug
if ninja -C build-asan; then
	ASAN_OPTIONS=${ASAN_OPTIONS:-halt_on_error=1:abort_on_error=0:print_stacktrace=1:detect_leaks=1} \
	UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1} \
		meson test -C build-asan --print-errorlogs --timeout-multiplier 4 --no-suite soak \
		"$@" || status=1
	count build-asan
else
	status=1
fi

echo "=== debug build with expensive invariant checks (build-expensive/), short runs"
setup build-expensive -Dexpensive_checks=true -Dbuildtype=debug
if ninja -C build-expensive; then
	# every locked operation checks the whole heap: fewer operations
	HPM_TEST_OPS=${HPM_TEST_OPS:-20000} \
		meson test -C build-expensive --print-errorlogs --no-suite perf --no-suite soak \
		"$@" || status=1
	count build-expensive
else
	status=1
fi

echo "=== valgrind memcheck of the unit tests (build-valgrind/), short runs"
# -Dvalgrind=true: the heap tells memcheck which bytes the application may
# touch (a block open while handed out, closed when freed). Left out:
# gran_model (a model of the granule search, no heap memory: 6 minutes under
# valgrind), overflow (it writes past blocks on purpose), asan_poison.
setup build-valgrind -Dvalgrind=true -Dbuildtype=debug
if ninja -C build-valgrind; then
	mapfile -t vg_tests < <(meson test -C build-valgrind --list --suite unit 2>/dev/null |
		sed -n 's|^hpmalloc:unit / ||p' | grep -vx -e gran_model -e overflow -e asan_poison)
	HPM_TEST_OPS=${HPM_VALGRIND_OPS:-5000} \
		meson test -C build-valgrind --print-errorlogs --timeout-multiplier 10 \
		--wrapper 'valgrind --error-exitcode=99 -q' "${vg_tests[@]}" || status=1
	count build-valgrind
else
	status=1
fi

echo "=== ThreadSanitizer build of the multi-lcore tests (build-tsan/)"
# DPDK's x86 ring and spinlock use fences TSan cannot see: its C11 ring model
# for the test, and the library's own TSan-visible lock (lib/hpm/lock.h)
setup build-tsan -Db_sanitize=thread -Db_lundef=false -Dbuildtype=debug \
	-Dc_args=-DRTE_USE_C11_MEM_MODEL
if ninja -C build-tsan; then
	TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1:suppressions=$PWD/test/tsan.supp} \
		meson test -C build-tsan --print-errorlogs --timeout-multiplier 4 cache_stress \
		concurrent_diff || status=1
	count build-tsan
else
	status=1
fi

fuzz_seconds=${HPM_FUZZ_SECONDS:-60}
if [ "$fuzz_seconds" -gt 0 ]; then
	echo "=== libFuzzer harness, $fuzz_seconds s with ASan and UBSan (build-fuzz/)"
	if devtools/run-fuzz.sh "$fuzz_seconds"; then
		passed=$((passed + 1))
	else
		failed=$((failed + 1))
		status=1
	fi
fi

echo "tests: $passed passed, $failed failed, $skipped skipped"
exit $status
