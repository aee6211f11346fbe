#!/usr/bin/env bash
# What the collector's periodic flush of CUPTI's buffers costs a program: the program plain, then under
# `gpuscope record` with GPUSCOPE_FLUSH_MS set to each interval given (0: only when buffers fill), alternated for
# ROUNDS rounds, each timed by the program's own clock (its last "N ms/step" line); for each recording, CUPTI's
# overhead records by host thread and kind (kind 2: a flush; 8: a thread asking for a new buffer; 7: the GPU's
# command buffer full), the costliest first.
#
# Usage (on the GPU machine, repository root, after `source scripts/gpu-env`):
#   GPUSCOPE=PATH/gpuscope bench/cost/flush_cost.sh ROUNDS "RECORD FLAGS" INTERVALS... -- PROGRAM...
# e.g. bench/cost/flush_cost.sh 2 "--torch" 100 1000 0 -- python3 bench/corpus/pt_per_param_adam/program.py
# Seen on an H100 (2026-11-28, docs/benchmarks.md "CUPTI's periodic flush").
set -uo pipefail

gpuscope="${GPUSCOPE:-gpuscope}"
rounds="$1"
flags="$2"
shift 2
intervals=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do
  intervals+=("$1")
  shift
done
shift  # the --
trace="$(mktemp -d)/flush.gpuscope"

clock() { grep -o '[0-9.]* ms/step' | tail -1; }

overhead() {
  [ -s "$1" ] || { echo "    no trace"; return; }
  python3 - "$1" <<'EOF'
import sqlite3, sys
query = ("select thread_id, kind, count(*), avg(end_ns - start_ns) / 1e6, sum(end_ns - start_ns) / 1e6 "
         "from overhead group by thread_id, kind order by sum(end_ns - start_ns) desc limit 6")
for row in sqlite3.connect(sys.argv[1]).execute(query):
    print("    thread %d, overhead kind %d: %d records, mean %.3f ms, total %.1f ms" % row)
EOF
}

for round in $(seq 1 "$rounds"); do
  echo "round $round plain: $("$@" 2>&1 | clock)"
  for ms in "${intervals[@]}"; do
    rm -f "$trace"
    # shellcheck disable=SC2086  # the record flags are words
    step=$(GPUSCOPE_FLUSH_MS=$ms "$gpuscope" record -q -f $flags -o "$trace" -- "$@" 2>&1 | clock)
    echo "round $round record, a flush every $ms ms: $step"
    overhead "$trace"
  done
done
rm -rf "$(dirname "$trace")"
