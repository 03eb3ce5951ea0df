#!/usr/bin/env bash
# Generated code under AddressSanitizer and UBSan (vtc --sanitize: each buffer allocated on its
# own, so an out-of-bounds access through a mapping is reported), under strategies none, type1
# and greedy:
#   models       `vtc check --sanitize` of every small model of models/ (all dtypes, batch 1
#                and 16): strategies bitwise equal, against the reference and onnxruntime
#   conformance  `vtc conformance --target cpu --sanitize` over ONNX's data-movement cases (the
#                filter of ctest's conformance_cpu_data_movement), every strategy
# vtc runs with the ASan runtime of the JIT's compiler preloaded; the compiler and python run
# without it (faster). Any sanitizer report aborts the process it is in, which fails the model
# or the case. Logs go to WORK_DIR; the last lines say what passed.
#
#   tests/sanitize/check_sanitized.sh [BUILD_DIR [WORK_DIR [models] [conformance]]]
#
# $ONLY (a bash regex over model names, say _b1$) checks some of the models.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
work=${2:-$build/sanitize-check}
shift $(($# > 2 ? 2 : $#))
parts=${*:-models conformance}
vtc=$build/tools/vtc
jobs=${JOBS:-$(nproc)}
cxx=${CXX:-c++}
libasan=$($cxx -print-file-name=libasan.so)
[[ -f $libasan ]] || { echo "check_sanitized: $cxx has no libasan.so" >&2; exit 1; }
mkdir -p "$work"
cat > "$work/python" <<PY
#!/bin/sh
exec env -u LD_PRELOAD python3 "\$@"
PY
chmod +x "$work/python"

export LD_PRELOAD=$libasan
export ASAN_OPTIONS=detect_leaks=0:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1:abort_on_error=1
export CXX="env -u LD_PRELOAD $cxx"
status=0

if [[ " $parts " == *" models "* ]]; then
  env -u LD_PRELOAD python3 "$root/models/generate.py" --out "$work/models" --size small >/dev/null
  mkdir -p "$work/logs"
  check_one() {
    local name
    name=$(basename "$1" .onnx)
    if "$vtc" check "$1" --sanitize --python "$work/python" --cache-dir "$work/cache" \
      >"$work/logs/$name.txt" 2>&1; then
      echo "ok   $name: $(tail -1 "$work/logs/$name.txt")"
    else
      echo "FAIL $name: $work/logs/$name.txt"
    fi
  }
  export -f check_one
  export vtc work
  start=$(date +%s)
  for m in "$work"/models/*.onnx; do
    [[ $(basename "$m" .onnx) =~ ${ONLY:-.} ]] && echo "$m"
  done | xargs -P "$jobs" -I{} bash -c 'check_one {}' | sort | tee "$work/models.txt"
  failed=$(grep -c '^FAIL' "$work/models.txt" || true)
  total=$(wc -l <"$work/models.txt")
  echo "sanitized models: $((total - failed)) passed, $failed failed in $(($(date +%s) - start)) s"
  [[ $failed == 0 ]] || status=1
fi

if [[ " $parts " == *" conformance "* ]]; then
  start=$(date +%s)
  if ! "$vtc" conformance --target cpu --sanitize -j "$jobs" --cache-dir "$work/cache" --timeout 900 \
    --filter "^test_(reshape|flatten|squeeze|unsqueeze|transpose|slice|split|concat|expand|tile|gather|scatter|depthtospace|spacetodepth|identity|edge_pad|reflect_pad|constant_pad|wrap_pad)" \
    --expect "$root/tests/conformance/expected_failures_cpu.txt" >"$work/conformance.txt" 2>&1; then
    status=1
  fi
  grep -E "UNEXPECTED|^conformance:" "$work/conformance.txt" || true
  echo "sanitized conformance in $(($(date +%s) - start)) s: $work/conformance.txt"
fi
exit $status
