#!/usr/bin/env bash
# The runtime's fused chains and torch.compile's for the same chains and sizes, one after the other on the
# same GPU (docs/benchmarks.md). Run on the GPU machine after scripts/gpu-stage; scripts/gpu-run sets the
# library path for NVRTC. Usage: fused_chains.sh CARRY_DIR
set -u
"$1/bin/fused_chain_bench"
"$1/bin/gemm_epilogue_bench"
python3 tests/bench/torch_compile_chains.py 2>&1 | grep -v Warning
