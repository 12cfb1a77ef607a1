#!/usr/bin/env bash
# Runs every test: installs dependencies, builds the real Kubernetes control
# plane and Kueue from their Go modules (e2e/k8s/cluster.sh build,
# bench/kueue/build.sh build; cached outside the repo), builds, runs the unit, scenario, CLI and e2e tests (the controller
# suites on the embedded cluster and on the real one), then the same tests
# again under AddressSanitizer and UndefinedBehaviorSanitizer, then a short
# run of each fuzz target.
# Usage: scripts/test.sh            (FUZZ_SECONDS=N to change the fuzz time; 0 skips)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
jobs=$(nproc)
echo "== the real control plane for the k8s_* tests (built once, then cached)"
e2e/k8s/cluster.sh build
e2e/k8s/addons.sh build
echo "== Kueue, for bench/vs-kueue.sh's small run (built once, then cached)"
bench/kueue/build.sh build
echo "== build and test (RelWithDebInfo)"
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo > /dev/null
cmake --build build -j"$jobs"
(cd build && ctest --output-on-failure -j"$jobs")
echo "== build and test under ASan+UBSan"
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DCUEUE_SANITIZE=ON > /dev/null
cmake --build build-asan -j"$jobs"
# the k8s_* suites repeat the e2e_* ones on the real control plane; under
# the sanitizers, two of them (the core path against the real server) keep
# CI's time in bounds
(cd build-asan && export ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 &&
   ctest --output-on-failure -j"$jobs" -LE k8s &&
   ctest --output-on-failure -j"$jobs" -R '^k8s_(controller_basic|controller_jobs_run)$')
secs=${FUZZ_SECONDS:-20}
if [ "$secs" -gt 0 ]; then
  fuzzers="fuzz_quantity fuzz_yaml fuzz_simulate fuzz_jobs fuzz_jsonpath fuzz_fields"
  fuzzers="$fuzzers fuzz_apiserver"
  fuzzers="$fuzzers fuzz_informer"
  fuzzers="$fuzzers fuzz_schema"
  fuzzers="$fuzzers fuzz_protobuf fuzz_patch fuzz_watch fuzz_kconfig fuzz_visibility"
  fuzzers="$fuzzers fuzz_whconvert"
  fuzzers="$fuzzers fuzz_webhook"
  fuzzers="$fuzzers fuzz_topology"
  echo "== fuzz targets, ${secs}s each"
  CC=clang cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=Debug -DCUEUE_FUZZ=ON > /dev/null
  cmake --build build-fuzz -j"$jobs" --target $fuzzers
  for f in $fuzzers; do
    seeds=""
    [ "$f" = fuzz_simulate ] && seeds="sim/scenarios config/controller"
    [ "$f" = fuzz_quantity ] && seeds=api/fuzz-seeds-quantity
    [ "$f" = fuzz_jobs ] && seeds=controller/fuzz-seeds
    [ "$f" = fuzz_jsonpath ] && seeds=cluster/apiserver/fuzz-seeds
    [ "$f" = fuzz_fields ] && seeds=cluster/apiserver/fuzz-seeds-fields
    [ "$f" = fuzz_apiserver ] && seeds=cluster/apiserver/fuzz-seeds-apiserver
    [ "$f" = fuzz_informer ] && seeds=controller/fuzz-seeds-informer
    [ "$f" = fuzz_schema ] && seeds=cluster/apiserver/fuzz-seeds-schema
    [ "$f" = fuzz_protobuf ] && seeds=cluster/apiserver/fuzz-seeds-protobuf
    [ "$f" = fuzz_patch ] && seeds=cluster/apiserver/fuzz-seeds-patch
    [ "$f" = fuzz_watch ] && seeds=kube/fuzz-seeds-watch
    [ "$f" = fuzz_kconfig ] && seeds=kube/fuzz-seeds-kconfig
    [ "$f" = fuzz_visibility ] && seeds=controller/fuzz-seeds-visibility
    [ "$f" = fuzz_whconvert ] && seeds=api/fuzz-seeds-whconvert
    [ "$f" = fuzz_webhook ] && seeds=controller/fuzz-seeds-webhook
    mkdir -p build-fuzz/corpus-$f
    ./build-fuzz/$f -max_total_time="$secs" -print_final_stats=0 build-fuzz/corpus-$f $seeds 2>&1 < /dev/null | tail -2
  done
fi
echo "== all tests passed"
