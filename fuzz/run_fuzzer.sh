#!/usr/bin/env bash
# Builds a libFuzzer target with clang, AddressSanitizer and UBSan, seeds it, and runs it for
# SECONDS (default 600) in fork mode, going on after a finding so that one run collects them
# all (each lands in build-fuzz/findings-TARGET/).
#   fuzz/run_fuzzer.sh [onnx_loader|tensor_file] [SECONDS]
# onnx_loader is seeded with the ONNX operator test models, tensor_file with their .pb test
# tensors and .npy files numpy writes (each prefixed by the byte that picks the reader).
set -euo pipefail
cd "$(dirname "$0")/.."
target=${1:-onnx_loader}
seconds=${2:-600}
case $target in
onnx_loader | tensor_file) ;;
*) echo "run_fuzzer: unknown target '$target' (onnx_loader or tensor_file)" >&2; exit 2 ;;
esac
build=build-fuzz
CC=clang CXX=clang++ cmake -S . -B $build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DVTC_FUZZ=ON \
  -DVTC_SANITIZE=ON -DVTC_TESTS=OFF -DVTC_BENCH=OFF -DVTC_CUDA=OFF >/dev/null
cmake --build $build -j "$(nproc)" --target ${target}_fuzzer
corpus=$build/corpus-$target
mkdir -p $corpus
if [ -z "$(ls -A $corpus)" ]; then
  data=/usr/share/libonnx-testdata/data/node
  if [ $target = onnx_loader ]; then
    for d in $data/*/; do
      cp "$d/model.onnx" "$corpus/$(basename "$d").onnx"
    done
  else
    for f in $data/*/test_data_set_0/input_0.pb; do
      name=$(basename "$(dirname "$(dirname "$f")")")
      { printf '\x02'; cat "$f"; } >"$corpus/$name.pb"
    done
    python3 - "$corpus" <<'PY'
import io, sys
import numpy as np
out = sys.argv[1]
arrays = {"f32": np.arange(6, dtype=np.float32).reshape(2, 3), "f16": np.ones(4, np.float16),
          "i64": np.array([3, -1], np.int64), "bool": np.array([True]), "scalar": np.float32(2),
          "u2": np.arange(3, dtype=np.uint16), "v2": np.zeros((1, 2), np.int8)}
for name, a in arrays.items():
    buf = io.BytesIO()
    if name == "v2":
        np.lib.format.write_array(buf, np.asarray(a), version=(2, 0))
    else:
        np.save(buf, a)
    for mode in (0, 1):
        open(f"{out}/{name}-{mode}.npy", "wb").write(bytes([mode]) + buf.getvalue())
PY
  fi
fi
findings=$build/findings-$target
mkdir -p $findings
UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
  $build/fuzz/${target}_fuzzer $corpus -max_total_time="$seconds" -rss_limit_mb=4096 \
  -max_len=65536 -artifact_prefix=$findings/ -fork=1 -ignore_crashes=1 \
  -ignore_timeouts=1 -ignore_ooms=1 \
  -print_final_stats=1
