"""One of each kind of kernel PyTorch runs on a GPU, each inside an NVTX range named after its kind, so a
recorded trace pairs real kernel names from PyTorch, cuBLAS(Lt), cuDNN, FlashAttention and Triton with the kind
gpuscope's kernel classifier must give them (tests/analyzer/kernel_classifier_test.cpp reads the fixture).
Exits 0 when every section ran, 1 when one failed (its error is printed), 3 when PyTorch has no GPU.
"""
import sys

import torch

nvtx = torch.cuda.nvtx


def gemms():
    a32, b32 = torch.randn(1024, 1024, device="cuda"), torch.randn(1024, 1024, device="cuda")
    torch.backends.cuda.matmul.allow_tf32 = False
    with nvtx.range("gemm_fp32"):
        a32 @ b32
    torch.backends.cuda.matmul.allow_tf32 = True
    with nvtx.range("gemm_tf32"):
        a32 @ b32
    torch.backends.cuda.matmul.allow_tf32 = False
    with nvtx.range("gemm_bf16"):
        a32.bfloat16() @ b32.bfloat16()
    with nvtx.range("gemm_fp16"):
        a32.half() @ b32.half()
    a8 = a32.to(torch.float8_e4m3fn)
    b8 = b32.to(torch.float8_e4m3fn).t().contiguous().t()
    one = torch.ones((), device="cuda")
    with nvtx.range("gemm_fp8"):
        torch._scaled_mm(a8, b8, scale_a=one, scale_b=one, out_dtype=torch.bfloat16)
    lin = torch.nn.Linear(1024, 1024, device="cuda")
    with nvtx.range("gemm_bias_fp32"):
        lin(a32)


def convolutions():
    x = torch.randn(32, 64, 56, 56, device="cuda")
    conv = torch.nn.Conv2d(64, 64, 3, padding=1, device="cuda")
    with nvtx.range("convolution_fp32"):
        conv(x)
    with nvtx.range("convolution_bf16"), torch.autocast("cuda", dtype=torch.bfloat16):
        conv(x.to(memory_format=torch.channels_last))


def memory_bound():
    x = torch.randn(4096, 4096, device="cuda")
    with nvtx.range("elementwise"):
        torch.relu(x * 2 + 1)
    with nvtx.range("reduction"):
        x.sum(dim=1)
        x.max()
    with nvtx.range("normalisation"):
        torch.nn.functional.layer_norm(x, (4096,))
        torch.nn.functional.batch_norm(x.view(64, 256, 1024), None, None, training=True)
        torch.softmax(x, dim=-1)
    with nvtx.range("copy"):
        x.t().contiguous()
        x.bfloat16()
        y = torch.empty_like(x)
        y.copy_(x)


def attention():
    q = torch.randn(8, 16, 1024, 64, device="cuda", dtype=torch.bfloat16)
    with nvtx.range("attention"):
        torch.nn.functional.scaled_dot_product_attention(q, q, q, is_causal=True)


def optimizer():
    params = [torch.nn.Parameter(torch.randn(1024, 1024, device="cuda")) for _ in range(8)]
    for p in params:
        p.grad = torch.randn_like(p)
    adam = torch.optim.AdamW(params, lr=1e-3, foreach=True)
    with nvtx.range("optimizer"):
        adam.step()


def triton():
    @torch.compile
    def fused(x, y):
        return torch.relu(x * y + 1.0).sum(dim=-1)

    x = torch.randn(2048, 2048, device="cuda")
    fused(x, x)  # compiles
    torch.cuda.synchronize()
    with nvtx.range("triton"):
        fused(x, x)


def main():
    if not torch.cuda.is_available():
        print("torch_kernels: no GPU")
        return 3
    failed = []
    for section in (gemms, convolutions, memory_bound, attention, optimizer, triton):
        try:
            section()
            torch.cuda.synchronize()
            print(f"torch_kernels: {section.__name__} ran")
        except Exception as e:  # a missing feature (fp8, Triton) must not hide the other sections
            print(f"torch_kernels: {section.__name__} failed: {e}", file=sys.stderr)
            failed.append(section.__name__)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
