#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Install what building and testing hpmalloc needs (Debian 12), only if missing.
# Usage: devtools/install-deps.sh    (as root when something is missing)
set -euo pipefail

pkgs=(
	gcc libc6-dev pkg-config meson ninja-build python3 python3-pyelftools git
	libdpdk-dev dpdk dpdk-dev libnuma-dev clang-format util-linux
	# the libFuzzer harness (devtools/run-fuzz.sh): clang, its sanitizer runtimes, symbolizer
	clang libclang-rt-14-dev llvm-14
	# the memcheck build of the unit tests (devtools/run-tests.sh, -Dvalgrind=true)
	valgrind
	# malloc_perf: the allocators it compares with, and its charts (devtools/plot-perf)
	libjemalloc-dev libmimalloc-dev libgoogle-perftools-dev python3-matplotlib
	# the guides and the API reference (meson target doc, devtools/perf-report)
	python3-sphinx python3-breathe python3-sphinx-rtd-theme doxygen
)

missing=()
for p in "${pkgs[@]}"; do
	if ! dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed$'; then
		missing+=("$p")
	fi
done
if [ ${#missing[@]} -eq 0 ]; then
	exit 0
fi

echo "installing: ${missing[*]}"
if [ "$(id -u)" -ne 0 ]; then
	echo "not root: install them with: apt-get install -y ${missing[*]}" >&2
	exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt_install() {
	apt-get install -y -q --no-install-recommends -o Dpkg::Options::=--force-confdef \
		-o Dpkg::Options::=--force-confold "${missing[@]}"
}
# a machine that never ran apt-get update has no package lists
if ! apt_install; then
	apt-get update -q
	apt_install
fi
