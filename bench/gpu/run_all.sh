#!/usr/bin/env bash
# The whole GPU benchmark in commands of under 10 minutes each (the GPU machine's limit):
#
#   bench/gpu/run_all.sh warm  OUT [WORKLOAD...]   every case's untimed warm-up, all at once
#   bench/gpu/run_all.sh time  OUT [WORKLOAD...]   the timed runs, one workload after another
#   bench/gpu/run_all.sh merge OUT                 one table, JSON and chart of every timed run
#
# `warm` starts one `run.py --warm-up` per workload and batch in parallel: they export the
# models, compile vtc cold (recording its compile times) and fill the inductor cache, and time
# nothing, so they may share the GPU. `time` then runs each workload at both batches alone on
# the GPU with the warm caches (`run.py --workloads W --batches 1,16`), in the order given.
# Every part shares OUT/cache. WORKLOADs default to all seven; $SKIP (default
# torch_max_autotune, whose compile takes minutes per case) is passed to run.py's --skip ("" to
# run every peer); $BATCHES defaults to 1,16; $DEADLINE (seconds, default 540) stops `time`
# from starting a workload after it, so a command ends within the machine's limit and the rest
# runs in the next; $RUN_ARGS goes to every run.py (say "--size small --target cpu" to try the
# flow without a GPU, "--rounds 2" for vtc and the peers in alternating rounds; `warm` always
# runs one). VTC and VTC_LIBS as for run.py.
set -uo pipefail

part=${1:?usage: bench/gpu/run_all.sh warm|time|merge OUT [WORKLOAD...]}
out=${2:?usage: bench/gpu/run_all.sh warm|time|merge OUT [WORKLOAD...]}
shift 2
workloads=("$@")
[ ${#workloads[@]} -eq 0 ] &&
  workloads=(yolo11_c3k2 shufflenet_v2 efficientvit yolo11n llama3_layer gemma2_local gemma2_global)
here=$(cd "$(dirname "$0")" && pwd)
skip=${SKIP-torch_max_autotune}
batches=${BATCHES:-1,16}
deadline=${DEADLINE:-540}
mkdir -p "$out/warm"
cache=$out/cache
export PYTHONUNBUFFERED=1

case $part in
warm)
  start=$SECONDS
  for w in "${workloads[@]}"; do
    for b in ${batches//,/ }; do
      python3 "$here/run.py" "$out/warm/$w-b$b" --cache "$cache" --warm-up --workloads "$w" \
        --batches "$b" ${skip:+--skip "$skip"} ${RUN_ARGS:-} >"$out/warm/$w-b$b.log" 2>&1 &
    done
  done
  wait
  # The profiled choices vtc made while the warm-ups shared the GPU are dropped: the timed runs
  # make them again, alone on it (and keep them for later runs).
  rm -rf "$cache/vtc/profiles"
  failed=$(grep -l "Traceback" "$out"/warm/*.log 2>/dev/null | tr '\n' ' ')
  echo "run_all: warm-ups done in $((SECONDS - start)) s${failed:+; failed: $failed}"
  ;;
time)
  for w in "${workloads[@]}"; do
    if [ "$SECONDS" -gt "$deadline" ]; then
      echo "run_all: $w not started: past the deadline of $deadline s"
      continue
    fi
    start=$SECONDS
    python3 "$here/run.py" "$out/$w" --cache "$cache" --workloads "$w" --batches "$batches" \
      ${skip:+--skip "$skip"} ${RUN_ARGS:-} >"$out/$w.log" 2>&1
    echo "run_all: $w in $((SECONDS - start)) s: $(grep 'gpu-bench:' "$out/$w.log" || echo 'no table (see the log)')"
  done
  ;;
merge)
  runs=()
  for d in "$out"/*/; do
    [ -f "$d/run.json" ] && [ "$(basename "$d")" != warm ] && runs+=("$d")
  done
  [ ${#runs[@]} -gt 0 ] || { echo "run_all: no timed runs in $out"; exit 1; }
  python3 "$here/merge.py" "${runs[@]}" --out "$out/all"
  ;;
*)
  echo "run_all: unknown part '$part' (warm, time or merge)"
  exit 2
  ;;
esac
