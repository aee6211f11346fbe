#!/usr/bin/env bash
# gpuscope's GPU benchmarks (run by scripts/gpu-run on the GPU machine; results go into docs/benchmarks.md):
#  overhead      median step time of a launch-bound PyTorch loop, a GPU-bound GPT-2-style training step and a
#                ResNet-50 step: plain, under `gpuscope record` and under torch.profiler, alternating, in one run;
#                kernel counts against torch.profiler's and size on disk against its Chrome JSON
#  stress        dropped records for 1,000,000 launches from 4 threads on 4 streams
#  coexistence   PyTorch NVTX, and a program that starts torch.profiler itself while gpuscope records it
#  writer        the trace writer's rows per second on this machine's CPU
#  fixtures      records the fixture traces of tests/fixtures/ into OUT_DIR/fixtures.tar.gz
#  fused         the runtime's fused chains against torch.compile's (tests/bench/fused_chains.sh)
#  loop          record, advise, apply the plan, record again: samples/runtime_mlp (tests/bench/close_the_loop.sh)
#  advisor       records the advisor cases (samples/pytorch/advisor_cases.py), the memory_pool sample, and
#                runs the GEMM padding and optimizer-step benchmarks; traces into OUT_DIR/advisor.tar.gz
#                (ADVISOR_CASES: the cases to record, default all)
#  cnn           samples/runtime_cnn --compare three times: conv + batch-norm + ReLU kernels against BN folded
#                into the convolution and the ReLU in cuDNN's epilogue
#  checkpoint    samples/runtime_checkpoint three times: 24 MLP blocks plain and checkpointed, memory and time
#  launch_cost   host time per kernel launch (C++) and the launch-bound PyTorch loop: plain, under bare CUPTI
#                (tests/bench/bare_cupti_injection.cpp: CUPTI's own cost, the floor under any collector) and
#                under gpuscope, alternating (LAUNCH_COST_ROUNDS, default 7)
#  capture       what --capture-range costs outside and inside its ranges: the launch-bound PyTorch loop (each
#                step in an NVTX range "step") plain, recorded whole, recorded with --capture-range step
#                (inside), with --capture-range of a name the program never uses (outside) and under bare CUPTI,
#                alternating (CAPTURE_ROUNDS, default 5); the C++ launch loop with every other batch in a
#                cudaProfilerStart/Stop range, plain, recorded whole, with --capture-range cudaProfilerApi and
#                under bare CUPTI (CAPTURE_CXX_ROUNDS, default 3); then what each kind of range let into the trace
# Usage: overhead.sh CARRY_DIR OUT_DIR [SECTION...]   (default: every section)
set -u
carry=$1
out=$2
shift 2
sections=${*:-overhead stress coexistence writer fixtures advisor}
gpuscope="$carry/bin/gpuscope"
bench=samples/pytorch/overhead_bench.py
work=$(mktemp -d)
results="$out/bench-results.txt"
touch "$results"

count() { python3 - "$1" "$2" <<'PY'
import sqlite3, sys
print(sqlite3.connect(sys.argv[1]).execute(sys.argv[2]).fetchone()[0])
PY
}
torch_count() {  # torch_count CHROME_JSON CATEGORY...
  python3 - "$@" <<'PY'
import json, sys
events = json.load(open(sys.argv[1]))["traceEvents"]
print(sum(1 for e in events if e.get("cat") in sys.argv[2:]))
PY
}

overhead() {  # overhead WORKLOAD ROUNDS STEPS
  local workload=$1 rounds=$2 steps=$3 round
  echo "== overhead $workload (median step ms, $rounds rounds of $steps steps)"
  for round in $(seq "$rounds"); do
    timeout 300 python3 $bench "$workload" --steps "$steps" | sed "s/^/plain $round: /" | tee -a "$results"
    timeout 300 "$gpuscope" record -f -o "$work/$workload.gpuscope" -- python3 $bench "$workload" --steps "$steps" 2>&1 |
      grep -E "median_step|busy|kernels" | sed "s/^/gpuscope $round: /" | tee -a "$results"
    timeout 300 python3 $bench "$workload" --steps "$steps" --profiler torch --trace "$work/$workload.torch.json" |
      sed "s/^/torch $round: /" | tee -a "$results"
  done
  echo "completeness $workload: kernels gpuscope=$(count "$work/$workload.gpuscope" "SELECT count(*) FROM kernel")" \
    "torch.profiler=$(torch_count "$work/$workload.torch.json" kernel);" \
    "api calls gpuscope=$(count "$work/$workload.gpuscope" "SELECT count(*) FROM api_call")" \
    "torch.profiler=$(torch_count "$work/$workload.torch.json" cuda_runtime cuda_driver)" | tee -a "$results"
  echo "size $workload: gpuscope=$(stat -c %s "$work/$workload.gpuscope") bytes" \
    "torch.profiler=$(stat -c %s "$work/$workload.torch.json") bytes" | tee -a "$results"
}

