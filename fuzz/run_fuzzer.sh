#!/usr/bin/env bash
# Builds the ONNX loader fuzzer with clang, AddressSanitizer and UBSan, seeds it with the
# ONNX operator test models, and runs it for SECONDS (default 600) in fork mode, going on
# after a finding so that one run collects them all (each lands in build-fuzz/findings/).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-600}
build=build-fuzz
CC=clang CXX=clang++ cmake -S . -B $build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DVTC_FUZZ=ON \
  -DVTC_SANITIZE=ON -DVTC_TESTS=OFF -DVTC_BENCH=OFF -DVTC_CUDA=OFF >/dev/null
cmake --build $build -j "$(nproc)" --target onnx_loader_fuzzer
corpus=$build/corpus
mkdir -p $corpus
if [ -z "$(ls -A $corpus)" ]; then
  for d in /usr/share/libonnx-testdata/data/node/*/; do
    cp "$d/model.onnx" "$corpus/$(basename "$d").onnx"
  done
fi
mkdir -p $build/findings
UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
  $build/fuzz/onnx_loader_fuzzer $corpus -max_total_time="$seconds" -rss_limit_mb=4096 \
  -max_len=65536 -artifact_prefix=$build/findings/ -fork=1 -ignore_crashes=1 \
  -ignore_timeouts=1 -ignore_ooms=1 \
  -print_final_stats=1
