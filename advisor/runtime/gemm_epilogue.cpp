#include "advisor/runtime/gemm_epilogue.h"

#include <cublasLt.h>

#include <string>

#include "advisor/runtime/cuda_driver.h"

namespace gpuscope::runtime {

namespace {

constexpr size_t kWorkspaceBytes = 32 << 20;  // what cuBLASLt's fastest Hopper kernels ask for

Status lt(cublasStatus_t s, const char* call) {
  if (s == CUBLAS_STATUS_SUCCESS) return Status::ok();
  return Status(ErrorKind::kIo, std::string(call) + " failed: " + cublasLtGetStatusString(s));
}

cublasLtEpilogue_t ltEpilogue(Epilogue e) {
  switch (e) {
    case Epilogue::kNone: return CUBLASLT_EPILOGUE_DEFAULT;
    case Epilogue::kBias: return CUBLASLT_EPILOGUE_BIAS;
    case Epilogue::kBiasRelu: return CUBLASLT_EPILOGUE_RELU_BIAS;
    case Epilogue::kBiasGelu: return CUBLASLT_EPILOGUE_GELU_BIAS;
    case Epilogue::kBiasGeluAux: return CUBLASLT_EPILOGUE_GELU_AUX_BIAS;
  }
  return CUBLASLT_EPILOGUE_DEFAULT;
}

}  // namespace

struct GemmEpilogue::State {
  cublasLtHandle_t handle = nullptr;
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t x = nullptr, w = nullptr, y = nullptr;
  cublasLtMatmulAlgo_t algo{};
  CUdeviceptr workspace = 0;
  GemmShape shape;
  Epilogue epilogue = Epilogue::kNone;

