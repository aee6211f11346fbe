#!/usr/bin/env bash
# On a machine with 2 GPUs, over .eval-carry/: NCCL's bus bandwidth as bench/nccl/busbw_sweep.py measures it
# itself, plain and recorded by gpuscope, with peer-to-peer on and off (NCCL_P2P_DISABLE=1), and the recordings.
# Writes into $OUT/nccl/: topology, the sweeps' JSON lines, NCCL's INFO log of the recorded runs, the traces.
set -uo pipefail
cd "$(dirname "$0")/../.."
carry=$PWD/.eval-carry
source scripts/gpu-env
out=${OUT:-$PWD/out}/nccl
mkdir -p "$out"
nvidia-smi topo -m >"$out/topology.txt" 2>&1
nvidia-smi nvlink -s -i 0 >>"$out/topology.txt" 2>&1
python3 -c "import torch; print('torch', torch.__version__, 'nccl', torch.cuda.nccl.version())" >>"$out/topology.txt"
sweep="torchrun --standalone --nproc_per_node=2 bench/nccl/busbw_sweep.py ${SIZES:+--sizes-mib $SIZES}"
for p2p in on off; do
  env=()
  [ "$p2p" = off ] && env=(NCCL_P2P_DISABLE=1)
  env "${env[@]}" $sweep >"$out/sweep-$p2p-plain.jsonl" 2>"$out/sweep-$p2p-plain.err"
  env "${env[@]}" NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,ENV,TUNING gpuscope record -o "$out/sweep-$p2p.gpuscope" -- \
    $sweep >"$out/sweep-$p2p-recorded.log" 2>"$out/sweep-$p2p-recorded.err"
  echo "p2p $p2p: record exit $?"
done
# One file to bring back: a device call returns a handful of files at most.
tar czf "$out.tar.gz" -C "$(dirname "$out")" nccl && rm -rf "$out"
