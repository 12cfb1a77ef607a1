#!/usr/bin/env bash
# Installs the build dependencies, builds Cueue and runs the main job on
# the embedded default: `cueue dev` starts the embedded cluster with the
# sample GPU nodes, creates crds/ and config/samples/, runs the controller,
# and prints what is admitted, started, finished and why the rest waits,
# until Ctrl-C. Its kubeconfig is cueue-dev/kubeconfig.
# Usage: scripts/quickstart.sh [extra cueue dev flags, e.g. --duration 60]
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release > /dev/null
cmake --build build -j"$(nproc)" --target cueue
exec ./build/cueue dev "$@"
