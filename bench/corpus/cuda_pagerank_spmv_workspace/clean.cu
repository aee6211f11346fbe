// PageRank by power iteration on a synthetic web graph: 2,097,152 pages, 1 to 15 out-links each (about 16.8M
// links), link targets drawn from a skewed distribution so that a few pages collect most of the links. The
// column-stochastic link matrix is built on the host in CSR (row = target page, column = linking page, value =
// 1 / out-degree of the linking page) and copied to the device once. Each iteration:
//   next = d * A * rank                  cuSPARSE generic SpMV, through the spmv() helper below: its vector
//                                        descriptors and workspace are made once, before the iterations
//   next += (1 - d) / N, diff = next - rank   a small kernel of our own
//   l1 = |diff|_1                        cuBLAS Sasum in device pointer mode, into a slot of a small device array
// and every 10 iterations the last 10 L1 differences are copied back to check convergence.
// Every page has at least one out-link, so there is no dangling mass to redistribute.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <utility>
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

constexpr int N = 1 << 21;          // pages
constexpr int MAX_OUT = 15;         // out-links per page: 1 .. MAX_OUT
constexpr float DAMPING = 0.85f;
constexpr int CHECK_EVERY = 10;     // iterations between convergence reads
constexpr float TOLERANCE = 1e-6f;  // L1 change taken as converged (reported, the benchmark runs on regardless)
// CSR_ALG2: bit-wise the same result on every run, so the ranks and the top page are reproducible.
constexpr cusparseSpMVAlg_t SPMV_ALG = CUSPARSE_SPMV_CSR_ALG2;

// SplitMix64: a small, fixed-seed generator for the synthetic graph.
struct Rng {
  uint64_t state;
  uint64_t next() {
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  double uniform() { return (next() >> 11) * 0x1.0p-53; }
};

// What cusparseSpMV needs besides the matrix: the two vector descriptors and the external workspace, made once.
struct SpmvPlan {
  cusparseDnVecDescr_t vec_x, vec_y;
  void* workspace;
};

SpmvPlan make_spmv_plan(cusparseHandle_t handle, cusparseSpMatDescr_t A, float* x, float* y, int n, float alpha,
                        float beta) {
  SpmvPlan plan;
  CHECK_CUSPARSE(cusparseCreateDnVec(&plan.vec_x, n, x, CUDA_R_32F));
  CHECK_CUSPARSE(cusparseCreateDnVec(&plan.vec_y, n, y, CUDA_R_32F));
  size_t workspace_bytes = 0;
  CHECK_CUSPARSE(cusparseSpMV_bufferSize(handle, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, A, plan.vec_x, &beta,
                                         plan.vec_y, CUDA_R_32F, SPMV_ALG, &workspace_bytes));
  plan.workspace = nullptr;  // at least a byte: cudaMalloc of 0 bytes hands back no pointer at all
  CHECK(cudaMalloc(&plan.workspace, std::max<size_t>(workspace_bytes, 1)));
  return plan;
}

void destroy_spmv_plan(SpmvPlan& plan) {
  CHECK(cudaFree(plan.workspace));
  CHECK_CUSPARSE(cusparseDestroyDnVec(plan.vec_x));
  CHECK_CUSPARSE(cusparseDestroyDnVec(plan.vec_y));
}

// y = alpha * A x + beta * y with cuSPARSE's generic API, through the plan's descriptors and workspace.
void spmv(cusparseHandle_t handle, cusparseSpMatDescr_t A, SpmvPlan& plan, float* x, float* y, float alpha,
          float beta) {
  CHECK_CUSPARSE(cusparseDnVecSetValues(plan.vec_x, x));
  CHECK_CUSPARSE(cusparseDnVecSetValues(plan.vec_y, y));
  CHECK_CUSPARSE(cusparseSpMV(handle, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, A, plan.vec_x, &beta, plan.vec_y,
                              CUDA_R_32F, SPMV_ALG, plan.workspace));
}

// next += (1 - d) / N, the teleport term; diff = next - rank for the L1 change.
__global__ void teleport(float* __restrict__ next, const float* __restrict__ rank, float* __restrict__ diff,
                         float base, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float r = next[i] + base;
    next[i] = r;
    diff[i] = r - rank[i];
  }
}