  ~State() {
    if (workspace) cudaDriver().value()->memFree(workspace);
    for (cublasLtMatrixLayout_t l : {x, w, y}) {
      if (l) cublasLtMatrixLayoutDestroy(l);
    }
    if (desc) cublasLtMatmulDescDestroy(desc);
    if (handle) cublasLtDestroy(handle);
  }
};

GemmEpilogue::~GemmEpilogue() = default;
GemmEpilogue::GemmEpilogue(GemmEpilogue&&) noexcept = default;
GemmEpilogue& GemmEpilogue::operator=(GemmEpilogue&&) noexcept = default;

// Row-major Y (m×n) = X (m×k) · W (k×n) is, in cuBLASLt's column-major terms, Yᵀ (n×m) = Wᵀ (n×k) · Xᵀ (k×m):
// W's buffer as the first operand, X's as the second, and the bias along Yᵀ's rows. A row-major buffer read
// column-major is its transpose, so an operand stored transposed is the other shape with the op set to T.
Result<GemmEpilogue> GemmEpilogue::create(GemmShape shape, Epilogue epilogue, DType dtype) {
  if (dtype == DType::kF32) return Status(ErrorKind::kUsage, "GEMM epilogues take bf16 or fp16 operands");
  Result<const CudaDriver*> cu = cudaDriver();
  if (!cu) return cu.status();
  GPUSCOPE_RETURN_IF_ERROR(ensureContext(**cu));
  GemmEpilogue g;
  g.state_ = std::make_unique<State>();
  State& s = *g.state_;
  s.shape = shape;
  s.epilogue = epilogue;
  const cudaDataType_t type = dtype == DType::kBF16 ? CUDA_R_16BF : CUDA_R_16F;
  GPUSCOPE_RETURN_IF_ERROR(lt(cublasLtCreate(&s.handle), "cublasLtCreate"));
  GPUSCOPE_RETURN_IF_ERROR(
      lt(cublasLtMatmulDescCreate(&s.desc, CUBLAS_COMPUTE_32F, CUDA_R_32F), "cublasLtMatmulDescCreate"));
  const cublasLtEpilogue_t e = ltEpilogue(epilogue);
  GPUSCOPE_RETURN_IF_ERROR(lt(cublasLtMatmulDescSetAttribute(s.desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &e, sizeof e),
                              "cublasLtMatmulDescSetAttribute"));
  if (epilogue != Epilogue::kNone) {
    GPUSCOPE_RETURN_IF_ERROR(lt(
        cublasLtMatmulDescSetAttribute(s.desc, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &type, sizeof type), "bias type"));
  }
  if (epilogue == Epilogue::kBiasGeluAux) {
    const int64_t ld = shape.n;
    GPUSCOPE_RETURN_IF_ERROR(
        lt(cublasLtMatmulDescSetAttribute(s.desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD, &ld, sizeof ld), "aux ld"));
  }
  const cublasOperation_t op_w = shape.w_transposed ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t op_x = shape.x_transposed ? CUBLAS_OP_T : CUBLAS_OP_N;
  GPUSCOPE_RETURN_IF_ERROR(
      lt(cublasLtMatmulDescSetAttribute(s.desc, CUBLASLT_MATMUL_DESC_TRANSA, &op_w, sizeof op_w), "transpose W"));
  GPUSCOPE_RETURN_IF_ERROR(
      lt(cublasLtMatmulDescSetAttribute(s.desc, CUBLASLT_MATMUL_DESC_TRANSB, &op_x, sizeof op_x), "transpose X"));
  GPUSCOPE_RETURN_IF_ERROR(lt(shape.w_transposed ? cublasLtMatrixLayoutCreate(&s.w, type, shape.k, shape.n, shape.k)
                                                 : cublasLtMatrixLayoutCreate(&s.w, type, shape.n, shape.k, shape.n),
                              "layout W"));
  GPUSCOPE_RETURN_IF_ERROR(lt(shape.x_transposed ? cublasLtMatrixLayoutCreate(&s.x, type, shape.m, shape.k, shape.m)
                                                 : cublasLtMatrixLayoutCreate(&s.x, type, shape.k, shape.m, shape.k),
                              "layout X"));
  GPUSCOPE_RETURN_IF_ERROR(lt(cublasLtMatrixLayoutCreate(&s.y, type, shape.n, shape.m, shape.n), "layout Y"));
  GPUSCOPE_RETURN_IF_ERROR((*cu)->check((*cu)->memAlloc(&s.workspace, kWorkspaceBytes), "cuMemAlloc"));
  cublasLtMatmulPreference_t preference;
  GPUSCOPE_RETURN_IF_ERROR(lt(cublasLtMatmulPreferenceCreate(&preference), "cublasLtMatmulPreferenceCreate"));
  const size_t workspace = kWorkspaceBytes;
  cublasLtMatmulPreferenceSetAttribute(preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace,
                                       sizeof workspace);
  cublasLtMatmulHeuristicResult_t result{};
  int found = 0;
  const cublasStatus_t h =
      cublasLtMatmulAlgoGetHeuristic(s.handle, s.desc, s.w, s.x, s.y, s.y, preference, 1, &result, &found);
  cublasLtMatmulPreferenceDestroy(preference);
  GPUSCOPE_RETURN_IF_ERROR(lt(h, "cublasLtMatmulAlgoGetHeuristic"));
  if (found == 0) return Status(ErrorKind::kUsage, "cuBLASLt has no kernel for this GEMM and epilogue");
  s.algo = result.algo;
  return g;
}

Status GemmEpilogue::run(CUdeviceptr x, CUdeviceptr w, CUdeviceptr bias, CUdeviceptr y, CUdeviceptr aux,
                         CUstream stream) const {
  const State& s = *state_;
  if (s.epilogue != Epilogue::kNone) {
    void* b = reinterpret_cast<void*>(bias);
    GPUSCOPE_RETURN_IF_ERROR(
        lt(cublasLtMatmulDescSetAttribute(s.desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &b, sizeof b), "bias pointer"));
  }
  if (s.epilogue == Epilogue::kBiasGeluAux) {
    void* a = reinterpret_cast<void*>(aux);
    GPUSCOPE_RETURN_IF_ERROR(
        lt(cublasLtMatmulDescSetAttribute(s.desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, &a, sizeof a),
           "aux pointer"));
  }
  const float alpha = 1.0f, beta = 0.0f;
  return lt(
      cublasLtMatmul(s.handle, s.desc, &alpha, reinterpret_cast<const void*>(w), s.w, reinterpret_cast<const void*>(x),
                     s.x, &beta, reinterpret_cast<const void*>(y), s.y, reinterpret_cast<void*>(y), s.y, &s.algo,
                     reinterpret_cast<void*>(s.workspace), kWorkspaceBytes, reinterpret_cast<cudaStream_t>(stream)),
      "cublasLtMatmul");
}

}  // namespace gpuscope::runtime
