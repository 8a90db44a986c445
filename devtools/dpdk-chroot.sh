#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Build hpmalloc and run its tests against another DPDK release, in a Debian
# chroot that has it: 24.11 (Debian 13, trixie) or 25.11 (Debian unstable,
# sid). 22.11 is the host's own (Debian 12): devtools/run-tests.sh.
#
# Usage: devtools/dpdk-chroot.sh VERSION [meson test options]
#        devtools/dpdk-chroot.sh VERSION --run CMD [ARG...]
#   The first form makes or reuses the chroot, builds a release build in
#   build-dpdkXXYY/ of this tree (bound at /hpm inside) and runs every suite
#   but perf and soak; it ends with one line "dpdk VERSION: tests: N passed,
#   N failed, N skipped" and exits non-zero if anything failed. The second
#   runs CMD in the tree inside the chroot (no build), e.g.
#   --run objdump -T /usr/lib/x86_64-linux-gnu/librte_eal.so.25
#
# The chroot: debootstrap --variant=minbase from the Debian mirror apt on this
# machine uses (read from /etc/apt/sources.list{,.d/*} at run time), made once
# in $HPM_CHROOT_DIR/SUITE (default /var/cache/hpm-chroot) and then reused;
# packages added to the list below are installed into an existing chroot.
# /proc, /sys, /dev, /dev/shm and every hugetlbfs mount are bound into it
# while the script runs and unmounted on exit; one run per chroot at a time
# (a lock). Needs root.
#
# Environment: HPM_CHROOT_DIR (where the chroots live), HPM_CHROOT_MIRROR (a
# Debian mirror URL instead of apt's), HPM_CLEANUP_HUGEPAGES=1 (remove every
# hpmt_* hugepage file on exit, as run-tests.sh does: CI only, never on a
# shared machine). Variables HPM_* are passed to the tests.
set -euo pipefail
cd "$(dirname "$0")/.."
tree=$(pwd)

usage() {
	sed -n '8,16p' "$0" >&2
	exit 2
}

[ $# -ge 1 ] || usage
version=$1
shift
case $version in
24.11) suite=trixie ;;
25.11) suite=sid ;;
22.11)
	echo "DPDK 22.11 is the host's (Debian 12): devtools/run-tests.sh" >&2
	exit 2
	;;
*) usage ;;
esac
build=build-dpdk${version/./}
[ "$(id -u)" -eq 0 ] || {
	echo "dpdk-chroot.sh: needs root (debootstrap, chroot, mounts)" >&2
	exit 1
}

# what building and testing needs, in the chroot (dpdk-dev has dpdk-test and
# dpdk-testpmd; the allocators malloc_perf compares with are optional peers)
pkgs=(
	libdpdk-dev dpdk dpdk-dev meson ninja-build gcc libc6-dev pkg-config libnuma-dev
	python3 python3-pyelftools binutils procps
	libjemalloc-dev libmimalloc-dev libgoogle-perftools-dev
)

top=${HPM_CHROOT_DIR:-/var/cache/hpm-chroot}
root=$top/$suite
mkdir -p "$top"

# the first Debian archive apt uses (not the security one), deb822 or one-line form
mirror() {
	local f
	if [ -n "${HPM_CHROOT_MIRROR:-}" ]; then
		echo "$HPM_CHROOT_MIRROR"
		return
	fi
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -f "$f" ] || continue
		awk 'BEGIN { RS = ""; FS = "\n" }
			{ uri = ""; deb = 0; sec = 0
			  for (i = 1; i <= NF; i++) {
				if ($i ~ /^Types:/ && ($i " ") ~ /[ \t]deb[ \t]/) deb = 1
				if ($i ~ /^URIs:/) { split($i, u, /[ \t]+/); uri = u[2] }
				if ($i ~ /^Suites:.*-security/) sec = 1
			  }
			  if (deb && !sec && uri ~ /debian\/?$/) print uri }' "$f"
	done
	# (either file may be missing)
	cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
		awk '$1 == "deb" { for (i = 2; i <= NF; i++) if ($i !~ /^\[/) break
			if ($i ~ /debian\/?$/ && $(i + 1) !~ /-security/) print $i }' || true
}

exec 9>"$root.lock"
flock 9
# the host's hugepages serve the chroot (as for run-tests.sh)
devtools/setup-hugepages.sh 4096

t0=$SECONDS
if [ ! -x "$root/usr/bin/meson" ]; then
	if ! command -v debootstrap >/dev/null; then
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
			debootstrap || {
			apt-get update -q
			DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
				--no-install-recommends debootstrap
		}
	fi
	url=$(mirror | head -n 1 || true)
	[ -n "$url" ] || {
		echo "no Debian mirror in apt's sources: set HPM_CHROOT_MIRROR" >&2
		exit 1
	}
	echo "=== debootstrap $suite (DPDK $version) from $url into $root"
	# what is removed must have nothing mounted below (a run killed before its
	# cleanup leaves the host's /dev and this tree bound there)
	if awk -v r="$root" 'index($2 "/", r "/") == 1 || index($2 "/", r ".tmp/") == 1 \
		{ found = 1 } END { exit !found }' /proc/mounts; then
		echo "$root: something is still mounted below it; unmount it first:" >&2
		awk -v r="$root" 'index($2, r) == 1 { print "  " $2 }' /proc/mounts >&2
		exit 1
	fi
	rm -rf "$root.tmp"
	list=$(
		IFS=,
		echo "${pkgs[*]}"
	)
	debootstrap --variant=minbase --include="$list" "$suite" "$root.tmp" "$url" \
		>"$top/$suite.debootstrap.log" 2>&1 || {
		tail -20 "$top/$suite.debootstrap.log" >&2
		echo "debootstrap failed: $top/$suite.debootstrap.log" >&2
		exit 1
	}
	rm -rf "$root"
	mv "$root.tmp" "$root"