section_overhead() {  # OVERHEAD_WORKLOADS: a subset of "launch gpt2 resnet" (each fits one 10-minute call)
  local workloads=" ${OVERHEAD_WORKLOADS:-launch gpt2 resnet} "
  [[ $workloads == *" launch "* ]] && overhead launch 5 50
  [[ $workloads == *" gpt2 "* ]] && overhead gpt2 3 20
  [[ $workloads == *" resnet "* ]] && overhead resnet 3 20
  return 0
}

section_stress() {
  echo "== 1,000,000 launches from 4 threads on 4 streams"
  local start
  start=$(date +%s.%N)
  timeout 300 "$gpuscope" record -f -o "$work/stress.gpuscope" -- "$carry/bin/sample_stress_launch" 2>&1 | tee -a "$results"
  echo "stress wall $(python3 -c "import sys; print(round(float(sys.argv[2]) - float(sys.argv[1]), 2))" "$start" "$(date +%s.%N)") s" | tee -a "$results"
  echo "stress kernels=$(count "$work/stress.gpuscope" "SELECT count(*) FROM kernel") dropped=$(count "$work/stress.gpuscope" "SELECT coalesce(sum(count),0) FROM data_quality WHERE code IN ('dropped_records','buffers_refused')")" | tee -a "$results"
}

section_coexistence() {
  echo "== PyTorch NVTX, and torch.profiler inside a recorded program"
  timeout 120 "$gpuscope" record -q -f -o "$work/nvtx.gpuscope" -- python3 -c "import torch; torch.cuda.nvtx.range_push('outer'); torch.cuda.nvtx.mark('here'); x = torch.ones(10, device='cuda') * 2; torch.cuda.synchronize(); torch.cuda.nvtx.range_pop()"
  echo "torch nvtx: ranges=$(count "$work/nvtx.gpuscope" "SELECT count(*) FROM nvtx WHERE kind = 1") marks=$(count "$work/nvtx.gpuscope" "SELECT count(*) FROM nvtx WHERE kind = 2") kernels=$(count "$work/nvtx.gpuscope" "SELECT count(*) FROM kernel")" | tee -a "$results"
  python3 samples/pytorch/torch_profiler_inside.py | sed "s/^/coexistence plain: /" | tee -a "$results"
  GPUSCOPE_DEBUG=1 timeout 300 "$gpuscope" record -f -o "$work/coexist.gpuscope" -- python3 samples/pytorch/torch_profiler_inside.py 2>&1 |
    grep -vE "^gpuscope\[[0-9]+\]: (flush|buffer)" | tail -20 | sed "s/^/coexistence recorded: /" | tee -a "$results"
  echo "coexistence: exit=${PIPESTATUS[0]}" | tee -a "$results"
  for range in before inside after; do
    echo "coexistence kernels in $range: $(count "$work/coexist.gpuscope" "SELECT count(*) FROM kernel k JOIN nvtx n ON k.start_ns >= n.start_ns AND k.end_ns <= n.end_ns JOIN string s ON s.id = n.name WHERE s.value = '$range'")" | tee -a "$results"
  done
  sqlite3 "$work/coexist.gpuscope" "SELECT severity, code, message FROM data_quality" 2>/dev/null | tee -a "$results" ||
    python3 -c "import sqlite3,sys; [print(*r, sep='|') for r in sqlite3.connect(sys.argv[1]).execute('SELECT severity, code, message FROM data_quality')]" "$work/coexist.gpuscope" | tee -a "$results"
}

section_writer() {
  echo "== trace writer on this CPU"
  "$carry/bin/trace_writer_bench" --benchmark_repetitions=5 --benchmark_report_aggregates_only=true 2>&1 |
    grep -E 'Run on|_median' | tee -a "$results"
}

record_fixture() {  # record_fixture NAME COMMAND...
  local name=$1
  shift
  timeout 300 "$gpuscope" record -q -f -o "$work/fixtures/$name.gpuscope" -- "$@" >"$work/fixtures/$name.log" 2>&1
  echo "fixture $name: exit $? $(tail -3 "$work/fixtures/$name.log" | tr '\n' ' ')" | tee -a "$results"
}

