"""CuPy's kernels (elementwise, reductions through CUB, cuBLAS GEMMs, a user ElementwiseKernel and RawKernel),
each in an NVTX range named after its kind, for gpuscope's kernel classifier tests.
Exits 0 when everything ran, 1 on an error, 3 when CuPy or a GPU is missing.
"""
import sys

try:
    import cupy as cp
    from cupyx.profiler import time_range
except ImportError:
    print("cupy_kernels: CuPy is not installed")
    sys.exit(3)


def main():
    x = cp.random.random((4096, 4096), dtype=cp.float32)
    with time_range("elementwise"):
        cp.sqrt(x * 2 + 1)
    with time_range("reduction"):
        x.sum()
        x.max(axis=1)
    with time_range("gemm_fp32"):
        x @ x
    with time_range("gemm_fp16"):
        x.astype(cp.float16) @ x.astype(cp.float16)
    axpy = cp.ElementwiseKernel("float32 a, float32 x, float32 y", "float32 z", "z = a * x + y", "user_axpy")
    with time_range("elementwise"):
        axpy(cp.float32(2), x, x)
    raw = cp.RawKernel(r'''
extern "C" __global__ void user_scale(float* v, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) v[i] *= 2.0f;
}''', "user_scale")
    with time_range("elementwise"):
        raw((x.size // 256,), (256,), (x, cp.int32(x.size)))
    with time_range("copy"):
        cp.ascontiguousarray(x.T)
        x.get()
    cp.cuda.Device().synchronize()
    print("cupy_kernels: ran")
    return 0


if __name__ == "__main__":
    sys.exit(main())
