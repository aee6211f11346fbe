// Conjugate gradient for a 2D Poisson problem: the 5-point Laplacian on a 512x512 grid (262,144 unknowns,
// Dirichlet boundary) stored in CSR, the matrix-vector product by cuSPARSE's generic SpMV, the dot products and
// vector updates by cuBLAS level 1. cuBLAS runs in device pointer mode: the dot products stay on the device, alpha
// and beta are computed there by two one-thread kernels, and the host reads the residual every 50 iterations only.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusparse.h>

#define CHECK(call)                                                                      \
  do {                                                                                   \
    cudaError_t err_ = (call);                                                           \
    if (err_ != cudaSuccess) {                                                           \
      std::fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(err_)); \
      std::exit(1);                                                                      \
    }                                                                                    \
  } while (0)

#define CHECK_CUBLAS(call)                                                                        \
  do {                                                                                            \
    cublasStatus_t st_ = (call);                                                                  \
    if (st_ != CUBLAS_STATUS_SUCCESS) {                                                           \
      std::fprintf(stderr, "%s:%d: cuBLAS %s\n", __FILE__, __LINE__, cublasGetStatusString(st_)); \
      std::exit(1);                                                                               \
    }                                                                                             \
  } while (0)

#define CHECK_CUSPARSE(call)                                                                         \
  do {                                                                                               \
    cusparseStatus_t st_ = (call);                                                                   \
    if (st_ != CUSPARSE_STATUS_SUCCESS) {                                                            \
      std::fprintf(stderr, "%s:%d: cuSPARSE %s\n", __FILE__, __LINE__, cusparseGetErrorString(st_)); \
      std::exit(1);                                                                                  \
    }                                                                                                \
  } while (0)

constexpr int GRID = 512;
constexpr int N = GRID * GRID;

// The CG scalars, on the device: alpha = rr / pAp, then beta = rr_new / rr and rr = rr_new.
__global__ void cg_alpha(const float* rr, const float* pap, float* alpha, float* minus_alpha) {
  *alpha = *rr / *pap;
  *minus_alpha = -*alpha;
}

__global__ void cg_beta(const float* rr_new, float* rr, float* beta) {
  *beta = *rr_new / *rr;
  *rr = *rr_new;
}