section_fixtures() {
  echo "== fixtures"
  mkdir -p "$work/fixtures"
  local s
  for s in elementwise_chain launch_bound pageable_sync memory_leak multi_stream graph_replay nvtx_training; do
    record_fixture "$s" "$carry/bin/sample_$s"
  done
  record_fixture pytorch_launch_loop python3 $bench launch --steps 3 --warmup 1
  record_fixture pytorch_gpt2_step python3 $bench gpt2 --steps 4 --warmup 1 --batch 8
  record_fixture pytorch_resnet_step python3 $bench resnet --steps 4 --warmup 1 --batch 32
  record_fixture torch_kernels python3 samples/kernel_zoo/torch_kernels.py
  record_fixture cupy_kernels python3 samples/kernel_zoo/cupy_kernels.py
  XLA_PYTHON_CLIENT_PREALLOCATE=false record_fixture jax_kernels python3 samples/kernel_zoo/jax_kernels.py
  ls -la "$work/fixtures" | tee -a "$results"
  tar -C "$work" -czf "$out/fixtures.tar.gz" fixtures
}

section_fused() {
  echo "== fused chains"
  timeout 300 bash tests/bench/fused_chains.sh "$carry" | tee -a "$results"
}

section_loop() {  # LOOP_SAMPLES: the runtime samples to close the loop on (default runtime_mlp)
  local sample
  for sample in ${LOOP_SAMPLES:-runtime_mlp}; do
    echo "== close the loop on $sample"
    timeout 300 bash tests/bench/close_the_loop.sh "$carry" "$out" "$sample" 2>&1 | tee -a "$results"
  done
}

section_advisor() {  # the advisor's cases, recorded and run plain, and the GEMM padding benchmark
  echo "== advisor cases"
  mkdir -p "$work/advisor"
  local c
  for c in ${ADVISOR_CASES:-naive tuned memory_activations memory_optimizer}; do
    timeout 300 python3 samples/pytorch/advisor_cases.py $c | sed "s/^/advisor plain $c: /" | tee -a "$results"
    timeout 300 "$gpuscope" record -q -f -o "$work/advisor/advisor_$c.gpuscope" -- \
      python3 samples/pytorch/advisor_cases.py $c 2>&1 | tail -3 | sed "s/^/advisor recorded $c: /" | tee -a "$results"
  done
  timeout 120 "$gpuscope" record -q -f -o "$work/advisor/memory_pool.gpuscope" -- "$carry/bin/sample_memory_pool" 2>&1 |
    sed "s/^/memory_pool: /" | tee -a "$results"
  timeout 300 python3 tests/bench/gemm_alignment.py | sed "s/^/gemm_alignment: /" | tee -a "$results"
  timeout 300 python3 tests/bench/optimizer_step.py | sed "s/^/optimizer_step: /" | tee -a "$results"
  ls -la "$work/advisor" | tee -a "$results"
  tar -C "$work" -czf "$out/advisor.tar.gz" advisor
}

three_runs() {  # three_runs LABEL COMMAND...: the command three times, its lines prefixed "LABEL N: "
  local label=$1 run
  shift
  for run in 1 2 3; do
    timeout 150 "$@" 2>&1 | sed "s/^/$label $run: /"
  done | tee -a "$results"
}

section_cnn() {
  echo "== CNN inference (samples/runtime_cnn --compare: 8 layers, batch 32, 64 channels, 56 x 56, fp32)"
  three_runs cnn "$carry/bin/sample_runtime_cnn" --compare 8 32 64 56 50
}

section_checkpoint() {
  echo "== checkpointing (samples/runtime_checkpoint: 24 blocks, 8,192 tokens, 1,024 wide, 20 steps)"
  three_runs checkpoint "$carry/bin/sample_runtime_checkpoint" --compare 24 8192 1024 20
}

section_launch_cost() {
  echo "== launch cost (median step ms of the PyTorch launch loop; host us per launch in C++)"
  local bare="$carry/lib/libbare_cupti_injection.so" round kinds trace
  local bare_kinds=${LAUNCH_COST_BARE:-kernel kernel,runtime kernel,runtime-launch kernel,callback-launch}
  # gpuscope's configurations: the --trace list, then +VAR=VALUE settings of its environment
  local configs=${LAUNCH_COST_GPUSCOPE:-cuda cuda,api cuda,api,nvtx,memory} config settings
  for round in $(seq "${LAUNCH_COST_ROUNDS:-7}"); do
    timeout 300 python3 $bench launch --steps 50 | sed "s/^/py plain $round: /"
    for kinds in $bare_kinds; do
      CUDA_INJECTION64_PATH=$bare BARE_CUPTI_KINDS=$kinds timeout 300 python3 $bench launch --steps 50 2>&1 |
        sed "s/^/py cupti:$kinds $round: /"
    done
    for config in $configs; do
      trace=${config%%+*}
      settings=$(echo "$config" | tr '+' ' ' | cut -s -d' ' -f2-)
      env $settings timeout 300 "$gpuscope" record -q -f --trace "$trace" -o "$work/lc.gpuscope" -- \
        python3 $bench launch --steps 50 2>&1 | grep -E "median_step" | sed "s/^/py gpuscope:$config $round: /"
    done
  done | tee -a "$results"
  for round in $(seq "${LAUNCH_COST_CXX_ROUNDS:-3}"); do
    "$carry/bin/launch_cost" | sed "s/^/c++ plain $round: /"
    for kinds in $bare_kinds; do
      CUDA_INJECTION64_PATH=$bare BARE_CUPTI_KINDS=$kinds "$carry/bin/launch_cost" 2>&1 | sed "s/^/c++ cupti:$kinds $round: /"
    done
    "$gpuscope" record -q -f -o "$work/lc.gpuscope" -- "$carry/bin/launch_cost" 2>&1 | sed "s/^/c++ gpuscope $round: /"
  done | tee -a "$results"
}

