// The kernel classifier on real kernel names, every one taken from a trace recorded on an H100
// (tests/fixtures/), and on the kernel-zoo fixtures, where each kernel ran inside an NVTX range that names
// the kind it should be given.
#include "analyzer/kernel_classifier.h"
#include "analyzer/kernel_names.h"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>

#include "analyzer/trace_data.h"
#include "tests/support/sample_trace.h"

namespace gpuscope::analysis {
namespace {

struct Case {
  const char* name;
  KernelClass cls;
  Precision precision;
};

using C = KernelClass;
using P = Precision;

// Names as the fixtures hold them (templated PyTorch names cut after the part that decides).
const Case kCases[] = {
    // PyTorch (ATen)
    {"void at::native::vectorized_elementwise_kernel<4, at::native::AUnaryFunctor<float, float, float, "
     "at::native::binary_internal::MulFunctor<float> >, std::array<char*, 2ul> >(int, ...)",
     C::kElementwise, P::kUnknown},
    {"void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, std::array<char*, 1ul> >(int, "
     "at::native::FillFunctor<float>, std::array<char*, 1ul>)",
     C::kElementwise, P::kUnknown},
    {"void at::native::vectorized_elementwise_kernel<8, at::native::bfloat16_copy_kernel_cuda(at::TensorIteratorBase&)"
     "::{lambda(float)#1}, std::array<char*, 2ul> >(int, ...)",
     C::kCopy, P::kUnknown},
    {"void at::native::(anonymous namespace)::CatArrayBatchedCopy<at::native::(anonymous namespace)::OpaqueType<2u>, "
     "unsigned int, 4, 64, 64>(...)",
     C::kCopy, P::kUnknown},
    {"void at::native::reduce_kernel<128, 4, at::native::ReduceOp<float, at::native::func_wrapper_t<float, "
     "at::native::sum_functor<float, float, float>::operator()(at::TensorIterator&)::{lambda(float, float)#1}>, "
     "unsigned int, float, 4, 4> >(...)",
     C::kReduction, P::kUnknown},
    {"void at::native::(anonymous namespace)::nll_loss_forward_reduce_cuda_kernel_2d<float, float, long>(float*, "
     "float*, float const*, long const*, float const*, bool, long, long, long, long)",
     C::kReduction, P::kUnknown},
    {"void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<float, float, false>(int, float, float "
     "const*, float const*, float const*, float*, float*, float*)",
     C::kNormalization, P::kUnknown},
    {"void at::native::(anonymous namespace)::GammaBetaBackwardCUDAKernelTemplate<float, float, 32u, 32u, 256u, false, "
     "true, false>(long, long, float const*, float const*, float const*, float const*, float*, float*)",
     C::kNormalization, P::kUnknown},
    {"void at::native::batch_norm_collect_statistics_channels_last_kernel<at::native::Var, c10::BFloat16, float, 4>("
     "c10::BFloat16 const*, float*, ...)",
     C::kNormalization, P::kUnknown},
    {"void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, float, float, float, at::native::(anonymous "
     "namespace)::LogSoftMaxForwardEpilogue>(float*, float const*, int)",
     C::kNormalization, P::kUnknown},
    {"void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous "
     "namespace)::TensorListMetadata<2>, at::native::(anonymous namespace)::TernaryOpScalarFunctor<float, 2, 2, 0>, "
     "at::native::LerpFunctor<float>, float>(...)",
     C::kOptimizer, P::kUnknown},
    {"void at::native::(anonymous namespace)::fused_dropout_kernel_vec<c10::BFloat16, float, unsigned int, 1, 8, "
     "bool>(...)",
     C::kElementwise, P::kUnknown},
    {"void at::native::(anonymous namespace)::distribution_elementwise_grid_stride_kernel<float, 4, "
     "at::native::templates::cuda::normal_and_transform<float, float, at::CUDAGeneratorImpl*>(...)",
     C::kElementwise, P::kUnknown},
    {"void at::native::vectorized_gather_kernel<16, long>(char*, char*, long*, int, long, long, long, long, bool)",
     C::kOther, P::kUnknown},
    {"void at::native::(anonymous namespace)::embedding_backward_feature_kernel<float, float, long>(long const*, float "
     "const*, float*, int, long, int)",
     C::kOther, P::kUnknown},
    {"void at_cuda_detail::cub::detail::radix_sort::DeviceRadixSortOnesweepKernel<...>(...)", C::kOther, P::kUnknown},
    {"at::cuda::philox::unpack_cudnn(at::PhiloxCudaState, long*, long*)", C::kOther, P::kUnknown},
    // cuBLAS / cuBLASLt
    {"nvjet_sm90_tst_192x128_64x5_1x2_h_bz_coopB_TNT", C::kGemm, P::kBf16},
    {"nvjet_sm90_hsh_128x64_64x8_1x2_h_bz_NNT", C::kGemm, P::kFp16},
    {"nvjet_sm90_qqtst_64x128_128x8_2x1_v_bz_algo2_TNN", C::kGemm, P::kFp8},
    {"nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_bias_NNT", C::kGemm, P::kBf16},
    {"sm80_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize128x64x8_stage3_warpsize2x2x1_ffma_aligna4_alignc4_execute_kernel__"
     "5x_cublas",
     C::kGemm, P::kFp32},
    {"sm90_xmma_gemm_f32f32_tf32f32_f32_nn_n_tilesize64x128x32_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_"
     "cublas",
     C::kGemm, P::kTf32},
    {"void cublasLt::splitKreduce_kernel<32, 16, int, float, __nv_bfloat16, float, __nv_bfloat16, false, float, "
     "__nv_bfloat16, __nv_bfloat16, true>(...)",
     C::kGemm, P::kBf16},
    // CUTLASS (PyTorch and XLA)
    {"void cutlass::Kernel2<cutlass_75_tensorop_bf16_s1688gemm_bf16_256x128_nn_align1>(cutlass_75_tensorop_bf16_"
     "s1688gemm_bf16_256x128_nn_align1::Params)",
     C::kGemm, P::kBf16},
    {"void cutlass::Kernel2<cutlass_80_tensorop_s1688gemm_64x64_32x6_nn_align1>(cutlass_80_tensorop_s1688gemm_64x64_"
     "32x6_nn_align1::Params)",
     C::kGemm, P::kTf32},
    // cuDNN
    {"sm90_xmma_fprop_implicit_gemm_bf16bf16_bf16f32_f32_nhwckrsc_nhwc_tilesize128x128x64_warpgroupsize1x1x1_g1_"
     "execute_"
     "segment_k_off_kernel__5x_cudnn",
     C::kConvolution, P::kBf16},
    {"sm90_xmma_wgrad_indexed_implicit_gemm_bf16bf16_bf16f32_f32_nhwckrsc_nhwc_tilesize128x64x64_warpgroupsize1x1x1_g1_"
     "execute_segment_k_off_kernel__5x_cudnn",
     C::kConvolution, P::kBf16},
    {"sm80_xmma_fprop_implicit_gemm_tf32f32_tf32f32_f32_nhwckrsc_nchw_tilesize128x64x32_stage5_warpsize2x2x1_g1_"
     "tensor16x8x8_execute_kernel__5x_cudnn",
     C::kConvolution, P::kTf32},
    {"void cudnn::engines_precompiled::nchwToNhwcKernel<float, float, float, false, true, (cudnnKernelDataType_t)2>("
     "cudnn::engines_precompiled::nchw2nhwc_params_t<float>, float const*, float*)",
     C::kCopy, P::kUnknown},
    {"cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16_knob_7_64x128x64_4x1x1_cga1x1x1_kernel0_0",
     C::kAttention, P::kUnknown},  // "f16" there means fp16 or bf16
    {"void cudnn::fusion::compute_dot_do_o_specialized<true, 64>(void const*, void const*, void*, void*, unsigned int, "
     "float const*)",
     C::kAttention, P::kUnknown},
    // Triton (torch.compile)
    {"triton_red_fused_add_mul_relu_sum_0", C::kReduction, P::kUnknown},
    {"triton_poi_fused_add_mul_0", C::kElementwise, P::kUnknown},
    {"triton_per_fused_native_layer_norm_0", C::kNormalization, P::kUnknown},
    {"triton_tem_fused_mm_0", C::kGemm, P::kUnknown},
    // XLA (JAX)
    {"loop_multiply_fusion", C::kElementwise, P::kUnknown},
    {"input_reduce_fusion", C::kReduction, P::kUnknown},
    {"input_concatenate_fusion", C::kCopy, P::kUnknown},
    {"gemm_fusion_dot_general_5", C::kGemm, P::kUnknown},
    {"wrapped_subtract", C::kElementwise, P::kUnknown},
    {"stream_executor::gpu::RedzoneAllocatorKernelImpl(unsigned char*, unsigned char, unsigned long, unsigned int*)",
     C::kOther, P::kUnknown},
    // CuPy and CUB
    {"cupy_multiply__float32_float_float32", C::kElementwise, P::kUnknown},
    {"cupy_copy__float32_float16", C::kCopy, P::kUnknown},
    {"void cub::CUB_300102_SM_750_800_860_890_900_1000_1200::detail::reduce::DeviceReduceKernel<...>(...)",
     C::kReduction, P::kUnknown},
    // NCCL (names as NCCL 2.2x prints them)
    {"ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)", C::kCommunication, P::kUnknown},
    {"ncclKernel_AllGather_RING_LL_Sum_int8_t(ncclWorkElem)", C::kCommunication, P::kUnknown},
    // Programs' own kernels, named in plain words (samples/)
    {"add_bias(float*, float, int)", C::kElementwise, P::kUnknown},
    {"scaleKernel(float*, float, int)", C::kElementwise, P::kUnknown},
    {"adam(float*, float const*, float*, float*, float, int)", C::kOptimizer, P::kUnknown},
    {"tiny(float*)", C::kOther, P::kUnknown},
};

TEST(KernelClassifier, RealKernelNames) {
  for (const Case& c : kCases) {
    SCOPED_TRACE(c.name);
    const KernelKind kind = classifyKernel(c.name);
    EXPECT_EQ(toString(kind.cls), toString(c.cls));
    EXPECT_EQ(toString(kind.precision), toString(c.precision));
  }
}

TEST(KernelClassifier, OnlyMemoryBoundClassesAreFusionCandidates) {
  EXPECT_TRUE(classifyKernel("loop_add_fusion").memoryBound());
  EXPECT_TRUE(classifyKernel("triton_red_fused_sum_0").memoryBound());
  EXPECT_TRUE(classifyKernel("void at::native::vectorized_layer_norm_kernel<float>(int)").memoryBound());
  EXPECT_FALSE(classifyKernel("nvjet_sm90_tst_64x32_64x16_1x2_h_bz_NTT").memoryBound());
  EXPECT_FALSE(classifyKernel("ncclDevKernel_AllReduce_Sum_f32_RING_LL").memoryBound());
  // A copy a program launches is folded into the kernels around it; cuDNN's transposes inside its convolution
  // call are the library's own, which nothing outside it fuses.
  EXPECT_TRUE(classifyKernel("void at::native::elementwise_kernel<direct_copy_kernel_cuda>(int)").fusable());
  const KernelKind transpose = classifyKernel(
      "void cudnn::engines_precompiled::nhwcToNchwKernel<float, float, float, true, false, (cudnnKernelDataType_t)0>("
      "cudnn::engines_precompiled::nhwc2nchw_params_t<float>, float const*, float*)");
  EXPECT_EQ(transpose.cls, KernelClass::kCopy);
  EXPECT_TRUE(transpose.inside_library);
  EXPECT_TRUE(transpose.layout_transform);
  EXPECT_FALSE(transpose.fusable());
  // cuDNN's LSTM (PyTorch's word_language_model example, H200): its pointwise and dropout kernels are the RNN
  // call's own; PyTorch's dropout is a program's kernel like any other.
  for (const char* rnn :
       {"void LSTM_elementWise_bp1<float, float, float>(int, int, float*, float*, float*, float*, float*, float*, "
        "float*, float*, float*, int, int, cudnnRNNClipMode_t, cudnnNanPropagation_t, float, float)",
        "void elemWiseRNNcell<float, float, float, (cudnnRNNMode_t)2, (cudnnRNNBiasMode_t)2>(int, int, int, int, "
        "int, bool, float const*, float const*, float const*, float const*, float const*, float*, float*, float*)",
        "void cudnn::dropout_apply_mask<float, float, 4>(float, float*, float const*, long, long, unsigned int "
        "const*)"}) {
    EXPECT_TRUE(classifyKernel(rnn).inside_library) << rnn;
    EXPECT_FALSE(classifyKernel(rnn).fusable()) << rnn;
  }
  EXPECT_TRUE(classifyKernel("void at::native::(anonymous namespace)::fused_dropout_kernel_vec<float, float, "
                             "unsigned int, 1, 4, bool>(at::cuda::detail::TensorInfo<float const, unsigned int>)")
                  .fusable());
}

// Names from a PyTorch Geometric GCN's eager step (H200, 2026-11-30): torch.compile fused its gathers and
// scatter_add with the edge weighting between them, and left index_add to ATen.
TEST(KernelClassifier, EagerGathersAndScattersAreFusableButNotIndexAdd) {
  const KernelKind gather = classifyKernel(
      "void at::native::vectorized_gather_kernel<16, long>(char*, char*, long*, "
      "int, long, long, long, long, bool)");
  EXPECT_EQ(gather.cls, KernelClass::kOther);
  EXPECT_TRUE(gather.indexed_access);
  EXPECT_TRUE(gather.fusable());
  EXPECT_TRUE(classifyKernel("void at::native::_scatter_gather_elementwise_kernel<128, 8, "
                             "at::native::_cuda_scatter_gather_internal_kernel<true, float, long>::operator()"
                             "<at::native::ReduceAdd>(at::TensorIterator&, long, long, long, "
                             "at::native::ReduceAdd const&)::{lambda(int)#1}>(int)")
                  .fusable());
  EXPECT_TRUE(classifyKernel("void at::native::index_elementwise_kernel<128, 4, at::native::gpu_index_kernel<"
                             "at::native::index_kernel_impl<at::native::OpaqueType<4> >>(int)")
                  .fusable());
  const KernelKind index_add = classifyKernel(
      "void at::native::indexFuncLargeIndex<float, long, unsigned int, 2, 2, -2, true, at::native::(anonymous "
      "namespace)::ReduceAdd>(at::cuda::detail::TensorInfo<float, unsigned int>, long, long, float)");
  EXPECT_EQ(index_add.cls, KernelClass::kOther);
  EXPECT_FALSE(index_add.fusable());
  // Another library's gather is its own: only PyTorch's eager ones are what torch.compile folds.
  EXPECT_FALSE(classifyKernel("loop_gather_fusion").fusable());
  EXPECT_FALSE(classifyKernel("void embedding_backward_feature_kernel<float, float, long>(long*)").fusable());
}

// What stands for a CUDA graph recorded as a whole is told from every real name: no kind of kernel, never fused.
TEST(KernelClassifier, AGraphRecordedAsAWholeIsNoKernelKind) {
  const KernelKind graph = classifyKernel(wholeGraphName(12));
  EXPECT_TRUE(graph.whole_graph);
  EXPECT_FALSE(graph.fusable());
  EXPECT_FALSE(graph.onCudaCores());
  for (const char* name : {"graph_node_kernel", "CUDA graph 12", "CUDA graph x (launched as a whole)",
                           "void cudaGraphKernel<float>(float*)", "CUDA graph  (launched as a whole)"}) {
    EXPECT_FALSE(classifyKernel(name).whole_graph) << name;
  }
}

TEST(KernelClassifier, EmptyAndOddNamesAreOther) {
  EXPECT_EQ(classifyKernel("").cls, KernelClass::kOther);
  EXPECT_EQ(classifyKernel("(").cls, KernelClass::kOther);
  EXPECT_EQ(classifyKernel("\xff\xfe").cls, KernelClass::kOther);
}

// In the zoo fixtures each kernel was launched inside an NVTX range named after its kind ("gemm_bf16",
// "reduction"): at least one kernel launched in each range gets that class (and precision).
void expectZooRangesClassified(const std::string& fixture) {
  Result<TraceData> loaded = loadTrace(testing::fixturePath(fixture));
  ASSERT_TRUE(loaded) << loaded.status().message();
  const TraceData& t = *loaded;
  std::map<int64_t, int64_t> launch_of;  // correlation id -> launch time (one process)
  for (size_t i = 0; i < t.api_calls.size(); ++i) launch_of[t.api_calls.correlation_id[i]] = t.api_calls.start_ns[i];
  int ranges_checked = 0;
  for (size_t r = 0; r < t.nvtx.size(); ++r) {
    const std::string label = t.text(t.nvtx.name[r]);
    const std::string cls = label.substr(0, label.find('_'));
    const std::string precision = label.find('_') == std::string::npos ? "" : label.substr(label.rfind('_') + 1);
    // Only the zoo's own labels: libraries add ranges of their own (CUB's "cub::DeviceReduce::Sum").
    static const std::set<std::string> kLabels = {"gemm",          "convolution", "elementwise", "reduction",
                                                  "normalisation", "copy",        "attention",   "optimizer"};
    if (t.nvtx.domain[r] != 0 || !kLabels.count(cls)) continue;
    bool found = false;
    for (size_t k = 0; k < t.kernels.size(); ++k) {
      if (t.kernels.session[k] != t.nvtx.session[r]) continue;
      const int64_t launch = launch_of[t.kernels.correlation_id[k]];
      if (launch < t.nvtx.start_ns[r] || launch > t.nvtx.end_ns[r]) continue;
      const KernelKind kind = classifyKernel(t.kernelName(k));
      const bool precision_ok = precision.empty() || toString(kind.precision) == precision ||
                                (precision == "fp32" && kind.cls == KernelClass::kConvolution);  // cuDNN uses tf32
      if (toString(kind.cls) == cls && precision_ok) found = true;
    }
    EXPECT_TRUE(found) << fixture << ": no kernel in range '" << label << "' was classified as it";
    ++ranges_checked;
  }
  EXPECT_GT(ranges_checked, 5);
}

TEST(KernelClassifier, TorchZooRangesGetTheirClasses) { expectZooRangesClassified("torch_kernels.gpuscope"); }
TEST(KernelClassifier, CupyZooRangesGetTheirClasses) { expectZooRangesClassified("cupy_kernels.gpuscope"); }

}  // namespace
}  // namespace gpuscope::analysis
