#!/usr/bin/env bash
# The PyTorch bridge end to end on the GPU machine (after scripts/gpu-stage): samples/pytorch/bridge_train.py
# plain and under `gpuscope record --torch` (same output and exit code), what the trace holds (module and
# optimizer ranges, allocator events, tensor roles), a user's own memory snapshot through `gpuscope import`,
# and the bridge's overhead on the GPT-2 step of overhead_bench.py. Usage: torch_bridge.sh CARRY_DIR OUT_DIR
set -u
carry=$1 out=$2
gpuscope=$carry/bin/gpuscope
script=samples/pytorch/bridge_train.py
echo "== bridge_train: plain, then recorded with --torch"
python3 $script > "$out/plain.txt" 2> "$out/plain.err"; echo "plain exit $?"
"$gpuscope" record --torch -f -o "$out/bridge.gpuscope" -- python3 $script > "$out/recorded.txt" 2> "$out/recorded.err"
echo "recorded exit $?"
if cmp -s "$out/plain.txt" "$out/recorded.txt"; then echo "outputs identical"; else echo "OUTPUTS DIFFER"; diff "$out/plain.txt" "$out/recorded.txt" | head; fi
grep -i "gpuscope" "$out/recorded.err" | head -20
"$gpuscope" info "$out/bridge.gpuscope"
python3 - "$out/bridge.gpuscope" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
q = lambda sql: db.execute(sql).fetchall()
print("allocator events by action:", q("SELECT e.name, count(*) FROM allocator_event a JOIN enum_allocator_action e ON e.id = a.action GROUP BY 1"))
print("tensor roles:", q("SELECT e.name, count(*), sum(bytes) FROM tensor_role r JOIN enum_tensor_role e ON e.id = r.role GROUP BY 1"))
print("role names:", q("SELECT s.value FROM tensor_role r JOIN string s ON s.id = r.name LIMIT 5"))
names = q("SELECT s.value, count(*) FROM nvtx n JOIN string s ON s.id = n.name GROUP BY 1 ORDER BY 2 DESC, 1")
print("nvtx ranges:", len(names), "distinct")
for n, c in names[:40]:
    print(f"  {c:5d} {n}")
print("data quality:", q("SELECT code, count, message FROM data_quality"))
print("allocator time span (s):", q("SELECT (max(timestamp_ns) - min(timestamp_ns)) / 1e9 FROM allocator_event"),
      "kernel span (s):", q("SELECT (max(end_ns) - min(start_ns)) / 1e9 FROM kernel"))
print("first alloc vs first kernel (ms):", q("SELECT ((SELECT min(timestamp_ns) FROM allocator_event WHERE action = 1) - (SELECT min(start_ns) FROM kernel)) / 1e6"))
PY
echo "== a user's own snapshot through gpuscope import"
python3 $script --steps 3 --snapshot "$out/snapshot.json" > /dev/null 2>&1; echo "snapshot exit $? size $(stat -c %s "$out/snapshot.json")"
"$gpuscope" import "$out/snapshot.json" -f -o "$out/imported.gpuscope"; echo "import exit $?"
"$gpuscope" info "$out/imported.gpuscope"
# Alternating rounds of one Python program plain, recorded, and recorded with the bridge; its last line each.
three_ways() {
  for i in 1 2; do
    echo "plain $(python3 "$@" 2>/dev/null | tail -1)"
    echo "record $("$gpuscope" record -q -f -o "$out/o1.gpuscope" -- python3 "$@" 2>/dev/null | tail -1)"
    echo "record --torch $("$gpuscope" record --torch -q -f -o "$out/o1.gpuscope" -- python3 "$@" 2>/dev/null | tail -1)"
  done
}
echo "== host cost per module (tests/bench/torch_bridge_overhead.py)"
three_ways tests/bench/torch_bridge_overhead.py
echo "== overhead of the bridge on the GPT-2 step (overhead_bench.py gpt2 --batch 8, 20 steps)"
three_ways samples/pytorch/overhead_bench.py gpt2 --batch 8
rm -f "$out/o1.gpuscope"
ls -la "$out"
