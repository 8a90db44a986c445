#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Check that every C source and header tracked by git follows .clang-format.
# Usage: devtools/check-format.sh    (fix with: clang-format -i FILE...)
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v clang-format >/dev/null; then
	echo "clang-format not found (devtools/install-deps.sh installs it)" >&2
	exit 1
fi
mapfile -t files < <(git ls-files -- '*.c' '*.h')
if [ ${#files[@]} -eq 0 ]; then
	echo "format: no C files tracked"
	exit 0
fi
if ! clang-format --dry-run --Werror "${files[@]}"; then
	echo "format: differences above ($(clang-format --version)); fix with clang-format -i" >&2
	exit 1
fi
echo "format: ${#files[@]} files OK"
