"""How much a per-parameter optimizer step costs against the multi-tensor (foreach) and fused ones on this
GPU: the basis of gpuscope's unfused_optimizer estimate (docs/benchmarks.md). Times Adam's step over the
parameters of samples/pytorch/advisor_cases.py's GPT model (vocabulary 10,007) and of a 12-layer, 1,024-wide
one, and prints one JSON line per model and implementation.
"""
import json
import sys

import torch

sys.path.insert(0, "samples/pytorch")
import advisor_cases  # noqa: E402


def step_ms(params, **options):
    for p in params:
        p.grad = torch.randn_like(p)
    optimizer = torch.optim.Adam(params, lr=1e-4, **options)
    for _ in range(3):
        optimizer.step()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    torch.cuda.synchronize()
    start.record()
    for _ in range(20):
        optimizer.step()
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end) / 20


def main():
    small = list(advisor_cases.Gpt(10007, fused_attention=False).cuda().parameters())
    big = [torch.nn.Parameter(torch.randn(1024, 1024, device="cuda")) for _ in range(12 * 6)]
    big += [torch.nn.Parameter(torch.randn(1024, device="cuda")) for _ in range(12 * 8)]
    for name, params in (("advisor_gpt", small), ("12x1024", big)):
        per_param = step_ms(params, foreach=False)
        foreach = step_ms(params, foreach=True)
        fused = step_ms(params, fused=True)
        print(json.dumps({"model": name, "tensors": len(params), "parameters": sum(p.numel() for p in params),
                          "per_param_ms": round(per_param, 4), "foreach_ms": round(foreach, 4),
                          "fused_ms": round(fused, 4), "per_param_over_foreach": round(per_param / foreach, 2),
                          "per_param_over_fused": round(per_param / fused, 2)}))


if __name__ == "__main__":
    main()