fi

# mounts, undone on exit in the reverse order
mounted=()
# shellcheck disable=SC2317 # called by the trap
cleanup() {
	local i m
	for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do
		umount "${mounted[i]}" 2>/dev/null || umount -l "${mounted[i]}" || true
	done
	rm -rf "$root"/var/run/dpdk/hpmt_* 2>/dev/null || true
	if [ "${HPM_CLEANUP_HUGEPAGES:-0}" = 1 ]; then
		while read -r m; do
			rm -f "$m"/hpmt_* 2>/dev/null || true
		done < <(awk '$3 == "hugetlbfs" { print $2 }' /proc/mounts)
	fi
}
trap cleanup EXIT

# bind SRC DST [mount options]: once, remembered for cleanup
bind() {
	local src=$1 dst=$root$2
	shift 2
	mkdir -p "$dst"
	if mountpoint -q "$dst"; then
		echo "$dst: already mounted (a run that did not clean up?), unmounting" >&2
		umount -l "$dst"
	fi
	mount "$@" "$src" "$dst"
	mounted+=("$dst")
	# what is mounted below it must not propagate back to the host's copy
	mount --make-rslave "$dst"
}
bind proc /proc -t proc
bind /sys /sys --bind
bind /dev /dev --bind
[ ! -d /dev/shm ] || bind /dev/shm /dev/shm --bind
while read -r m; do
	bind "$m" "$m" --bind
done < <(awk '$3 == "hugetlbfs" { print $2 }' /proc/mounts)
bind "$tree" /hpm --bind

# in_root CMD...: run CMD in the tree inside the chroot, with a clean environment
in_root() {
	local envs=() v
	for v in $(compgen -e); do
		case $v in
		HPM_CHROOT_* | HPM_CLEANUP_*) ;;
		HPM_* | ASAN_OPTIONS | UBSAN_OPTIONS) envs+=("$v=${!v}") ;;
		esac
	done
	chroot "$root" /usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
		HOME=/root LANG=C.UTF-8 TERM="${TERM:-dumb}" "${envs[@]}" \
		/bin/sh -c 'cd /hpm && exec "$@"' sh "$@"
}

# packages added to the list since the chroot was made
missing=()
for p in "${pkgs[@]}"; do
	# shellcheck disable=SC2016 # dpkg-query's format, not the shell's
	in_root dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed$' ||
		missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	echo "=== installing into $root: ${missing[*]}"
	cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
	# sid's Release file is valid for a week only: a mirror snapshot (or a clock
	# ahead) would make apt refuse it; the signature is still checked
	in_root apt-get update -q -o Acquire::Check-Valid-Until=false
	in_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
		"${missing[@]}"
fi
have=$(in_root pkg-config --modversion libdpdk)
echo "=== chroot $suite ready: DPDK $have ($((SECONDS - t0)) s)"
case $have in
"$version" | "$version".*) ;;
*)
	echo "the chroot has DPDK $have, not $version" >&2
	exit 1
	;;
esac

if [ "${1:-}" = --run ]; then
	shift
	in_root "$@"
	exit
fi

status=0
t1=$SECONDS
echo "=== DPDK $version: release build ($build/)"
if [ -f "$build/build.ninja" ]; then
	in_root meson configure "$build" -Dtests=true -Dbuildtype=release -Ddocs=disabled
else
	in_root meson setup "$build" -Dtests=true -Dbuildtype=release -Ddocs=disabled
fi
built=0
in_root ninja -C "$build" -j2 && built=1 || status=1
t2=$SECONDS
echo "=== DPDK $version: build $((t2 - t1)) s"

passed=0
failed=0
skipped=0
if [ $built -eq 1 ]; then
	rm -f "$build/meson-logs/testlog.json"
	# the benchmarks are for run-perf.sh; the minute of soak runs on the host's 22.11
	in_root meson test -C "$build" --print-errorlogs --no-suite perf --no-suite soak "$@" ||
		status=1
	counts=$(python3 - "$build/meson-logs/testlog.json" <<'PY'
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
    fail += 1
print(ok, fail, skip)
PY
	)
	read -r passed failed skipped <<<"$counts"
else
	failed=1
fi
echo "=== DPDK $version: chroot $((t1 - t0)) s, build $((t2 - t1)) s, tests $((SECONDS - t2)) s"
echo "dpdk $version: tests: $passed passed, $failed failed, $skipped skipped"
exit $status
