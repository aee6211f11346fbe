#!/usr/bin/env bash
# The JAX bridge (`gpuscope record --jax`) on the GPU machine, in parts (PARTS, default "cases cost"):
#   cases     the corpus's JAX memory cases recorded with the bridge: output against a plain run, what the trace
#             holds (`stats --report memory_usage`), the advisor's findings;
#   cost      plain / record / record --jax in turn, pinned to 8 cores, ROUNDS times: each program's own clock and
#             its result lines;
#   interval  record against record --jax with readings every 10 and 50 ms, unpinned, ROUNDS times (CASE);
#   crash     RUNS rounds of VARIANTS (plain, record, record:KINDS), unbuffered (CASE): where a program dies.
# Usage (on the GPU machine, the gpuscope binaries on PATH or in .gpu-carry/): OUT=dir scripts/jax-memory-run.sh
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/gpu-env
R=${OUT:?}/jax
mkdir -p "$R"
export GPUSCOPE_PYTHON_DIR=$PWD/advisor/runtime/python
python3 - > "$R/jax-facts.txt" 2>&1 <<'PY'
import jax
from jax._src import xla_bridge
print("jax", jax.__version__, "backends_are_initialized" in dir(xla_bridge))
x = jax.numpy.ones((1024, 1024))
print(sorted(jax.devices()[0].memory_stats().items()))
PY
clock() { grep -Eo '[0-9.]+ ms/(step|batch)' "$1" | tail -1; }
results() { grep -E 'ms/step|loss|accuracy' | tr '\n' ' '; }

run_case() {  # NAME FILE
  local name=$1 file=$2 dir=bench/corpus/$1 base=$R/$1-$2
  python3 "$dir/$file" > "$base-plain.out" 2> "$base-plain.err"
  gpuscope record --jax -f -q -o "$base.gpuscope" -- python3 "$dir/$file" > "$base-jax.out" 2> "$base-jax.err"
  local rc=$? same="outputs identical but the timing line"
  cmp -s <(grep -v "ms/" "$base-plain.out") <(grep -v "ms/" "$base-jax.out") || same="OUTPUTS DIFFER"
  echo "$name $file plain $(clock "$base-plain.out") | record --jax $(clock "$base-jax.out") exit $rc, $same"
  gpuscope stats "$base.gpuscope" --report memory_usage > "$base.usage.txt" 2>&1
  gpuscope advise "$base.gpuscope" --format json > "$base.advice.json" 2> "$base.advice.err"
  gpuscope advise "$base.gpuscope" > "$base.advice.txt" 2>&1
}

cases() {
  cat "$R/jax-facts.txt"
  for c in jax_flax_mlp_train jax_kept_logits; do run_case $c program.py; run_case $c clean.py; done
  run_case jax_transformer_lm program.py
  run_case jax_platform_allocator program.py
}

cost() {
  local p a b j
  for round in $(seq "${ROUNDS:-3}"); do
    for c in jax_flax_mlp_train jax_transformer_lm jax_kept_logits; do
      p=bench/corpus/$c/program.py
      a=$(taskset -c 0-7 python3 $p 2>&1 | results)
      b=$(taskset -c 0-7 gpuscope record -f -q -o "$R/cost.gpuscope" -- python3 $p 2>&1 | results)
      j=$(taskset -c 0-7 gpuscope record --jax -f -q -o "$R/cost.gpuscope" -- python3 $p 2>&1 | results)
      echo "round $round $c: plain $a| record $b| record --jax $j"
    done
  done
  rm -f "$R/cost.gpuscope"
}

interval() {
  local p=bench/corpus/${CASE:-jax_transformer_lm}/program.py line log rc
  for round in $(seq "${ROUNDS:-3}"); do
    line="round $round $p:"
    for variant in record jax10 jax50; do
      log=$R/interval-$round-$variant.log
      local flags=()
      [ "$variant" = record ] || flags=(--jax)
      GPUSCOPE_JAX_SAMPLE_MS=${variant#jax} gpuscope record "${flags[@]}" -f -q -o "$R/cost.gpuscope" -- \
        python3 $p > "$log" 2>&1
      rc=$?
      line+=" $variant $(grep -Eo "[0-9.]+ ms/step" "$log" || echo "none: exit $rc, $(tail -1 "$log")") |"
    done
    echo "$line"
  done
  rm -f "$R/cost.gpuscope"
}

# Whether a program dies under `record` and where (seen 2026-11-28: jax_transformer_lm, 4 of 20 unpinned recorded
# runs ended without their timing line, one with SIGSEGV): RUNS rounds of VARIANTS (default "plain record"; a
# variant "record:KINDS" records only those --trace kinds, to tell which one it takes; "bare:KINDS" injects bare
# CUPTI with those kinds instead of gpuscope, to tell CUPTI's part from the collector's), unbuffered. Plain runs
# have Python's faulthandler; recorded ones the collector's debug lines and, at a crash, its native stack (the
# collector installs its handler only where the program has none, so they run without faulthandler). A run that
# dies keeps its trace (crash-RUN-VARIANT.gpuscope).
crash() {
  local p=bench/corpus/${CASE:-jax_transformer_lm}/program.py log rc timing trace kinds
  for run in $(seq "${RUNS:-10}"); do
    for variant in ${VARIANTS:-plain record}; do
      log=$R/crash-$run-${variant/:/-}.log trace=$R/crash-$run-${variant/:/-}.gpuscope
      if [ "$variant" = plain ]; then
        PYTHONUNBUFFERED=1 python3 -X faulthandler $p > "$log" 2>&1
      elif [ "${variant%%:*}" = bare ]; then  # CUPTI alone: tests/bench/bare_cupti_injection.cpp, built as $BARE_CUPTI
        PYTHONUNBUFFERED=1 CUDA_INJECTION64_PATH=${BARE_CUPTI:?} BARE_CUPTI_KINDS=${variant#bare:} \
          NVTX_INJECTION64_PATH=${NVTX_CUPTI:-/usr/local/cuda/lib64/libcupti.so} python3 -X faulthandler $p > "$log" 2>&1
      else
        kinds=(); [ "$variant" != "${variant#record:}" ] && kinds=(--trace "${variant#record:}")
        PYTHONUNBUFFERED=1 GPUSCOPE_DEBUG=1 gpuscope record "${kinds[@]}" -f -q -o "$trace" -- python3 $p > "$log" 2>&1
      fi
      rc=$?
      timing=$(grep -Eo '[0-9.]+ ms/step' "$log" || echo "no timing line; last: $(tail -1 "$log")")
      echo "run $run $variant: exit $rc, $timing"
      [ "$rc" = 0 ] && rm -f "$trace"
    done
  done
}

for part in ${PARTS:-cases cost}; do $part; done 2>&1 | tee -a "$R/summary.txt"
