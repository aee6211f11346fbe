#!/usr/bin/env bash
# Whether what `gpuscope record` measures after a program (gpuscope-calibrate: what recording adds to one kernel
# launch on this machine) is what recording costs a program's launches, and what the advisor makes of it:
#  1. tests/bench/launch_cost (C++, an empty kernel) plain and recorded, alternated ROUNDS times: the loop's own
#     difference per launch beside the cost each recording measured after it;
#  2. each corpus CASE given (bench/corpus/CASE/program.py, and clean.py where there is one): plain and under
#     `record --torch`, each by its own clock (its last "N ms/step" line); the advisor's step, finding ids and its
#     note on the recording's cost; with APPLY=1, the plan of the program's recording applied, by its clock.
# Traces and reports go to OUT_DIR (default: a temporary folder).
#
# Usage (on the GPU machine, repository root, after `source scripts/gpu-env`):
#   bench/cost/calibration_check.sh ROUNDS LAUNCH_COST [CASE...]
# Seen on an H200 (2026-11-29, docs/benchmarks.md "The recording's cost, measured after the program").
set -uo pipefail

rounds="$1"
launch_cost="$2"
shift 2
out="${OUT_DIR:-$(mktemp -d)}"
mkdir -p "$out"

clock() { grep -o '[0-9.]* ms/step' | tail -1; }

cost_row() {
  python3 - "$1" <<'EOF'
import sqlite3, sys
rows = sqlite3.connect(sys.argv[1]).execute(
    "select code, count, message from data_quality where code like 'recording_cost%'").fetchall()
print(" | ".join("%s %d ns: %s" % row for row in rows) or "no row")
EOF
}

advice() {
  gpuscope advise --format json "$1" >"$1.advice.json" 2>&1
  python3 - "$1.advice.json" <<'EOF'
import json, sys
try:
    d = json.load(open(sys.argv[1]))
except ValueError:
    print("    advise failed: " + open(sys.argv[1]).read()[:300]); sys.exit()
print("    findings:", ", ".join(f["id"] for f in d["findings"]))
print("    advisor step: %.3f ms; plan %.3f ms" % (d["measured"]["step_time_ns"] / 1e6,
                                                 d["plan_predicted"]["step_time_ns"] / 1e6))
for n in d["notes"]:
    if n.startswith("recording added"):
        print("    note: " + n)
EOF
}

for round in $(seq 1 "$rounds"); do
  echo "round $round c++ plain: $("$launch_cost")"
  echo "round $round c++ recorded: $(gpuscope record -q -f -o "$out/lc.gpuscope" -- "$launch_cost" 2>&1 | grep launch_us)"
  echo "round $round measured after it: $(cost_row "$out/lc.gpuscope")"
done

for case in "$@"; do
  for script in program clean; do
    file="bench/corpus/$case/$script.py"
    [ -f "$file" ] || continue
    trace="$out/$case.$script.gpuscope"
    echo "$case/$script plain: $(python3 "$file" 2>&1 | clock)"
    echo "$case/$script recorded: $(gpuscope record -q -f --torch -o "$trace" -- python3 "$file" 2>&1 | clock)"
    echo "    $(cost_row "$trace")"
    advice "$trace"
    if [ "${APPLY:-0}" = 1 ] && [ "$script" = program ]; then
      gpuscope advise -f --plan "$out/$case.plan.json" -o /dev/null "$trace" >/dev/null 2>&1
      echo "$case/$script applied: $(gpuscope apply --plan "$out/$case.plan.json" -- python3 "$file" 2>"$out/$case.apply.err" | clock)"
      grep -E "applied|rolled back|kept" "$out/$case.apply.err" | head -5 | sed 's/^/    /'
    fi
  done
done