int main() {
  // The matrix: 4 on the diagonal, -1 for each of the (up to) four neighbours.
  std::vector<int> row_ptr(N + 1), cols;
  std::vector<float> vals;
  cols.reserve(5 * N);
  vals.reserve(5 * N);
  for (int y = 0; y < GRID; ++y) {
    for (int x = 0; x < GRID; ++x) {
      int i = y * GRID + x;
      row_ptr[i] = static_cast<int>(cols.size());
      if (y > 0) cols.push_back(i - GRID), vals.push_back(-1.f);
      if (x > 0) cols.push_back(i - 1), vals.push_back(-1.f);
      cols.push_back(i), vals.push_back(4.f);
      if (x < GRID - 1) cols.push_back(i + 1), vals.push_back(-1.f);
      if (y < GRID - 1) cols.push_back(i + GRID), vals.push_back(-1.f);
    }
  }
  row_ptr[N] = static_cast<int>(cols.size());
  const int nnz = row_ptr[N];
  // A synthetic right-hand side: a smooth source plus some noise.
  std::vector<float> b(N);
  for (int y = 0; y < GRID; ++y)
    for (int x = 0; x < GRID; ++x)
      b[y * GRID + x] = std::sin(3.14159265f * x / GRID) * std::sin(3.14159265f * y / GRID) +
                        0.1f * (((y * GRID + x) * 2654435761u) % 1000) / 1000.0f;

  int *d_row_ptr, *d_cols;
  float *d_vals, *d_x, *d_r, *d_p, *d_ap, *d_scalars;
  CHECK(cudaMalloc(&d_row_ptr, (N + 1) * sizeof(int)));
  CHECK(cudaMalloc(&d_cols, nnz * sizeof(int)));
  CHECK(cudaMalloc(&d_vals, nnz * sizeof(float)));
  CHECK(cudaMalloc(&d_x, N * sizeof(float)));
  CHECK(cudaMalloc(&d_r, N * sizeof(float)));
  CHECK(cudaMalloc(&d_p, N * sizeof(float)));
  CHECK(cudaMalloc(&d_ap, N * sizeof(float)));
  CHECK(cudaMalloc(&d_scalars, 7 * sizeof(float)));
  float *d_rr = d_scalars, *d_rr_new = d_scalars + 1, *d_pap = d_scalars + 2, *d_alpha = d_scalars + 3,
        *d_minus_alpha = d_scalars + 4, *d_beta = d_scalars + 5, *d_one = d_scalars + 6;
  CHECK(cudaMemcpy(d_row_ptr, row_ptr.data(), (N + 1) * sizeof(int), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(d_cols, cols.data(), nnz * sizeof(int), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(d_vals, vals.data(), nnz * sizeof(float), cudaMemcpyHostToDevice));

  cudaStream_t stream;
  CHECK(cudaStreamCreate(&stream));
  cublasHandle_t blas;
  CHECK_CUBLAS(cublasCreate(&blas));
  CHECK_CUBLAS(cublasSetStream(blas, stream));
  CHECK_CUBLAS(cublasSetPointerMode(blas, CUBLAS_POINTER_MODE_DEVICE));
  cusparseHandle_t sparse;
  CHECK_CUSPARSE(cusparseCreate(&sparse));
  CHECK_CUSPARSE(cusparseSetStream(sparse, stream));

  cusparseSpMatDescr_t mat;
  cusparseDnVecDescr_t vec_p, vec_ap;
  CHECK_CUSPARSE(cusparseCreateCsr(&mat, N, N, nnz, d_row_ptr, d_cols, d_vals, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
                                   CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F));
  CHECK_CUSPARSE(cusparseCreateDnVec(&vec_p, N, d_p, CUDA_R_32F));
  CHECK_CUSPARSE(cusparseCreateDnVec(&vec_ap, N, d_ap, CUDA_R_32F));
  const float one = 1.f, zero = 0.f;
  size_t spmv_bytes = 0;
  CHECK_CUSPARSE(cusparseSpMV_bufferSize(sparse, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, mat, vec_p, &zero, vec_ap,
                                         CUDA_R_32F, CUSPARSE_SPMV_ALG_DEFAULT, &spmv_bytes));
  void* spmv_buffer;
  CHECK(cudaMalloc(&spmv_buffer, spmv_bytes > 0 ? spmv_bytes : 1));

  // x = 0, r = b, p = r.
  CHECK(cudaMemset(d_x, 0, N * sizeof(float)));
  CHECK(cudaMemcpy(d_r, b.data(), N * sizeof(float), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(d_p, d_r, N * sizeof(float), cudaMemcpyDeviceToDevice));
  CHECK(cudaMemcpy(d_one, &one, sizeof(float), cudaMemcpyHostToDevice));
  float* rr;  // pinned: the residual read back every 50 iterations
  CHECK(cudaMallocHost(&rr, sizeof(float)));
  CHECK_CUBLAS(cublasSdot(blas, N, d_r, 1, d_r, 1, d_rr));
  CHECK(cudaMemcpyAsync(rr, d_rr, sizeof(float), cudaMemcpyDeviceToHost, stream));
  CHECK(cudaStreamSynchronize(stream));
  const float bnorm = std::sqrt(*rr);

  std::vector<float> history;  // relative residual every 50 iterations
  int it = 0;
  auto iteration = [&] {
    // Ap = A p
    CHECK_CUSPARSE(cusparseSpMV(sparse, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, mat, vec_p, &zero, vec_ap, CUDA_R_32F,
                                CUSPARSE_SPMV_ALG_DEFAULT, spmv_buffer));
    CHECK_CUBLAS(cublasSdot(blas, N, d_p, 1, d_ap, 1, d_pap));
    cg_alpha<<<1, 1, 0, stream>>>(d_rr, d_pap, d_alpha, d_minus_alpha);
    CHECK(cudaGetLastError());
    CHECK_CUBLAS(cublasSaxpy(blas, N, d_alpha, d_p, 1, d_x, 1));         // x += alpha p
    CHECK_CUBLAS(cublasSaxpy(blas, N, d_minus_alpha, d_ap, 1, d_r, 1));  // r -= alpha Ap
    CHECK_CUBLAS(cublasSdot(blas, N, d_r, 1, d_r, 1, d_rr_new));
    cg_beta<<<1, 1, 0, stream>>>(d_rr_new, d_rr, d_beta);
    CHECK(cudaGetLastError());
    CHECK_CUBLAS(cublasSscal(blas, N, d_beta, d_p, 1));         // p = beta p
    CHECK_CUBLAS(cublasSaxpy(blas, N, d_one, d_r, 1, d_p, 1));  // p += r
    if (++it % 50 == 0) {
      CHECK(cudaMemcpyAsync(rr, d_rr, sizeof(float), cudaMemcpyDeviceToHost, stream));
      CHECK(cudaStreamSynchronize(stream));
      history.push_back(std::sqrt(*rr) / bnorm);
    }
  };

  for (int i = 0; i < 10; ++i) iteration();
  CHECK(cudaDeviceSynchronize());
  const int timed = 500;  // a fixed number of iterations, converged or not: a benchmark of the iteration
  auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < timed; ++i) iteration();
  CHECK(cudaDeviceSynchronize());
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();

  std::printf("relative residual after %d iterations:", it);
  for (float h : history) std::printf(" %.3e", h);
  std::printf("\n");
  std::printf("%.3f ms/step\n", ms / timed);

  CHECK_CUSPARSE(cusparseDestroyDnVec(vec_p));
  CHECK_CUSPARSE(cusparseDestroyDnVec(vec_ap));
  CHECK_CUSPARSE(cusparseDestroySpMat(mat));
  CHECK_CUSPARSE(cusparseDestroy(sparse));
  CHECK_CUBLAS(cublasDestroy(blas));
  CHECK(cudaFree(spmv_buffer));
  CHECK(cudaFree(d_row_ptr));
  CHECK(cudaFree(d_cols));
  CHECK(cudaFree(d_vals));
  CHECK(cudaFree(d_x));
  CHECK(cudaFree(d_r));
  CHECK(cudaFree(d_p));
  CHECK(cudaFree(d_ap));
  CHECK(cudaFree(d_scalars));
  CHECK(cudaFreeHost(rr));
  CHECK(cudaStreamDestroy(stream));
  return 0;
}
