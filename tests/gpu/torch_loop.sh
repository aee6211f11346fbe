#!/usr/bin/env bash
# record --torch → advise --plan → apply --record → diff on the GPU machine, for the GPT-2 (transformers) and
# ResNet-50 (torchvision) training steps of samples/pytorch/overhead_bench.py; the advisor's prediction is in
# the plan, the measurement in the diff. Usage: torch_loop.sh CARRY_DIR OUT_DIR [WORKLOAD ARGS...]
set -u
carry=$1 out=$2
shift 2
gpuscope=$carry/bin/gpuscope
loop() {
  local name=$1
  shift
  echo "== $name: $*"
  timeout 200 "$gpuscope" record --torch -q -f -o "$out/$name.gpuscope" -- python3 samples/pytorch/overhead_bench.py "$@" 2>&1 | tail -1
  "$gpuscope" advise "$out/$name.gpuscope" --plan "$out/${name}_plan.json" -f 2>&1 | sed -n 2,7p
  python3 -c "import json,sys; p=json.load(open(sys.argv[1])); print('fixes', [(f['id'], f.get('setting', f.get('segments', ''))) for f in p['fixes']]); print('measured', p['measured'], 'predicted', p['predicted'])" "$out/${name}_plan.json"
  timeout 280 "$gpuscope" apply --plan "$out/${name}_plan.json" --record -q -f -o "$out/${name}_applied.gpuscope" -- python3 samples/pytorch/overhead_bench.py "$@" 2>&1 | grep -E "gpuscope apply|median_step" | tail -12
  "$gpuscope" diff "$out/$name.gpuscope" "$out/${name}_applied.gpuscope" 2>&1 | sed -n 1,4p
  rm -f "$out/$name.gpuscope" "$out/${name}_applied.gpuscope"
}
loop gpt2 gpt2 --batch 8 --steps 10 --warmup 3
loop resnet resnet --batch 32 --steps 10 --warmup 3
