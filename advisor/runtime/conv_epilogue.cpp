#include "advisor/runtime/conv_epilogue.h"

#include <cudnn.h>

#include <string>

#include "advisor/runtime/cuda_driver.h"

// cuDNN 9 marks its descriptor-based convolution API deprecated in favour of the graph API; it still ships
// and still runs the fused convolution + bias + activation kernels, in a tenth of the code.
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

namespace gpuscope::runtime {

namespace {

constexpr size_t kMaxWorkspaceBytes = 256 << 20;

Status dnn(cudnnStatus_t s, const char* call) {
  if (s == CUDNN_STATUS_SUCCESS) return Status::ok();
  return Status(ErrorKind::kIo, std::string(call) + " failed: " + cudnnGetErrorString(s));
}

}  // namespace

struct ConvEpilogue::State {
  cudnnHandle_t handle = nullptr;
  cudnnTensorDescriptor_t x = nullptr, y = nullptr, bias = nullptr;
  cudnnFilterDescriptor_t w = nullptr;
  cudnnConvolutionDescriptor_t conv = nullptr;
  cudnnActivationDescriptor_t activation = nullptr;
  cudnnConvolutionFwdAlgo_t algo = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM;
  size_t workspace_bytes = 0;
  CUdeviceptr workspace = 0;
  ConvEpilogueKind kind = ConvEpilogueKind::kNone;

  ~State() {
    if (workspace) cudaDriver().value()->memFree(workspace);
    for (cudnnTensorDescriptor_t t : {x, y, bias}) {
      if (t) cudnnDestroyTensorDescriptor(t);
    }
    if (w) cudnnDestroyFilterDescriptor(w);
    if (conv) cudnnDestroyConvolutionDescriptor(conv);
    if (activation) cudnnDestroyActivationDescriptor(activation);
    if (handle) cudnnDestroy(handle);
  }

