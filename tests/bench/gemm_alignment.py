"""How much a GEMM dimension that is not a multiple of 8 costs on this GPU: the basis of gpuscope's padding
estimate (advisor rule gemm_alignment, docs/benchmarks.md). Times C = A @ B forward and the two backward GEMMs
(dA = dC @ B^T, dB = A^T @ dC) for N unaligned and N padded to a multiple of 64, in bf16 and in fp32 with TF32,
and prints one JSON line per shape with the slowdown of the unaligned one. Then times the same three GEMMs
in fp32 without TF32 (PyTorch's default), fp32 with TF32 and bf16, the basis of the fp32_gemm estimate.
"""
import json

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


def main():
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