section_capture() {
  echo "== capture ranges (median step ms of the PyTorch launch loop: 1000 x (mul, add) a step, 50 steps)"
  local bare="$carry/lib/libbare_cupti_injection.so" round run
  local bare_kinds=${CAPTURE_BARE:-kernel,memcpy,memset,overhead,memory,runtime}
  # CAPTURE_CPUS (a taskset list): every run on those cores, so that the programs' host work does not contend
  local pin=(); [ -n "${CAPTURE_CPUS:-}" ] && pin=(taskset -c "$CAPTURE_CPUS")
  run() { timeout 300 "${pin[@]}" "$@" python3 $bench launch --steps 50 2>&1 | grep -E "median_step"; }
  for round in $(seq "${CAPTURE_ROUNDS:-5}"); do
    run env | sed "s/^/plain $round: /"
    run "$gpuscope" record -q -f -o "$work/whole.gpuscope" -- | sed "s/^/record $round: /"
    run "$gpuscope" record -q -f --capture-range step -o "$work/inside.gpuscope" -- | sed "s/^/inside $round: /"
    run "$gpuscope" record -q -f --capture-range never-pushed -o "$work/outside.gpuscope" -- |
      sed "s/^/outside $round: /"
    run env CUDA_INJECTION64_PATH=$bare BARE_CUPTI_KINDS=$bare_kinds | sed "s/^/cupti:$bare_kinds $round: /"
  done | tee -a "$results"
  # The C++ launch loop (host us per launch), every other batch between cudaProfilerStart and Stop: plain,
  # recorded whole, recorded with --capture-range cudaProfilerApi (inside and outside in one process), bare
  # CUPTI with the records gpuscope keeps of this loop (kernels, and launches among the runtime calls).
  for round in $(seq "${CAPTURE_CXX_ROUNDS:-3}"); do
    LAUNCH_COST_RANGES=1 "${pin[@]}" "$carry/bin/launch_cost" | sed "s/^/c++ plain $round: /"
    "$gpuscope" record -q -f -o "$work/lc.gpuscope" -- "${pin[@]}" "$carry/bin/launch_cost" 2>&1 |
      sed "s/^/c++ record $round: /"
    LAUNCH_COST_RANGES=1 "$gpuscope" record -q -f --capture-range cudaProfilerApi -o "$work/lc.gpuscope" -- \
      "${pin[@]}" "$carry/bin/launch_cost" 2>&1 | sed "s/^/c++ ranges $round: /"
    CUDA_INJECTION64_PATH=$bare BARE_CUPTI_KINDS=kernel,memcpy,memset,overhead,memory,runtime-launch \
      "${pin[@]}" "$carry/bin/launch_cost" 2>&1 | grep launch_us | sed "s/^/c++ cupti $round: /"
  done | tee -a "$results"
  echo "c++ ranges: $(count "$work/lc.gpuscope" "SELECT count(*) FROM kernel") kernels recorded" | tee -a "$results"
  {
    echo "kernels recorded whole: $(count "$work/whole.gpuscope" "SELECT count(*) FROM kernel")," \
      "inside 'step': $(count "$work/inside.gpuscope" "SELECT count(*) FROM kernel")"
    # cudaProfilerStart/Stop around 300 adds, 100 multiplications before and after: only the adds recorded.
    "$gpuscope" record -q -f --capture-range cudaProfilerApi -o "$work/api.gpuscope" -- python3 -c "
import torch
x = torch.ones(1024, device='cuda')
def muls():
    for _ in range(100): x.mul_(1.0)
    torch.cuda.synchronize()
muls()
torch.cuda.profiler.start()
for _ in range(300): x.add_(1.0)
torch.cuda.synchronize()
torch.cuda.profiler.stop()
muls()"
    local muls="SELECT count(*) FROM kernel_view WHERE name_text LIKE '%mul%'"
    echo "cudaProfilerApi: $(count "$work/api.gpuscope" "SELECT count(*) FROM kernel") kernels," \
      "$(count "$work/api.gpuscope" "$muls") of them multiplications"
    "$gpuscope" info "$work/api.gpuscope" | grep -A4 "data quality"
  } 2>&1 | tee -a "$results"
}

for section in $sections; do
  "section_$section"
done