int main() {
  // The graph, by linking page: out_ptr / out_dst.
  Rng rng{20261203};
  std::vector<int> out_ptr(N + 1), out_dst;
  out_dst.reserve(static_cast<size_t>(N) * (MAX_OUT + 1) / 2);
  for (int j = 0; j < N; ++j) {
    out_ptr[j] = static_cast<int>(out_dst.size());
    const int k = 1 + static_cast<int>(rng.next() % MAX_OUT);
    while (static_cast<int>(out_dst.size()) - out_ptr[j] < k) {
      // Popular pages sit at small t before the scatter: P(t < x) = (x / N)^(1/3).
      double u = rng.uniform();
      uint32_t t = static_cast<uint32_t>(N * u * u * u);
      int target = static_cast<int>(((t + 12345u) * 2654435761u) & (N - 1));
      if (target == j) continue;
      if (std::find(out_dst.begin() + out_ptr[j], out_dst.end(), target) != out_dst.end()) continue;
      out_dst.push_back(target);
    }
  }
  out_ptr[N] = static_cast<int>(out_dst.size());
  const int nnz = out_ptr[N];

  // The link matrix in CSR by target page: A[i][j] = 1 / outdeg(j) for each link j -> i.
  std::vector<int> row_ptr(N + 1, 0), cols(nnz);
  std::vector<float> vals(nnz);
  for (int e = 0; e < nnz; ++e) ++row_ptr[out_dst[e] + 1];
  for (int i = 0; i < N; ++i) row_ptr[i + 1] += row_ptr[i];
  {
    std::vector<int> fill(row_ptr.begin(), row_ptr.end() - 1);
    for (int j = 0; j < N; ++j) {  // j ascending: each row's columns come out sorted
      const float w = 1.0f / (out_ptr[j + 1] - out_ptr[j]);
      for (int e = out_ptr[j]; e < out_ptr[j + 1]; ++e) {
        int p = fill[out_dst[e]]++;
        cols[p] = j;
        vals[p] = w;
      }
    }
  }
  int max_in = 0;
  for (int i = 0; i < N; ++i) max_in = std::max(max_in, row_ptr[i + 1] - row_ptr[i]);
  std::printf("graph: %d pages, %d links, largest in-degree %d\n", N, nnz, max_in);

  int *d_row_ptr, *d_cols;
  float *d_vals, *d_rank, *d_next, *d_diff, *d_l1;
  CHECK(cudaMalloc(&d_row_ptr, (N + 1) * sizeof(int)));
  CHECK(cudaMalloc(&d_cols, static_cast<size_t>(nnz) * sizeof(int)));
  CHECK(cudaMalloc(&d_vals, static_cast<size_t>(nnz) * sizeof(float)));
  CHECK(cudaMalloc(&d_rank, N * sizeof(float)));
  CHECK(cudaMalloc(&d_next, N * sizeof(float)));
  CHECK(cudaMalloc(&d_diff, N * sizeof(float)));
  CHECK(cudaMalloc(&d_l1, CHECK_EVERY * sizeof(float)));
  CHECK(cudaMemcpy(d_row_ptr, row_ptr.data(), (N + 1) * sizeof(int), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(d_cols, cols.data(), static_cast<size_t>(nnz) * sizeof(int), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(d_vals, vals.data(), static_cast<size_t>(nnz) * sizeof(float), cudaMemcpyHostToDevice));
  {
    std::vector<float> uniform(N, 1.0f / N);
    CHECK(cudaMemcpy(d_rank, uniform.data(), N * sizeof(float), cudaMemcpyHostToDevice));
  }
  float* h_l1;  // pinned: the L1 changes read back every CHECK_EVERY iterations
  CHECK(cudaMallocHost(&h_l1, CHECK_EVERY * sizeof(float)));

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
  CHECK_CUSPARSE(cusparseCreateCsr(&mat, N, N, nnz, d_row_ptr, d_cols, d_vals, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
                                   CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F));
  SpmvPlan plan = make_spmv_plan(sparse, mat, d_rank, d_next, N, DAMPING, 0.0f);

  const int threads = 256, blocks = (N + threads - 1) / threads;
  const float base = (1.0f - DAMPING) / N;
  std::vector<float> l1_history;  // the L1 change of every iteration, as read back
  int it = 0, converged_at = -1;
  auto iteration = [&] {
    spmv(sparse, mat, plan, d_rank, d_next, DAMPING, 0.0f);  // next = d * A * rank
    teleport<<<blocks, threads, 0, stream>>>(d_next, d_rank, d_diff, base, N);
    CHECK(cudaGetLastError());
    CHECK_CUBLAS(cublasSasum(blas, N, d_diff, 1, d_l1 + it % CHECK_EVERY));
    std::swap(d_rank, d_next);
    if (++it % CHECK_EVERY == 0) {
      CHECK(cudaMemcpyAsync(h_l1, d_l1, CHECK_EVERY * sizeof(float), cudaMemcpyDeviceToHost, stream));
      CHECK(cudaStreamSynchronize(stream));
      for (int k = 0; k < CHECK_EVERY; ++k) {
        l1_history.push_back(h_l1[k]);
        if (converged_at < 0 && h_l1[k] < TOLERANCE) converged_at = it - CHECK_EVERY + k + 1;
      }
    }
  };

  for (int i = 0; i < 10; ++i) iteration();
  CHECK(cudaDeviceSynchronize());
  const int timed = 300;  // a fixed number of iterations, converged or not: a benchmark of the iteration
  auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < timed; ++i) iteration();
  CHECK(cudaDeviceSynchronize());
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();

  std::vector<float> rank(N);
  CHECK(cudaMemcpy(rank.data(), d_rank, N * sizeof(float), cudaMemcpyDeviceToHost));
  double total = 0.0;
  int top = 0;
  for (int i = 0; i < N; ++i) {
    total += rank[i];
    if (rank[i] > rank[top]) top = i;
  }
  std::printf("L1 change after %d iterations:", it);
  for (size_t k = 49; k < l1_history.size(); k += 50) std::printf(" %.3e", l1_history[k]);
  std::printf("\n");
  if (converged_at >= 0)
    std::printf("L1 change below %.0e from iteration %d\n", TOLERANCE, converged_at);
  std::printf("sum of ranks %.6f, top page %d with rank %.6e (in-degree %d)\n", total, top, rank[top],
              row_ptr[top + 1] - row_ptr[top]);
  std::printf("%.3f ms/step\n", ms / timed);

  destroy_spmv_plan(plan);
  CHECK_CUSPARSE(cusparseDestroySpMat(mat));
  CHECK_CUSPARSE(cusparseDestroy(sparse));
  CHECK_CUBLAS(cublasDestroy(blas));
  CHECK(cudaFreeHost(h_l1));
  CHECK(cudaFree(d_row_ptr));
  CHECK(cudaFree(d_cols));
  CHECK(cudaFree(d_vals));
  CHECK(cudaFree(d_rank));
  CHECK(cudaFree(d_next));
  CHECK(cudaFree(d_diff));
  CHECK(cudaFree(d_l1));
  CHECK(cudaStreamDestroy(stream));
  return 0;
}
