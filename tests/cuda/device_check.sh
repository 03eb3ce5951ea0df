#!/usr/bin/env bash
# The cuda target's checks on a machine with an NVIDIA GPU; every log goes into OUTDIR.
#
#   tests/cuda/device_check.sh OUTDIR [PART...]
#
# PARTs (default: all of them, in this order):
#   conformance  every ONNX operator case vtc supports, on cuda under none, type1 and greedy
#                (outputs bitwise equal across strategies, and within tolerance of ONNX's
#                expected outputs): conformance_cuda.txt
#   small        every model of models/ at small size: `vtc check --target cuda` (strategies
#                bitwise equal; relative L2 error against the reference interpreter and
#                onnxruntime: f32 1e-5, f16 / bf16 1e-2), compile times: models_small.txt
#   full         the same at full size, batch 1: models_full.txt
#   sanitize     compute-sanitizer memcheck and racecheck over `vtc run --target cuda` of every
#                small model, each run stopped after $VTC_SANITIZE_TIMEOUT s (default 240) and
#                counted as timed out: sanitize.txt
#   bench        `vtc bench --target cuda` of the workloads at full size (every batch of
#                $VTC_BATCHES, default 1; strategies $VTC_STRATEGIES, default none,type1,greedy),
#                each model compiled first, several at a time: bench_cuda.txt, and each model's
#                figures with every step's time as bench/<model>.json
#   index        run-time index checks on the device: the small Llama layer with an
#                out-of-range position gives the reference interpreter's error on cuda, and
#                the runtime tests' cuda cases (IndexCheckTest, $VTC_RUNTIME_TESTS if given):
#                index.txt
# and summary.txt with one line per part. $VTC_DTYPES (default f32,f16,bf16) and $VTC_ONLY
# (workload names, default all) choose the models the small, full and sanitize parts use.
#
# The vtc binary is $VTC, else build/tools/vtc, else it is built here with CMake (the
# machine then needs vtc's build dependencies). A binary built on another machine travels
# with the shared libraries `ldd` lists that this machine lacks, in a folder named by
# $VTC_LIBS (put first on LD_LIBRARY_PATH); it finds the kernel headers in this checkout
# ($VTC_SOURCE_DIR). The conformance cases
# are libonnx-testdata's, from $VTC_ONNX_NODE_TESTS, else /usr/share/libonnx-testdata/data/node,
# else unpacked from $VTC_ONNX_NODE_TARBALL. Models are generated with models/generate.py
# (python3 with onnx and numpy); onnxruntime is the CPU peer `vtc check` compares with.
set -uo pipefail

