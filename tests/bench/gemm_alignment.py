"""How much a GEMM dimension that is not a multiple of 8 costs on this GPU: the basis of gpuscope's padding
estimate (advisor rule gemm_alignment, docs/benchmarks.md). Times C = A @ B forward and the two backward GEMMs
(dA = dC @ B^T, dB = A^T @ dC) for N unaligned and N padded to a multiple of 64, in bf16 and in fp32 with TF32,
and prints one JSON line per shape with the slowdown of the unaligned one. Then times the same three GEMMs
in fp32 without TF32 (PyTorch's default), fp32 with TF32 and bf16, the basis of the fp32_gemm estimate.
With --small, the same three precisions for the GEMMs of a transformer layer at few tokens (a ViT-S/16 request:
197 tokens, hidden 384; a decoder's next token: 1-8 rows), each replayed 50 in a CUDA graph so that its time is the
kernel's own and not the host's launch: the estimate's floor for short GEMMs (a ViT-S request's fp32 GEMMs took
14.4 us and 3.4-3.6 us under bf16 autocast, 4x where large ones gain 8-14x; H200, 2026-12-03).
"""
import json
import sys

import torch


def gemm_ms(m, k, n, dtype, reps=20):
    a = torch.randn(m, k, device="cuda", dtype=dtype)
    b = torch.randn(k, n, device="cuda", dtype=dtype)
    dc = torch.randn(m, n, device="cuda", dtype=dtype)

    def once():
        a @ b
        dc @ b.T
        a.T @ dc
    for _ in range(3):
        once()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(reps):
        once()
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end) / reps


def precision():
    for m, k, n in [(4096, 512, 2048), (4096, 2048, 512), (8192, 4096, 4096)]:
        torch.backends.cuda.matmul.allow_tf32 = False
        fp32 = gemm_ms(m, k, n, torch.float32)
        torch.backends.cuda.matmul.allow_tf32 = True
        tf32 = gemm_ms(m, k, n, torch.float32)
        bf16 = gemm_ms(m, k, n, torch.bfloat16)
        print(json.dumps({"m": m, "k": k, "n": n, "fp32_ms": round(fp32, 4), "tf32_ms": round(tf32, 4),
                          "bf16_ms": round(bf16, 4), "fp32_over_tf32": round(fp32 / tf32, 3),
                          "fp32_over_bf16": round(fp32 / bf16, 3)}))


def graphed_gemm_us(m, k, n, dtype, count=50, reps=20):
    """One GEMM's time in microseconds, from `count` of them replayed in one CUDA graph, `reps` times."""
    a = torch.randn(m, k, device="cuda", dtype=dtype)
    b = torch.randn(k, n, device="cuda", dtype=dtype)
    out = torch.empty(m, n, device="cuda", dtype=dtype)
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):  # cuBLAS's workspace and heuristics settle outside the capture
        for _ in range(3):
            torch.matmul(a, b, out=out)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for _ in range(count):
            torch.matmul(a, b, out=out)
    graph.replay()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(reps):
        graph.replay()
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end) * 1000 / (reps * count)


def small():
    shapes = [(m, k, n) for m in (1, 8, 64, 197, 512) for k, n in ((384, 384), (384, 1536), (1536, 384),
                                                                    (768, 2304), (768, 3072), (3072, 768))]
    for m, k, n in shapes:
        torch.backends.cuda.matmul.allow_tf32 = False
        fp32 = graphed_gemm_us(m, k, n, torch.float32)
        torch.backends.cuda.matmul.allow_tf32 = True
        tf32 = graphed_gemm_us(m, k, n, torch.float32)
        bf16 = graphed_gemm_us(m, k, n, torch.bfloat16)
        print(json.dumps({"m": m, "k": k, "n": n, "gflop": round(2 * m * k * n / 1e9, 4), "fp32_us": round(fp32, 3),
                          "tf32_us": round(tf32, 3), "bf16_us": round(bf16, 3),
                          "fp32_over_tf32": round(fp32 / tf32, 3), "fp32_over_bf16": round(fp32 / bf16, 3)}))
    torch.backends.cuda.matmul.allow_tf32 = False


def main():
    if "--small" in sys.argv[1:]:
        small()
        return
    torch.backends.cuda.matmul.allow_tf32 = True
    for m, k, n in [(8192, 1024, 50257), (4096, 512, 10007), (8192, 4096, 4095), (4096, 1000, 4096)]:
        for dtype in (torch.bfloat16, torch.float32):
            padded = (n + 63) // 64 * 64
            k_padded = (k + 63) // 64 * 64
            unaligned = gemm_ms(m, k, n, dtype)
            aligned = gemm_ms(m, k_padded, padded, dtype)
            print(json.dumps({"m": m, "k": k, "n": n, "padded_k": k_padded, "padded_n": padded,
                              "dtype": str(dtype).split(".")[-1], "unaligned_ms": round(unaligned, 4),
                              "padded_ms": round(aligned, 4), "slowdown": round(unaligned / aligned, 3)}))
    precision()


if __name__ == "__main__":
    main()
