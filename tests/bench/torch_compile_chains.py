"""The chains of fused_chain_bench under torch.compile, same sizes and the same bandwidth formula, for the
side-by-side comparison of issue #6 (run both with tests/bench/fused_chains.sh). Prints one line per chain
and type."""
import torch
import torch.nn.functional as F

N = 1 << 26
CHAINS = {
    "x * w + b": (lambda x, w, b: x * w + b, 3),
    "gelu(x)": (lambda x: F.gelu(x), 1),
    "gelu(x * w + b) * sigmoid(w)": (lambda x, w, b: F.gelu(x * w + b) * torch.sigmoid(w), 3),
}


def median_ms(fn, runs=20, back_to_back=10):
    """Median over runs of one call's time, each run timing calls back to back as fused_chain_bench does."""
    for _ in range(3):
        fn()
    times = []
    for _ in range(runs):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(back_to_back):
            fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) / back_to_back)
    return sorted(times)[len(times) // 2]


for name, (fn, inputs) in CHAINS.items():
    for dtype, label in ((torch.float32, "fp32"), (torch.bfloat16, "bf16"), (torch.float16, "fp16")):
        args = [torch.randn(N, device="cuda", dtype=dtype) for _ in range(inputs)]
        compiled = torch.compile(fn)
        ms = median_ms(lambda: compiled(*args))
        gbps = N * args[0].element_size() * (inputs + 1) / (ms * 1e6)
        print(f'torch.compile "{name}" {label}: {N} elements, {ms:.4f} ms, {gbps:.1f} GB/s')
