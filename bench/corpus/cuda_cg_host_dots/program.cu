// Conjugate gradient for a 2D Poisson problem: the 5-point Laplacian on a 512x512 grid (262,144 unknowns,
// Dirichlet boundary) stored in CSR, the matrix-vector product by cuSPARSE's generic SpMV, the dot products and
// vector updates by cuBLAS level 1. Each iteration computes alpha and beta on the host from the two dot products.
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
  float *d_vals, *d_x, *d_r, *d_p, *d_ap;
  CHECK(cudaMalloc(&d_row_ptr, (N + 1) * sizeof(int)));
  CHECK(cudaMalloc(&d_cols, nnz * sizeof(int)));
  CHECK(cudaMalloc(&d_vals, nnz * sizeof(float)));
  CHECK(cudaMalloc(&d_x, N * sizeof(float)));
  CHECK(cudaMalloc(&d_r, N * sizeof(float)));
  CHECK(cudaMalloc(&d_p, N * sizeof(float)));
  CHECK(cudaMalloc(&d_ap, N * sizeof(float)));
  CHECK(cudaMemcpy(d_row_ptr, row_ptr.data(), (N + 1) * sizeof(int), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(d_cols, cols.data(), nnz * sizeof(int), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(d_vals, vals.data(), nnz * sizeof(float), cudaMemcpyHostToDevice));

  cudaStream_t stream;
  CHECK(cudaStreamCreate(&stream));
  cublasHandle_t blas;
  CHECK_CUBLAS(cublasCreate(&blas));
  CHECK_CUBLAS(cublasSetStream(blas, stream));
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
  float rr;
  CHECK_CUBLAS(cublasSdot(blas, N, d_r, 1, d_r, 1, &rr));
  const float bnorm = std::sqrt(rr);

  std::vector<float> history;  // relative residual every 50 iterations
  int it = 0;
  auto iteration = [&] {
    // Ap = A p
    CHECK_CUSPARSE(cusparseSpMV(sparse, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, mat, vec_p, &zero, vec_ap, CUDA_R_32F,
                                CUSPARSE_SPMV_ALG_DEFAULT, spmv_buffer));
    float pap;
    CHECK_CUBLAS(cublasSdot(blas, N, d_p, 1, d_ap, 1, &pap));
    float alpha = rr / pap, minus_alpha = -alpha;
    CHECK_CUBLAS(cublasSaxpy(blas, N, &alpha, d_p, 1, d_x, 1));         // x += alpha p
    CHECK_CUBLAS(cublasSaxpy(blas, N, &minus_alpha, d_ap, 1, d_r, 1));  // r -= alpha Ap
    float rr_new;
    CHECK_CUBLAS(cublasSdot(blas, N, d_r, 1, d_r, 1, &rr_new));
    float beta = rr_new / rr;
    CHECK_CUBLAS(cublasSscal(blas, N, &beta, d_p, 1));         // p = beta p
    CHECK_CUBLAS(cublasSaxpy(blas, N, &one, d_r, 1, d_p, 1));  // p += r
    rr = rr_new;
    if (++it % 50 == 0) history.push_back(std::sqrt(rr) / bnorm);
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
  CHECK(cudaStreamDestroy(stream));
  return 0;
}
