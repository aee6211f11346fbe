#!/usr/bin/env bash
# What CUPTI leaves behind once its records are switched off: the C++ launch loop (host µs per launch) and the
# PyTorch launch loop (ms a step) plain, under bare CUPTI recording throughout, and under bare CUPTI that
# switches every kind off after OFF_MS (as a capture range's end or the PyTorch bridge's pause does), then the
# same followed by cuptiFinalize (CUPTI detached). Each run reports the median of its last half, where every
# switched-off run is off. Rounds alternate.
#
# Usage (on the GPU machine, repository root, with .gpu-carry unpacked and launch_cost in .gpu-carry/bin):
#   bench/cost/detach_cost.sh [ROUNDS] [OFF_MS]
set -uo pipefail
source "$(dirname "$0")/../../scripts/gpu-env"
rounds=${1:-3}
off_ms=${2:-300}
bare="$carry/lib/libbare_cupti_injection.so"
kinds=${DETACH_KINDS:-kernel,memcpy,memset,overhead,memory,runtime}
pin=()
[ -n "${DETACH_CPUS:-}" ] && pin=(taskset -c "$DETACH_CPUS")

cxx() { "${pin[@]}" "$carry/bin/launch_cost" 100 2000 2>&1 | grep -E -o '"last_half_us_median": [0-9.]*|kinds off.*'; }
py() {
  "${pin[@]}" python3 samples/pytorch/overhead_bench.py launch --steps 60 2>&1 |
    grep -E -o '"last_half_median_step_ms": [0-9.]*|kinds off.*'
}
for round in $(seq "$rounds"); do
  for program in cxx py; do
    echo "$program plain $round: $($program)"
    echo "$program cupti on $round: $(CUDA_INJECTION64_PATH=$bare BARE_CUPTI_KINDS=$kinds $program)"
    echo "$program cupti off after ${off_ms} ms $round: $(CUDA_INJECTION64_PATH=$bare BARE_CUPTI_KINDS=$kinds \
      BARE_CUPTI_OFF_AFTER_MS=$off_ms $program)"
    echo "$program cupti detached after ${off_ms} ms $round: $(CUDA_INJECTION64_PATH=$bare BARE_CUPTI_KINDS=$kinds \
      BARE_CUPTI_OFF_AFTER_MS=$off_ms BARE_CUPTI_OFF=finalize $program)"
  done
done