  Status describe(const ConvShape& s);
  Status chooseAlgorithm();
};

ConvEpilogue::~ConvEpilogue() = default;
ConvEpilogue::ConvEpilogue(ConvEpilogue&&) noexcept = default;
ConvEpilogue& ConvEpilogue::operator=(ConvEpilogue&&) noexcept = default;

Status ConvEpilogue::State::describe(const ConvShape& s) {
  const auto i = [](int64_t v) { return static_cast<int>(v); };
  GPUSCOPE_RETURN_IF_ERROR(dnn(cudnnCreateTensorDescriptor(&x), "cudnnCreateTensorDescriptor"));
  GPUSCOPE_RETURN_IF_ERROR(dnn(cudnnCreateTensorDescriptor(&y), "cudnnCreateTensorDescriptor"));
  GPUSCOPE_RETURN_IF_ERROR(dnn(cudnnCreateTensorDescriptor(&bias), "cudnnCreateTensorDescriptor"));
  GPUSCOPE_RETURN_IF_ERROR(dnn(cudnnCreateFilterDescriptor(&w), "cudnnCreateFilterDescriptor"));
  GPUSCOPE_RETURN_IF_ERROR(dnn(cudnnCreateConvolutionDescriptor(&conv), "cudnnCreateConvolutionDescriptor"));
  GPUSCOPE_RETURN_IF_ERROR(dnn(cudnnCreateActivationDescriptor(&activation), "cudnnCreateActivationDescriptor"));
  GPUSCOPE_RETURN_IF_ERROR(dnn(cudnnSetTensor4dDescriptor(x, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, i(s.batch),
                                                          i(s.in_channels), i(s.height), i(s.width)),
                               "input descriptor"));
  GPUSCOPE_RETURN_IF_ERROR(dnn(cudnnSetFilter4dDescriptor(w, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, i(s.out_channels),
                                                          i(s.in_channels), i(s.kernel_h), i(s.kernel_w)),
                               "filter descriptor"));
  GPUSCOPE_RETURN_IF_ERROR(dnn(cudnnSetConvolution2dDescriptor(conv, i(s.pad), i(s.pad), i(s.stride), i(s.stride), 1, 1,
                                                               CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT),
                               "convolution descriptor"));
  GPUSCOPE_RETURN_IF_ERROR(dnn(cudnnSetConvolutionMathType(conv, CUDNN_FMA_MATH), "math type"));  // no TF32
  int n = 0, c = 0, h = 0, wd = 0;
  GPUSCOPE_RETURN_IF_ERROR(
      dnn(cudnnGetConvolution2dForwardOutputDim(conv, x, w, &n, &c, &h, &wd), "cudnnGetConvolution2dForwardOutputDim"));
  GPUSCOPE_RETURN_IF_ERROR(
      dnn(cudnnSetTensor4dDescriptor(y, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, n, c, h, wd), "output descriptor"));
  GPUSCOPE_RETURN_IF_ERROR(
      dnn(cudnnSetTensor4dDescriptor(bias, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1, i(s.out_channels), 1, 1), "bias"));
  const cudnnActivationMode_t mode =
      kind == ConvEpilogueKind::kBiasRelu ? CUDNN_ACTIVATION_RELU : CUDNN_ACTIVATION_IDENTITY;
  return dnn(cudnnSetActivationDescriptor(activation, mode, CUDNN_NOT_PROPAGATE_NAN, 0.0), "activation");
}

// cuDNN fuses a bias without activation only with the implicit precomputed GEMM; otherwise its heuristics'
// first algorithm that fits the workspace limit.
Status ConvEpilogue::State::chooseAlgorithm() {
  if (kind != ConvEpilogueKind::kBias) {
    cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
    int returned = 0;
    GPUSCOPE_RETURN_IF_ERROR(dnn(cudnnGetConvolutionForwardAlgorithm_v7(
                                     handle, x, w, conv, y, CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &returned, perf),
                                 "cudnnGetConvolutionForwardAlgorithm_v7"));
    int chosen = -1;
    for (int a = 0; a < returned && chosen < 0; ++a) {
      if (perf[a].status == CUDNN_STATUS_SUCCESS && perf[a].memory <= kMaxWorkspaceBytes) chosen = a;
    }
    if (chosen < 0) return Status(ErrorKind::kUsage, "cuDNN has no algorithm for this convolution");
    algo = perf[chosen].algo;
  }
  GPUSCOPE_RETURN_IF_ERROR(dnn(cudnnGetConvolutionForwardWorkspaceSize(handle, x, w, conv, y, algo, &workspace_bytes),
                               "cudnnGetConvolutionForwardWorkspaceSize"));
  if (workspace_bytes == 0) return Status::ok();
  const CudaDriver& cu = *cudaDriver().value();
  return cu.check(cu.memAlloc(&workspace, workspace_bytes), "cuMemAlloc");
}

Result<ConvEpilogue> ConvEpilogue::create(ConvShape shape, ConvEpilogueKind kind) {
  if (shape.batch < 1 || shape.in_channels < 1 || shape.out_channels < 1 || shape.kernel_h < 1 || shape.kernel_w < 1 ||
      shape.stride < 1 || shape.pad < 0 || shape.outHeight() < 1 || shape.outWidth() < 1) {
    return Status(ErrorKind::kUsage, "the convolution's shape has no output");
  }
  Result<const CudaDriver*> cu = cudaDriver();
  if (!cu) return cu.status();
  GPUSCOPE_RETURN_IF_ERROR(ensureContext(**cu));
  ConvEpilogue e;
  e.state_ = std::make_unique<State>();
  State& s = *e.state_;
  s.kind = kind;
  GPUSCOPE_RETURN_IF_ERROR(dnn(cudnnCreate(&s.handle), "cudnnCreate"));
  GPUSCOPE_RETURN_IF_ERROR(s.describe(shape));
  GPUSCOPE_RETURN_IF_ERROR(s.chooseAlgorithm());
  return e;
}

Status ConvEpilogue::run(CUdeviceptr x, CUdeviceptr w, CUdeviceptr bias, CUdeviceptr y, CUstream stream) const {
  const State& s = *state_;
  GPUSCOPE_RETURN_IF_ERROR(dnn(cudnnSetStream(s.handle, reinterpret_cast<cudaStream_t>(stream)), "cudnnSetStream"));
  const float one = 1.0f, zero = 0.0f;
  auto ptr = [](CUdeviceptr p) { return reinterpret_cast<void*>(p); };
  if (s.kind == ConvEpilogueKind::kNone) {
    return dnn(cudnnConvolutionForward(s.handle, &one, s.x, ptr(x), s.w, ptr(w), s.conv, s.algo, ptr(s.workspace),
                                       s.workspace_bytes, &zero, s.y, ptr(y)),
               "cudnnConvolutionForward");
  }
  // z is y with a zero weight: cuDNN's fused call always takes a residual input.
  return dnn(cudnnConvolutionBiasActivationForward(s.handle, &one, s.x, ptr(x), s.w, ptr(w), s.conv, s.algo,
                                                   ptr(s.workspace), s.workspace_bytes, &zero, s.y, ptr(y), s.bias,
                                                   ptr(bias), s.activation, s.y, ptr(y)),
             "cudnnConvolutionBiasActivationForward");
}

}  // namespace gpuscope::runtime
