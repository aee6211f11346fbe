#include "advisor/runtime/fused_chain.h"

#include <algorithm>
#include <atomic>
#include <map>
#include <mutex>
#include <tuple>

#include "advisor/runtime/cuda_driver.h"
#include "advisor/runtime/nvrtc_compiler.h"

namespace gpuscope::runtime {

namespace {

constexpr int kThreads = 256;
constexpr long long kMaxBlocks = 0x7fffffff;  // the grid's x limit
std::atomic<int64_t> compiled{0};

struct CacheKey {
  std::string expression;  // canonical
  DType dtype;
  CUcontext context;  // a module belongs to a context
  bool operator<(const CacheKey& o) const {
    return std::tie(expression, dtype, context) < std::tie(o.expression, o.dtype, o.context);
  }
};

struct Compiled {
  CUfunction vector, scalar, rows;
  std::vector<CUfunction> rows_grad;
  int arch;
};

std::mutex cache_mutex;
std::map<CacheKey, Compiled>& cache() {
  static std::map<CacheKey, Compiled> chains;
  return chains;
}

Result<Compiled> compileFor(const CudaDriver& cu, const ParsedExpr& expr, DType dtype) {
  CUdevice device;
  GPUSCOPE_RETURN_IF_ERROR(cu.check(cu.ctxGetDevice(&device), "cuCtxGetDevice"));
  int major = 0, minor = 0;
  cu.deviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device);
  cu.deviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device);
  const int arch = major * 10 + minor;
  Result<std::string> cubin = compileCuda(fusedKernelSource(expr, dtype), "gpuscope_fused.cu", arch, CodeKind::kCubin);
  if (!cubin) return cubin.status();
  CUmodule module;
  GPUSCOPE_RETURN_IF_ERROR(cu.check(cu.moduleLoadData(&module, cubin->data()), "cuModuleLoadData"));
  Compiled c{nullptr, nullptr, nullptr, {}, arch};
  GPUSCOPE_RETURN_IF_ERROR(
      cu.check(cu.moduleGetFunction(&c.vector, module, std::string(kVectorKernel).c_str()), "cuModuleGetFunction"));
  GPUSCOPE_RETURN_IF_ERROR(
      cu.check(cu.moduleGetFunction(&c.scalar, module, std::string(kScalarKernel).c_str()), "cuModuleGetFunction"));
  GPUSCOPE_RETURN_IF_ERROR(
      cu.check(cu.moduleGetFunction(&c.rows, module, std::string(kRowsKernel).c_str()), "cuModuleGetFunction"));
  c.rows_grad.resize(expr.inputs.size());
  for (size_t i = 0; i < expr.inputs.size(); ++i) {
    GPUSCOPE_RETURN_IF_ERROR(
        cu.check(cu.moduleGetFunction(&c.rows_grad[i], module, rowsGradKernel(static_cast<int>(i)).c_str()),
                 "cuModuleGetFunction"));
  }
  ++compiled;
  return c;
}

// Blocks for the row kernels, a block per row: their grid-stride loops take rows past the limit.
unsigned rowBlocks(int64_t rows) { return static_cast<unsigned>(std::min<int64_t>(rows, 65535)); }

// Whether every pointer allows the 16-byte vector loads.
bool aligned16(const std::vector<CUdeviceptr>& pointers) {
  return std::all_of(pointers.begin(), pointers.end(), [](CUdeviceptr p) { return p % 16 == 0; });
}

}  // namespace

int64_t fusedChainsCompiled() { return compiled.load(); }

Result<FusedChain> FusedChain::create(std::string_view expression, DType dtype) {
  Result<ParsedExpr> expr = parseExpr(expression);
  if (!expr) return expr.status();
  Result<const CudaDriver*> cu = cudaDriver();
  if (!cu) return cu.status();
  GPUSCOPE_RETURN_IF_ERROR(ensureContext(**cu));
  CUcontext context = nullptr;
  (*cu)->ctxGetCurrent(&context);
  const CacheKey key{expr->canonical, dtype, context};
  std::lock_guard lock(cache_mutex);
  auto it = cache().find(key);
  if (it == cache().end()) {
    Result<Compiled> c = compileFor(**cu, *expr, dtype);
    if (!c) return c.status();
    it = cache().emplace(key, *c).first;
  }
  FusedChain chain;
  chain.vector_ = it->second.vector;
  chain.scalar_ = it->second.scalar;
  chain.rows_ = it->second.rows;
  chain.rows_grad_ = it->second.rows_grad;
  chain.inputs_ = expr->inputs.size();
  chain.dtype_ = dtype;
  chain.vectors_per_thread_ = vectorsPerThread(*expr);
  return chain;
}

Status FusedChain::checkInputs(const std::vector<CUdeviceptr>& inputs) const {
  if (inputs.size() == inputs_) return Status::ok();
  return Status(ErrorKind::kUsage,
                "the chain takes " + std::to_string(inputs_) + " inputs, not " + std::to_string(inputs.size()));
}