out=${1:?usage: tests/cuda/device_check.sh OUTDIR [conformance small full sanitize bench index]}
shift
parts=("$@")
[ ${#parts[@]} -eq 0 ] && parts=(conformance small full sanitize bench index)
root=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$out"
out=$(cd "$out" && pwd)
work=${VTC_WORK:-/tmp/vtc-device-check}
cache=${VTC_CACHE_DIR:-$work/cache}
mkdir -p "$work" "$cache"
jobs=$(nproc)
summary=$out/summary.txt
: >"$summary"
note() { echo "$*" | tee -a "$summary"; }

if [ -n "${VTC_LIBS:-}" ]; then export LD_LIBRARY_PATH=$VTC_LIBS${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}; fi
vtc=${VTC:-$root/build/tools/vtc}
if [ ! -x "$vtc" ]; then
  echo "building vtc in $root/build ..."
  cmake -S "$root" -B "$root/build" -DCMAKE_BUILD_TYPE=Release -DVTC_TESTS=OFF -DVTC_BENCH=OFF \
    >"$out/build.txt" 2>&1 && cmake --build "$root/build" --target vtc -j "$jobs" >>"$out/build.txt" 2>&1 ||
    { note "build: FAILED (build.txt)"; exit 1; }
fi
export VTC_SOURCE_DIR=${VTC_SOURCE_DIR:-$root} # the kernel headers generated code includes
nvidia-smi -L >"$out/gpu.txt" 2>&1
note "gpu: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)"

models_of() { # size -> the generated model files
  local dir
  dir=$work/models-$1-$(echo "${VTC_DTYPES:-all}-${VTC_ONLY:-all}" | tr ' ,' '__')
  if [ ! -d "$dir" ]; then
    # shellcheck disable=SC2086
    python3 "$root/models/generate.py" --out "$dir" --size "$1" --batch 1 --dtype "${VTC_DTYPES:-f32,f16,bf16}" \
      ${VTC_ONLY:+--only $VTC_ONLY} >"$out/generate_$1.txt" 2>&1 ||
      { note "generate $1: FAILED"; return 1; }
  fi
  ls "$dir"/*.onnx
}

donate_flags() { # model -> --donate flags for a KV-cache model
  case "$(basename "$1")" in llama3_*|gemma2_*) echo "--donate past_k --donate past_v" ;; esac
}

for part in "${parts[@]}"; do
  case $part in
  conformance)
    node=${VTC_ONNX_NODE_TESTS:-/usr/share/libonnx-testdata/data/node}
    if [ ! -d "$node" ] && [ -n "${VTC_ONNX_NODE_TARBALL:-}" ]; then
      mkdir -p "$work/onnx" && tar xzf "$VTC_ONNX_NODE_TARBALL" -C "$work/onnx" && node=$work/onnx/node
    fi
    start=$SECONDS
    "$vtc" conformance "$node" --target cuda --cache-dir "$cache" -j "$jobs" \
      --expect "$root/tests/conformance/expected_failures_cuda.txt" -v >"$out/conformance_cuda.txt" 2>&1
    rc=$?
    note "conformance cuda: $(grep -E '^conformance' "$out/conformance_cuda.txt" | tail -1) (exit $rc, $((SECONDS - start)) s)"
    ;;
  small | full)
    log=$out/models_$part.txt
    mkdir -p "$work/checks-$part"
    export vtc cache work
    # Four models at a time (each compiles on every core, then runs on the one GPU).
    models_of "$part" | xargs -P 4 -I{} bash -c '
      m={}; n=$(basename "$m" .onnx); d=""
      case $n in llama3_*|gemma2_*) d="--donate past_k --donate past_v" ;; esac
      start=$SECONDS
      "$vtc" check "$m" --target cuda --cache-dir "$cache" $d >"$work/checks-'"$part"'/$n.log" 2>&1
      echo "== $n.onnx (exit $?, $((SECONDS - start)) s)" >"$work/checks-'"$part"'/$n.head"'
    : >"$log"
    for h in "$work/checks-$part"/*.head; do
      cat "$h" "${h%.head}.log" >>"$log"
    done
    note "models $part: $(grep -c '^== .*exit 0' "$log") of $(grep -c '^== ' "$log") pass (models_$part.txt)"
    ;;
  sanitize)
    log=$out/sanitize.txt
    rm -rf "$work/sanitize" && mkdir -p "$work/sanitize"
    limit=${VTC_SANITIZE_TIMEOUT:-240}
    export vtc cache work limit
    # Four models at a time; each under memcheck, then racecheck, each run stopped after $limit
    # seconds (racecheck of a full convolutional model can take longer than a command may).
    models_of small | xargs -P 4 -I{} bash -c '
      m={}; n=$(basename "$m" .onnx); d=""
      case $n in llama3_*|gemma2_*) d="--donate past_k --donate past_v" ;; esac
      for tool in memcheck racecheck; do
        start=$SECONDS
        timeout "$limit" compute-sanitizer --tool $tool --error-exitcode 9 "$vtc" run "$m" \
          --target cuda --cache-dir "$cache" $d --output-dir "$work/sanitize/$n-out" \
          >"$work/sanitize/$n.$tool" 2>&1
        rc=$?
        if [ $rc -eq 124 ]; then
          echo "== $n $tool timed out after $limit s" >"$work/sanitize/$n.$tool.head"
          continue
        fi
        echo "== $n $tool exit $rc ($((SECONDS - start)) s): $(grep -E "ERROR SUMMARY" "$work/sanitize/$n.$tool" | tail -1)" \
          >"$work/sanitize/$n.$tool.head"
        [ $rc -ne 0 ] && tail -40 "$work/sanitize/$n.$tool" >>"$work/sanitize/$n.$tool.head"
      done'
    cat "$work/sanitize"/*.head >"$log"
    note "sanitize: $(grep -c '^== .* exit 0' "$log") of $(grep -c '^== ' "$log") clean, $(grep -c '^== .* timed out' "$log") timed out after $limit s (sanitize.txt)"
    ;;
  bench)
    log=$out/bench_cuda.txt
    : >"$log"
    mkdir -p "$out/bench"
    strategies=${VTC_STRATEGIES:-none,type1,greedy}
    dir=$work/models-bench-$(echo "${VTC_DTYPES:-all}-${VTC_ONLY:-all}-${VTC_BATCHES:-1}" | tr ' ,' '__')
    if [ ! -d "$dir" ]; then
      # shellcheck disable=SC2086
      python3 "$root/models/generate.py" --out "$dir" --size full --batch "${VTC_BATCHES:-1}" \
        --dtype "${VTC_DTYPES:-f32,f16,bf16}" \
        --only ${VTC_ONLY:-llama3_layer gemma2_local efficientvit yolo11n shufflenet_v2} \
        >"$out/generate_bench.txt" 2>&1 || { note "generate bench: FAILED"; exit 1; }
    fi
    export vtc cache strategies
    start=$SECONDS
    # NVRTC is the slow part: four models compile at once, then each is timed alone.
    ls "$dir"/*.onnx | xargs -P 4 -I{} bash -c '
      m={}; d=""
      case $(basename "$m") in llama3_*|gemma2_*) d="--donate past_k --donate past_v" ;; esac
      "$vtc" compile "$m" --target cuda --cache-dir "$cache" --strategies "$strategies" -q $d \
        >/dev/null 2>&1 || echo "compile $(basename "$m"): FAILED"' >>"$log"
    note "bench compile: $((SECONDS - start)) s"
    for m in "$dir"/*.onnx; do
      n=$(basename "$m" .onnx)
      echo "== $n" >>"$log"
      # shellcheck disable=SC2046
      "$vtc" bench "$m" --target cuda --cache-dir "$cache" $(donate_flags "$m") --repeat 50 \
        --strategies "$strategies" --top 15 --json "$out/bench/$n.json" >>"$log" 2>&1
    done
    note "bench cuda: $(grep -c '^bench:' "$log") models timed (bench_cuda.txt)"
    ;;
  index)
    log=$out/index.txt
    : >"$log"
    dir=$work/models-index
    python3 "$root/models/generate.py" --out "$dir" --size small --batch 1 --dtype f32 \
      --only llama3_layer >>"$log" 2>&1
    python3 -c "import numpy; numpy.save('$dir/pos.npy', numpy.array([1000], dtype=numpy.int64))"
    for t in ref cuda; do
      "$vtc" run "$dir/llama3_layer_small_f32_b1.onnx" --target $t --cache-dir "$cache" \
        --donate past_k --donate past_v -i pos="$dir/pos.npy" >"$work/index_$t.txt" 2>&1
      echo "== $t exit $?: $(grep 'error' "$work/index_$t.txt")" >>"$log"
    done
    same=no
    [ "$(grep -c "exit 1: vtc: error: Gather 'attn/cos_gather': index 1000 out of range" "$log")" = 2 ] && same=yes
    tests=""
    if [ -n "${VTC_RUNTIME_TESTS:-}" ]; then
      "$VTC_RUNTIME_TESTS" --gtest_filter='IndexCheckTest.Cuda*:RuntimeTest.Cuda*' >>"$log" 2>&1
      tests=", runtime tests exit $?"
    fi
    note "index: out-of-range position is the reference's error on cuda: $same$tests (index.txt)"
    ;;
  *) note "unknown part '$part'" ;;
  esac
done
cat "$summary"
