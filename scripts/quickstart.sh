#!/usr/bin/env bash
# Installs the build dependencies, builds Cueue and simulates the sample
# GPU cluster in config/samples/.
# Usage: scripts/quickstart.sh [extra cueue simulate flags, e.g. -o json]
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release > /dev/null
cmake --build build -j"$(nproc)" --target cueue
./build/cueue simulate "$@" config/samples/
