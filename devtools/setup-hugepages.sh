#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Reserve 2 MiB hugepages and mount hugetlbfs at /dev/hugepages (as root).
# Usage: devtools/setup-hugepages.sh [MiB]    (default 2048)
# Never fails hard: when no hugepages can be had it says so and exits 0, and
# callers run on anonymous memory (EAL --no-huge) instead.
set -euo pipefail

mib=${1:-2048}
if ! [[ $mib =~ ^[0-9]+$ ]]; then
	echo "usage: $0 [MiB]" >&2
	exit 2
fi
want=$(((mib + 1) / 2))
sysfs=/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages
mnt=/dev/hugepages

hugepages_free() {
	awk '/^HugePages_Free:/ { print $2; found = 1 } END { if (!found) print 0 }' /proc/meminfo
}

report() {
	local free
	free=$(hugepages_free)
	if [ "$free" -gt 0 ] && grep -qs " $mnt hugetlbfs " /proc/mounts; then
		echo "hugepages: $(cat "$sysfs" 2>/dev/null || echo 0) x 2 MiB reserved," \
			"$free free, hugetlbfs at $mnt"
	else
		echo "no hugepages available: DPDK programs run on anonymous memory (--no-huge)"
	fi
	exit 0
}

if [ ! -e "$sysfs" ]; then
	echo "this kernel offers no 2 MiB hugepages"
	report
fi
if [ "$(id -u)" -ne 0 ]; then
	echo "not root: hugepages left as they are"
	report
fi

# only ever raise the reservation: others may be using what is there
have=$(cat "$sysfs")
if [ "$have" -lt "$want" ]; then
	echo "$want" >"$sysfs" 2>/dev/null || true
	if [ "$(cat "$sysfs")" -lt "$want" ]; then
		# fragmented memory: compact it and try again
		echo 1 >/proc/sys/vm/compact_memory 2>/dev/null || true
		echo "$want" >"$sysfs" 2>/dev/null || true
	fi
	have=$(cat "$sysfs")
	if [ "$have" -lt "$want" ]; then
		echo "asked for $want hugepages of 2 MiB, got $have"
	fi
fi

if ! grep -qs " $mnt hugetlbfs " /proc/mounts; then
	mkdir -p "$mnt" 2>/dev/null || true
	mount -t hugetlbfs -o pagesize=2M nodev "$mnt" 2>/dev/null ||
		echo "cannot mount hugetlbfs at $mnt"
fi
report
