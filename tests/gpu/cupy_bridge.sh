#!/usr/bin/env bash
# The CuPy bridge end to end on the GPU machine (after scripts/advisor-eval stage): bench/corpus/cupy_pool_growth
# plain and under `gpuscope record --cupy` (same output but its timing line, same exit code), what the trace holds
# (the pool's events beside CUDA's allocations), and the advisor's finding on it. Usage: cupy_bridge.sh CARRY OUT
set -u
carry=$1 out=$2
gpuscope=$carry/bin/gpuscope
program=bench/corpus/cupy_pool_growth/program.py
echo "== cupy_pool_growth: plain, then recorded with --cupy"
python3 $program > "$out/plain.txt" 2> "$out/plain.err"; echo "plain exit $?"
"$gpuscope" record --cupy -f -o "$out/pool.gpuscope" -- python3 $program > "$out/recorded.txt" 2> "$out/recorded.err"
echo "recorded exit $?"
if cmp -s <(grep -v "ms/step" "$out/plain.txt") <(grep -v "ms/step" "$out/recorded.txt"); then
  echo "outputs identical (but the ms/step line)"
else
  echo "OUTPUTS DIFFER"; diff "$out/plain.txt" "$out/recorded.txt" | head
fi
grep "ms/step" "$out/plain.txt" "$out/recorded.txt"
grep -i "gpuscope" "$out/recorded.err" | head -5
python3 - "$out/pool.gpuscope" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
q = lambda sql: db.execute(sql).fetchall()
print("allocator events by action:", q("SELECT e.name, count(*) FROM allocator_event a JOIN enum_allocator_action e ON e.id = a.action GROUP BY 1"))
print("CUDA device allocations:", q("SELECT count(*), sum(bytes) FROM memory_event WHERE memory_kind = 3 AND op = 1"))
print("data quality:", q("SELECT code, count, message FROM data_quality"))
PY
"$gpuscope" advise "$out/pool.gpuscope" | sed -n 1,12p