Status FusedChain::launch(const std::vector<CUdeviceptr>& inputs, CUdeviceptr out, int64_t n, CUstream stream) const {
  GPUSCOPE_RETURN_IF_ERROR(checkInputs(inputs));
  if (n <= 0) return Status::ok();
  const CudaDriver& cu = *cudaDriver().value();
  const bool aligned = out % 16 == 0 && aligned16(inputs);
  const int64_t width = vectorWidth(dtype_);
  long long vectors = aligned ? n / width : 0;
  long long begin = vectors * width, end = n;
  std::vector<CUdeviceptr> pointers(inputs);
  pointers.push_back(out);
  std::vector<void*> args;
  for (CUdeviceptr& p : pointers) args.push_back(&p);
  // A grid that covers the data; the kernels' grid-stride loops only matter past the grid's limit.
  auto blocks = [&](long long items) {
    return static_cast<unsigned>(std::clamp<long long>((items + kThreads - 1) / kThreads, 1, kMaxBlocks));
  };
  if (vectors > 0) {
    args.push_back(&vectors);
    GPUSCOPE_RETURN_IF_ERROR(
        cu.check(cu.launchKernel(vector_, blocks((vectors + vectors_per_thread_ - 1) / vectors_per_thread_), 1, 1,
                                 kThreads, 1, 1, 0, stream, args.data(), nullptr),
                 "cuLaunchKernel"));
    args.pop_back();
  }
  if (begin < end) {
    args.push_back(&begin);
    args.push_back(&end);
    GPUSCOPE_RETURN_IF_ERROR(
        cu.check(cu.launchKernel(scalar_, blocks(end - begin), 1, 1, kThreads, 1, 1, 0, stream, args.data(), nullptr),
                 "cuLaunchKernel"));
  }
  return Status::ok();
}

Status FusedChain::reduceRows(const std::vector<CUdeviceptr>& inputs, CUdeviceptr out, int64_t rows, int64_t cols,
                              Reduction op, CUstream stream) const {
  GPUSCOPE_RETURN_IF_ERROR(checkInputs(inputs));
  if (rows <= 0 || cols <= 0) return Status(ErrorKind::kUsage, "a row reduction needs rows and columns");
  const CudaDriver& cu = *cudaDriver().value();
  int vectorized = cols % vectorWidth(dtype_) == 0 && aligned16(inputs);
  std::vector<CUdeviceptr> pointers(inputs);
  pointers.push_back(out);
  std::vector<void*> args;
  for (CUdeviceptr& p : pointers) args.push_back(&p);
  long long r = rows, c = cols;
  int kind = static_cast<int>(op);
  for (void* a :
       {static_cast<void*>(&r), static_cast<void*>(&c), static_cast<void*>(&kind), static_cast<void*>(&vectorized)}) {
    args.push_back(a);
  }
  return cu.check(cu.launchKernel(rows_, rowBlocks(rows), 1, 1, kThreads, 1, 1, 0, stream, args.data(), nullptr),
                  "cuLaunchKernel");
}

Status FusedChain::reduceRowsBackward(const std::vector<CUdeviceptr>& inputs, CUdeviceptr y, CUdeviceptr dy,
                                      const std::vector<CUdeviceptr>& grad_inputs, int64_t rows, int64_t cols,
                                      Reduction op, CUstream stream) const {
  GPUSCOPE_RETURN_IF_ERROR(checkInputs(inputs));
  if (grad_inputs.size() != inputs_) {
    return Status(ErrorKind::kUsage, "one gradient per input (0 to skip one): " + std::to_string(inputs_) +
                                         " expected, " + std::to_string(grad_inputs.size()) + " given");
  }
  if (rows <= 0 || cols <= 0) return Status(ErrorKind::kUsage, "a row reduction needs rows and columns");
  const CudaDriver& cu = *cudaDriver().value();
  std::vector<CUdeviceptr> pointers(inputs);
  pointers.insert(pointers.end(), {y, dy, 0});
  long long r = rows, c = cols;
  int kind = static_cast<int>(op);
  std::vector<void*> args;
  for (CUdeviceptr& p : pointers) args.push_back(&p);
  for (void* a : {static_cast<void*>(&r), static_cast<void*>(&c), static_cast<void*>(&kind)}) args.push_back(a);
  const unsigned blocks = rowBlocks(rows);
  for (size_t i = 0; i < inputs_; ++i) {
    if (grad_inputs[i] == 0) continue;
    pointers.back() = grad_inputs[i];
    GPUSCOPE_RETURN_IF_ERROR(
        cu.check(cu.launchKernel(rows_grad_[i], blocks, 1, 1, kThreads, 1, 1, 0, stream, args.data(), nullptr),
                 "cuLaunchKernel"));
  }
  return Status::ok();
}

}  // namespace gpuscope::runtime
