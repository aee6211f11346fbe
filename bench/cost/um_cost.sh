#!/usr/bin/env bash
# What recording unified memory costs a program: each program run plain, under `gpuscope record` (which records
# unified memory's migrations and page faults, `um` in --trace) and under `gpuscope record --trace
# cuda,api,nvtx,memory` (without them), interleaved, ROUNDS times; each run prints its own "N ms/step" line.
#   bench/cost/um_cost.sh [ROUNDS] PROGRAM...   (on the GPU machine, after `source scripts/gpu-env`)
# The corpus's cuda_managed_particles and its twin are the programs of docs/benchmarks.md.
set -euo pipefail
rounds=3
if [[ ${1:-} =~ ^[0-9]+$ ]]; then rounds=$1; shift; fi
gpuscope=${GPUSCOPE:-gpuscope}
out=$(mktemp -d)
for program in "$@"; do
  for round in $(seq "$rounds"); do
    echo "$(basename "$program") round $round plain $("$program" | tail -1)"
    echo "$(basename "$program") round $round record $("$gpuscope" record -q -f --no-calibrate -o "$out/um.gpuscope" -- "$program" | tail -1)"
    echo "$(basename "$program") round $round record-no-um $("$gpuscope" record -q -f --no-calibrate --trace cuda,api,nvtx,memory -o "$out/no-um.gpuscope" -- "$program" | tail -1)"
  done
done
rm -rf "$out"
