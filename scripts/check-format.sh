#!/usr/bin/env bash
# check-format.sh [--fix] - the C sources follow .clang-format.
# Without --fix, lists the files clang-format would change and fails;
# with --fix, rewrites them in place.
set -uo pipefail
cd "$(dirname "$0")/.."
cf=$(command -v clang-format-14 || command -v clang-format) || {
    echo "check-format: clang-format (14) not found; scripts/install-deps.sh installs it"; exit 1; }
files=$(git ls-files '*.c' '*.h' 2>/dev/null || find . -name '*.[ch]' -not -path './build*')
if [ "${1:-}" = --fix ]; then
    "$cf" -i $files
    exit 0
fi
bad=0
for f in $files; do
    if ! "$cf" --dry-run -Werror "$f" >/dev/null 2>&1; then
        echo "not formatted: $f (scripts/check-format.sh --fix)"
        bad=1
    fi
done
[ $bad -eq 0 ] && echo "format: all $(wc -w <<<"$files") files follow .clang-format"
exit $bad
