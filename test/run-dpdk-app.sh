#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Run an unmodified DPDK program on hpmalloc through the rte_malloc shim
# (LD_PRELOAD) and check what it printed and the shim's counters.
# Usage:
#   run-dpdk-app.sh autotest SHIM.so TEST...    dpdk-test: every TEST says "Test OK"
#   run-dpdk-app.sh testpmd SHIM.so SECONDS     dpdk-testpmd, io forwarding between two
#                                               net_null ports: packets, and none lost
#   run-dpdk-app.sh run SHIM.so PROGRAM ARG...  any DPDK program: exit status 0
# EAL arguments come first for autotest and testpmd (two lcores, no PCI, a file
# prefix of its own, hugepage files unlinked, then $HPM_TEST_EAL_ARGS, e.g.
# "--no-huge -m 1024"); PROGRAM gets the prefix as $HPM_TEST_PREFIX. Exit
# status: 0 pass, 1 fail, 77 skip (no hugepages, no dpdk-test or dpdk-testpmd,
# or an ASan shim without libasan to preload).
set -euo pipefail

mode=${1:-}
shim=${2:-}
if [ $# -lt 3 ] || [ ! -f "$shim" ]; then
	sed -n '4,15p' "$0" >&2
	exit 2
fi
shift 2
shim=$(realpath "$shim")

skip() {
	echo "SKIP: $*"
	exit 77
}

read -r -a extra <<<"${HPM_TEST_EAL_ARGS:-}"
no_huge=0
for a in "${extra[@]}"; do
	[ "$a" != --no-huge ] || no_huge=1
done
free_pages=$(awk '/^HugePages_Free:/ { print $2 }' /proc/meminfo)
if [ $no_huge -eq 0 ] && { [ "${free_pages:-0}" -lt 256 ] || ! grep -qs " hugetlbfs " /proc/mounts; }; then
	skip "needs 512 MiB of free 2 MiB hugepages and hugetlbfs"
fi

# an ASan shim in a program built without ASan: the ASan runtime must come first
preload=$shim
asan=$(ldd "$shim" | awk '/libasan\.so/ { print $3 }')
if [ -n "$asan" ]; then
	[ -f "$asan" ] || skip "ASan shim, and no libasan to preload"
	preload=$asan:$shim
	# the programs' own leaks are not ours to report
	export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0
fi

prefix=hpmt_shim_${mode}_$$
export HPM_TEST_PREFIX=$prefix
out=$(mktemp)
cleanup() {
	local m
	rm -f "$out"
	while read -r m; do
		rm -f "$m/$prefix"* 2>/dev/null || true
	done < <(awk '$3 == "hugetlbfs" { print $2 }' /proc/mounts)
	rm -rf "/var/run/dpdk/$prefix" 2>/dev/null || true
}
trap cleanup EXIT
eal=(-l 0-1 --no-pci "--file-prefix=$prefix" --log-level=lib.eal:warning)
# (EAL refuses to unlink hugepage files it does not have)
[ $no_huge -eq 1 ] || eal+=(--huge-unlink)
eal+=("${extra[@]}")

failed=0
fail() {
	echo "FAIL: $*"
	failed=1
}

# run NAME SECONDS CMD...: the command under the shim, its output kept and shown
run() {
	local name=$1 secs=$2 rc=0
	shift 2
	echo "+ LD_PRELOAD=$preload HPM_RTE_VERBOSE=1 $*"
	HPM_RTE_VERBOSE=1 LD_PRELOAD=$preload timeout -k 5 "$secs" "$@" >"$out" 2>&1 || rc=$?
	cat "$out"
	if [ $rc -eq 124 ]; then
		fail "$name: timed out after $secs s"
	elif [ $rc -ne 0 ]; then
		fail "$name: exit status $rc"
	fi
}

case $mode in
autotest)
	command -v dpdk-test >/dev/null || skip "dpdk-test not installed (package dpdk-dev)"
	run dpdk-test 110 dpdk-test "${eal[@]}" -- "$@"
	ok=$(grep -c '^Test OK' "$out" || true)
	[ "$ok" -eq $# ] || fail "dpdk-test: $ok of $# autotests said Test OK"
	;;
testpmd)
	command -v dpdk-testpmd >/dev/null || skip "dpdk-testpmd not installed (package dpdk-dev)"
	# non-interactive testpmd forwards until its standard input ends
	secs=$1
	run dpdk-testpmd $((secs + 30)) dpdk-testpmd "${eal[@]}" --vdev=net_null0 \
		--vdev=net_null1 -- --forward-mode=io --total-num-mbufs=16384 < <(sleep "$secs")
	acc=$(grep -A2 'Accumulated forward statistics' "$out" || true)
	rx=$(awk '/RX-packets:/ { print $2 }' <<<"$acc")
	rxd=$(awk '/RX-packets:/ { print $4 }' <<<"$acc")
	tx=$(awk '/TX-packets:/ { print $2 }' <<<"$acc")
	txd=$(awk '/TX-packets:/ { print $4 }' <<<"$acc")
	if [ -z "$rx" ] || [ "$rx" -eq 0 ]; then
		fail "testpmd forwarded no packets"
	elif [ "$rx" != "$tx" ] || [ "$rxd" != 0 ] || [ "$txd" != 0 ]; then
		fail "testpmd lost packets: RX $rx (dropped $rxd), TX $tx (dropped $txd)"
	else
		echo "testpmd: $rx packets received and sent, none dropped"
	fi
	;;
run)
	run "$1" 110 "$@"
	;;
*)
	echo "unknown mode $mode" >&2
	exit 2
	;;
esac

# the shim's counters: the application's calls reached hpmalloc
line=$(grep -o 'HPM_RTE stats:.*' "$out" | tail -1 || true)
if [ -z "$line" ]; then
	fail "no shim counters printed: was the shim loaded?"
else
	declare -A c
	for kv in ${line#HPM_RTE stats: }; do
		c[${kv%%=*}]=${kv#*=}
	done
	[ "${c[backend]}" = hpm ] || fail "backend ${c[backend]}, not hpm"
	[ "${c[hpm_alloc]}" -gt 0 ] || fail "no allocation reached hpmalloc"
	[ "${c[hpm_free]}" -gt 0 ] || fail "no free reached hpmalloc"
	[ "${c[eal_off]}" -eq 0 ] || fail "routing was off for ${c[eal_off]} calls"
	# after rte_eal_init only external heaps allocate from EAL
	[ "${c[eal_alloc]}" -le $((c[eal_early] + c[eal_external])) ] ||
		fail "${c[eal_alloc]} allocations went to EAL"
	[ $((c[eal_alloc] + c[eal_free] + c[eal_realloc] + c[eal_other])) -eq \
		$((c[eal_early] + c[eal_off] + c[eal_external] + c[eal_foreign])) ] ||
		fail "EAL calls and their reasons do not add up"
fi

if [ $failed -ne 0 ]; then
	exit 1
fi
echo "PASS"
