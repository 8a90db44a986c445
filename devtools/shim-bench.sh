#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# The figures of the rte_malloc shim and the mempool backing store, with and
# without hpmalloc, runs alternated, medians of REPS:
#  1. dpdk-testpmd io forwarding between two net_null ports, Mpps over both,
#     and that no packet was lost;
#  2. seed 004 through rte_malloc (10 rounds x 2000 x 4096/4096, no free),
#     ns per allocation in rounds 1 and 10 (examples/preload/seed004), with
#     EAL's memory mapped at start (--socket-mem 1024) and on demand; and
#     rte_malloc+rte_free pairs of 64 B and 4 KiB/4 KiB;
#  3. a pool of MBUFS mbufs: creation time and hugepages mapped, hpmalloc
#     (hpm_pktmbuf_pool_create) vs rte_pktmbuf_pool_create
#     (examples/mempool/mempool_fwd --packets 0).
# Usage: devtools/shim-bench.sh [BUILD_DIR [REPS [MBUFS [DATA_ROOM]]]]
#   defaults: build 5 1048575 1152 (1M mbufs of 2 KiB data room need 2.4 GiB
#   of hugepages; 1152 bytes, 1 KiB and the headroom, fit in 2 GiB)
set -euo pipefail
cd "$(dirname "$0")/.."

build=${1:-build}
reps=${2:-5}
mbufs=${3:-1048575}
room=${4:-1152}
shim=$build/lib/hpm_rte/libhpm_rte.so
for f in "$shim" "$build/examples/preload/seed004" "$build/examples/mempool/mempool_fwd"; do
	[ -e "$f" ] || {
		echo "$f missing: build first (ninja -C $build)" >&2
		exit 1
	}
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp" /var/run/dpdk/hpmt_bench_*' EXIT

median() {
	sort -g | awk '{ v[NR] = $1 } END { if (NR) print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# failed WHAT LOG: a run that failed (hugepages taken by others, say) is left out
failed() {
	echo "  $1 failed:" >&2
	tail -3 "$2" >&2
}

# eal NAME: EAL options with a file prefix of its own
eal() {
	echo "-l 0-1 --no-pci --file-prefix=hpmt_bench_$1 --huge-unlink --log-level=lib.eal:warning"
}

# with MODE CMD...: MODE hpm runs CMD with the shim preloaded, eal without
with() {
	local mode=$1
	shift
	if [ "$mode" = hpm ]; then
		LD_PRELOAD=$shim "$@"
	else
		"$@"
	fi
}

echo "== testpmd io forwarding, 2 x net_null, 8 s runs (Mpps over both ports)"
for r in $(seq "$reps"); do
	for mode in eal hpm; do
		out=$tmp/pmd_${mode}_$r
		pre=()
		[ $mode = eal ] || pre=(env "LD_PRELOAD=$shim")
		# shellcheck disable=SC2046
		timeout -s INT 8 "${pre[@]}" dpdk-testpmd $(eal pmd) --vdev=net_null0 \
			--vdev=net_null1 -- --forward-mode=io --stats-period=1 >"$out" 2>&1 || true
		# per interval, both ports; the first two intervals warm up
		awk '/Rx-pps:/ { s += $2; if (++k % 2 == 0) { print s / 1e6; s = 0 } }' "$out" |
			tail -n +3 | median >>"$tmp/pmd_$mode"
		awk '/Accumulated forward statistics/ { a = 1 }
			a && /RX-packets:/ { rx = $2; rxd = $4 }
			a && /TX-packets:/ { tx = $2; txd = $4; a = 0 }
			END { if (rx == 0 || rx != tx || rxd != 0 || txd != 0)
				printf "LOSS: rx %s (dropped %s) tx %s (dropped %s)\n", rx, rxd, tx, txd }' "$out"
	done
done
for mode in eal hpm; do
	printf "  %-3s %8.2f Mpps (median of %s)\n" "$mode" "$(median <"$tmp/pmd_$mode")" "$reps"
done

echo "== seed 004 through rte_malloc: 10 rounds x 2000 x rte_malloc(4096, 4096), ns/alloc"
for mem in "--socket-mem 1024" ""; do
	for r in $(seq "$reps"); do
		for mode in eal hpm; do
			# shellcheck disable=SC2046,SC2086
			with $mode "$build/examples/preload/seed004" $(eal seed) $mem -- 10 2000 \
				1000000 >"$tmp/seed" 2>&1 || failed "seed004 ($mode $mem)" "$tmp/seed"
			awk '/^round  1:/ { print $3 }' "$tmp/seed" >>"$tmp/seed1_$mode"
			awk '/^round 10:/ { print $3 }' "$tmp/seed" >>"$tmp/seed10_$mode"
			awk '/^pair   64:/ { print $3 }' "$tmp/seed" >>"$tmp/pair64_$mode"
			awk '/^pair 4096:/ { print $3 }' "$tmp/seed" >>"$tmp/pair4k_$mode"
		done
	done
	echo "  ${mem:-memory mapped on demand}:"
	for mode in eal hpm; do
		printf "  %-3s round 1 %10.1f   round 10 %10.1f   pair 64 B %7.1f   pair 4K/4K %7.1f\n" \
			"$mode" "$(median <"$tmp/seed1_$mode")" "$(median <"$tmp/seed10_$mode")" \
			"$(median <"$tmp/pair64_$mode")" "$(median <"$tmp/pair4k_$mode")"
	done
	rm -f "$tmp"/seed1_* "$tmp"/seed10_* "$tmp"/pair*
done

echo "== pool of $mbufs mbufs, data room $room: creation time (ms), hugepages mapped (MiB)"
for r in $(seq "$reps"); do
	for mode in dpdk hpm; do
		# shellcheck disable=SC2046
		"$build/examples/mempool/mempool_fwd" $(eal pool) -- --packets 0 --mbufs "$mbufs" \
			--data-room "$room" $([ $mode = dpdk ] && echo --dpdk-pool) >"$tmp/pool" 2>&1 ||
			failed "mempool_fwd ($mode)" "$tmp/pool"
		sed -n 's/.*created in \([0-9.]*\) ms.*/\1/p' "$tmp/pool" >>"$tmp/pool_ms_$mode"
		sed -n 's/.* \([0-9.]*\) MiB of hugepages mapped.*/\1/p' "$tmp/pool" >>"$tmp/pool_mib_$mode"
	done
done
for mode in dpdk hpm; do
	printf "  %-4s %8.1f ms %8.1f MiB\n" "$mode" "$(median <"$tmp/pool_ms_$mode")" \
		"$(median <"$tmp/pool_mib_$mode")"
done
