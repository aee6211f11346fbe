#!/usr/bin/env bash
# record --torch → advise --plan → apply --record → diff on the GPU machine, for the naive training loop of
# samples/pytorch/advisor_cases.py and the GPT-2 (transformers) and ResNet-50 (torchvision) training steps of
# samples/pytorch/overhead_bench.py; the advisor's prediction is in the plan, the measurement in the diff.
# Each case's traces before and after are kept, xz-compressed, so the advisor's predictions can be checked
# against them without a GPU; plans and advice go into loop-plans.tar.
# Usage: torch_loop.sh CARRY_DIR OUT_DIR [CASE...] (cases: naive gpt2 resnet; default all)
set -u
carry=$1 out=$2
shift 2
gpuscope=$carry/bin/gpuscope
work=$(mktemp -d)
loop() {
  local name=$1
  shift
  echo "== $name: $*"
  timeout 200 "$gpuscope" record --torch -q -f -o "$work/$name.gpuscope" -- python3 "$@" 2>&1 | tail -1
  "$gpuscope" advise "$work/$name.gpuscope" --plan "$work/${name}_plan.json" -f 2>&1 | sed -n 2,7p
  "$gpuscope" advise "$work/$name.gpuscope" --format json >"$work/${name}_advice.json"
  python3 -c "import json,sys; p=json.load(open(sys.argv[1])); print('fixes', [(f['id'], f.get('setting', f.get('segments', ''))) for f in p['fixes']]); print('measured', p['measured'], 'predicted', p['predicted'])" "$work/${name}_plan.json"
  timeout 280 "$gpuscope" apply --plan "$work/${name}_plan.json" --record -q -f -o "$work/${name}_applied.gpuscope" -- python3 "$@" 2>&1 | grep -E "gpuscope apply|median_step|step" | tail -14
  "$gpuscope" diff "$work/$name.gpuscope" "$work/${name}_applied.gpuscope" 2>&1 | sed -n 1,4p
  "$gpuscope" stats "$work/${name}_applied.gpuscope" --report memory 2>&1 | head -5
}
cases=("$@")
[ ${#cases[@]} -eq 0 ] && cases=(naive gpt2 resnet)
for c in "${cases[@]}"; do
  case $c in
    naive) loop naive samples/pytorch/advisor_cases.py naive ;;
    gpt2) loop gpt2 samples/pytorch/overhead_bench.py gpt2 --batch 8 --steps 10 --warmup 3 ;;
    resnet) loop resnet samples/pytorch/overhead_bench.py resnet --batch 32 --steps 10 --warmup 3 ;;
  esac
done
(cd "$work" && tar cf "$out/loop-plans.tar" ./*.json)
for t in "$work"/*.gpuscope; do
  xz -T8 -6 -c "$t" >"$out/$(basename "$t").xz"
  ls -la "$out/$(basename "$t").xz"
done
rm -rf "$work"
