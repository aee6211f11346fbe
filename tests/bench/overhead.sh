#!/usr/bin/env bash
# gpuscope's GPU benchmarks (run by scripts/gpu-run on the GPU machine; results go into docs/benchmarks.md):
#  1. overhead: median step time of a launch-bound PyTorch loop and a GPT-2-style training step, plain,
#     under `gpuscope record` and under torch.profiler (CUDA activities), in one run;
#  2. completeness: gpuscope's kernel count against torch.profiler's for the same work, and dropped records
#     for 1,000,000 launches from 4 threads on 4 streams;
#  3. size on disk per recorded event against torch.profiler's Chrome JSON;
#  4. the trace writer's rows per second on this machine's CPU;
# and records the fixture traces of tests/fixtures/. Usage: overhead.sh CARRY_DIR OUT_DIR
set -u
carry=$1
out=$2
gpuscope="$carry/bin/gpuscope"
bench=samples/pytorch/overhead_bench.py
work=$(mktemp -d)
results="$out/bench-results.txt"
: >"$results"

count() { python3 - "$1" "$2" <<'PY'
import sqlite3, sys
print(sqlite3.connect(sys.argv[1]).execute(sys.argv[2]).fetchone()[0])
PY
}

echo "== overhead (median step ms)"
for workload in launch gpt2; do
  for round in 1 2 3; do
    timeout 300 python3 $bench $workload --steps 50 | sed "s/^/plain $round: /" | tee -a "$results"
    timeout 300 "$gpuscope" record -q -f -o "$work/$workload.gpuscope" -- python3 $bench $workload --steps 50 | sed "s/^/gpuscope $round: /" | tee -a "$results"
    timeout 300 python3 $bench $workload --steps 50 --profiler torch --trace "$work/$workload.torch.json" | sed "s/^/torch $round: /" | tee -a "$results"
  done
  k_ours=$(count "$work/$workload.gpuscope" "SELECT count(*) FROM kernel")
  a_ours=$(count "$work/$workload.gpuscope" "SELECT count(*) FROM api_call")
  k_torch=$(python3 -c "import json,sys; e=json.load(open(sys.argv[1]))['traceEvents']; print(sum(1 for x in e if x.get('cat')=='kernel'))" "$work/$workload.torch.json")
  a_torch=$(python3 -c "import json,sys; e=json.load(open(sys.argv[1]))['traceEvents']; print(sum(1 for x in e if x.get('cat') in ('cuda_runtime','cuda_driver')))" "$work/$workload.torch.json")
  s_ours=$(stat -c %s "$work/$workload.gpuscope")
  s_torch=$(stat -c %s "$work/$workload.torch.json")
  echo "completeness $workload: kernels gpuscope=$k_ours torch.profiler=$k_torch; api calls gpuscope=$a_ours torch.profiler=$a_torch" | tee -a "$results"
  echo "size $workload: gpuscope=$s_ours bytes torch.profiler=$s_torch bytes" | tee -a "$results"
  "$gpuscope" info "$work/$workload.gpuscope" | tail -15 >>"$results"
done

echo "== 1,000,000 launches from 4 threads on 4 streams"
start=$(date +%s.%N)
timeout 300 "$gpuscope" record -f -o "$work/stress.gpuscope" -- "$carry/bin/sample_stress_launch" 2>&1 | tee -a "$results"
echo "stress wall $(python3 -c "import sys; print(round(float(sys.argv[2]) - float(sys.argv[1]), 2))" "$start" "$(date +%s.%N)") s" | tee -a "$results"
echo "stress kernels=$(count "$work/stress.gpuscope" "SELECT count(*) FROM kernel") dropped=$(count "$work/stress.gpuscope" "SELECT coalesce(sum(count),0) FROM data_quality WHERE code IN ('dropped_records','buffers_refused')")" | tee -a "$results"

echo "== PyTorch NVTX, and torch.profiler inside a recorded program"
timeout 120 "$gpuscope" record -q -f -o "$work/nvtx.gpuscope" -- python3 -c "import torch; torch.cuda.nvtx.range_push('outer'); torch.cuda.nvtx.mark('here'); x = torch.ones(10, device='cuda') * 2; torch.cuda.synchronize(); torch.cuda.nvtx.range_pop()"
echo "torch nvtx: ranges=$(count "$work/nvtx.gpuscope" "SELECT count(*) FROM nvtx WHERE kind = 1") marks=$(count "$work/nvtx.gpuscope" "SELECT count(*) FROM nvtx WHERE kind = 2") kernels=$(count "$work/nvtx.gpuscope" "SELECT count(*) FROM kernel")" | tee -a "$results"
timeout 300 "$gpuscope" record -f -o "$work/coexist.gpuscope" -- python3 $bench launch --steps 2 --warmup 1 --profiler torch --trace "$work/coexist.json" 2>&1 | grep -vE "Warn|_warn" | tee -a "$results"
echo "coexistence: exit=${PIPESTATUS[0]} gpuscope kernels=$(count "$work/coexist.gpuscope" "SELECT count(*) FROM kernel") torch.profiler kernels=$(python3 -c "import json,sys; e=json.load(open(sys.argv[1]))['traceEvents']; print(sum(1 for x in e if x.get('cat')=='kernel'))" "$work/coexist.json")" | tee -a "$results"

echo "== trace writer on this CPU"
"$carry/bin/trace_writer_bench" --benchmark_repetitions=3 --benchmark_report_aggregates_only=true 2>&1 | grep -E 'Run on|_median' | tee -a "$results"

echo "== fixtures"
mkdir -p "$work/fixtures"
for s in elementwise_chain launch_bound pageable_sync memory_leak multi_stream graph_replay nvtx_training; do
  timeout 120 "$gpuscope" record -q -f -o "$work/fixtures/$s.gpuscope" -- "$carry/bin/sample_$s" >/dev/null
done
timeout 300 "$gpuscope" record -q -f -o "$work/fixtures/pytorch_launch_loop.gpuscope" -- python3 $bench launch --steps 3 --warmup 1 >/dev/null
timeout 300 "$gpuscope" record -q -f -o "$work/fixtures/pytorch_gpt2_step.gpuscope" -- python3 $bench gpt2 --steps 2 --warmup 1 >/dev/null
ls -la "$work/fixtures" | tee -a "$results"
tar -C "$work" -czf "$out/fixtures.tar.gz" fixtures
[ "$results" -ef "$out/bench-results.txt" ] || cp "$results" "$out/"
