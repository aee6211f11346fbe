// The fixture traces recorded on an H100 (tests/fixtures/README.md) hold what their programs did; every
// later CPU test of the analyzer, advisor and GUI builds on them, so their contents are pinned here.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "formats/chrome_export.h"
#include "tests/support/sample_trace.h"

namespace gpuscope {
namespace {

int64_t query(const std::string& name, const std::string& sql) {
  Result<TraceReader> r = TraceReader::open(testing::fixturePath(name));
  EXPECT_TRUE(r) << (r ? "" : r.status().message());
  if (!r) return -1;
  Result<int64_t> v = r->database().queryInt(sql);
  EXPECT_TRUE(v) << sql;
  return v ? *v : -1;
}

const char* const kFixtures[] = {"elementwise_chain.gpuscope",
                                 "launch_bound.gpuscope",
                                 "pageable_sync.gpuscope",
                                 "memory_leak.gpuscope",
                                 "multi_stream.gpuscope",
                                 "graph_replay.gpuscope",
                                 "nvtx_training.gpuscope",
                                 "pytorch_launch_loop.gpuscope",
                                 "pytorch_gpt2_step.gpuscope",
                                 "pytorch_resnet_step.gpuscope",
                                 "torch_kernels.gpuscope",
                                 "cupy_kernels.gpuscope",
                                 "jax_kernels.gpuscope",
                                 "advisor_naive.gpuscope",
                                 "advisor_tuned.gpuscope",
                                 "advisor_memory_activations.gpuscope",
                                 "advisor_memory_optimizer.gpuscope",
                                 "memory_pool.gpuscope"};

TEST(Fixtures, EachWasRecordedOnAnH100AndExportsAsValidJson) {
  for (const char* name : kFixtures) {
    SCOPED_TRACE(name);
    // One device row per process (torch.compile's compile worker is a second CUDA process).
    const int64_t sessions = query(name, "SELECT count(*) FROM session");
    EXPECT_GE(sessions, 1);
    EXPECT_EQ(query(name, "SELECT count(*) FROM device WHERE name LIKE 'NVIDIA H100%' AND compute_major = 9"),
              sessions);
    EXPECT_EQ(query(name, "SELECT count(*) FROM session WHERE end_ns > start_ns"), sessions);
    // Every kernel's launch was recorded: the flows of the export can all be drawn.
    EXPECT_EQ(query(name,
                    "SELECT count(*) FROM kernel k LEFT JOIN api_call a USING (session_id, correlation_id) "
                    "WHERE a.id IS NULL"),
              0);
    EXPECT_EQ(query(name, "SELECT count(*) FROM data_quality WHERE severity >= 1"), 0);
    Result<TraceReader> reader = TraceReader::open(testing::fixturePath(name));
    ASSERT_TRUE(reader);
    JsonWriter json;
    ASSERT_TRUE(writeChromeTrace(*reader, json));
    EXPECT_TRUE(nlohmann::json::accept(json.text()));
  }
}

TEST(Fixtures, CudaSamplesHoldWhatTheyDid) {
  for (const char* k : {"scale", "add_bias", "relu", "multiply"}) {
    EXPECT_EQ(query("elementwise_chain.gpuscope",
                    std::string("SELECT count(*) FROM kernel_view WHERE name_text LIKE '") + k + "(%'"),
              50)
        << k;
  }
  EXPECT_EQ(query("launch_bound.gpuscope", "SELECT count(*) FROM kernel_view WHERE name_text = 'tiny(float*)'"), 20000);
  EXPECT_EQ(query("pageable_sync.gpuscope", "SELECT count(*) FROM memcpy WHERE copy_kind = 1 AND src_kind = 1"), 40);
  EXPECT_EQ(query("memory_leak.gpuscope", "SELECT count(*) FROM memory_event WHERE op = 1 AND bytes = 8388608"), 64);
  EXPECT_EQ(query("multi_stream.gpuscope", "SELECT count(DISTINCT stream_id) FROM kernel"), 4);
  EXPECT_EQ(query("graph_replay.gpuscope", "SELECT count(*) FROM kernel WHERE graph_id IS NOT NULL"), 600);
  EXPECT_EQ(query("nvtx_training.gpuscope", "SELECT count(*) FROM nvtx_view WHERE name_text = 'backward'"), 20);
  // Each forward range lies inside its step range, on the same thread.
  EXPECT_EQ(query("nvtx_training.gpuscope",
                  "SELECT count(*) FROM nvtx_view f JOIN nvtx_view s ON s.name_text LIKE 'step %' AND "
                  "s.thread_id = f.thread_id AND s.start_ns <= f.start_ns AND f.end_ns <= s.end_ns "
                  "WHERE f.name_text = 'forward'"),
            20);
}

TEST(Fixtures, PyTorchRunsCarryPyTorchAndLibraryKernels) {
  EXPECT_EQ(query("pytorch_launch_loop.gpuscope", "SELECT count(*) FROM kernel"), 8001);
  EXPECT_GT(query("pytorch_gpt2_step.gpuscope", "SELECT count(*) FROM kernel_view WHERE name_text LIKE '%layer_norm%'"),
            0);
  EXPECT_GT(query("pytorch_gpt2_step.gpuscope", "SELECT count(*) FROM kernel_view WHERE name_text LIKE 'nvjet%'"), 0);
  EXPECT_GT(query("pytorch_gpt2_step.gpuscope", "SELECT count(*) FROM memory_event WHERE memory_kind = 3"), 0);
  // One warm-up and four measured steps, each with its forward, backward and optimizer ranges.
  for (const char* range : {"step", "forward", "backward", "optimizer"}) {
    EXPECT_EQ(query("pytorch_gpt2_step.gpuscope",
                    std::string("SELECT count(*) FROM nvtx_view WHERE name_text = '") + range + "'"),
              5);
  }
  EXPECT_GT(query("pytorch_resnet_step.gpuscope", "SELECT count(*) FROM kernel_view WHERE name_text LIKE '%fprop%'"),
            0);
}

TEST(Fixtures, KernelZooRunsLabelEachKindWithAnNvtxRange) {
  EXPECT_EQ(query("torch_kernels.gpuscope", "SELECT count(DISTINCT name_text) FROM nvtx_view"), 15);
  EXPECT_EQ(query("cupy_kernels.gpuscope", "SELECT count(*) FROM kernel_view WHERE name_text = 'user_axpy'"), 1);
  EXPECT_GT(query("jax_kernels.gpuscope", "SELECT count(*) FROM kernel_view WHERE name_text LIKE '%fusion%'"), 0);
}

TEST(Fixtures, AdvisorCasesHoldTheirProblemsAndFixes) {
  EXPECT_EQ(query("advisor_naive.gpuscope", "SELECT count(*) FROM nvtx_view WHERE name_text = 'step'"), 12);
  EXPECT_GT(query("advisor_naive.gpuscope", "SELECT count(*) FROM kernel_view WHERE name_text LIKE '%simt_sgemm%'"), 0);
  EXPECT_GT(query("advisor_naive.gpuscope", "SELECT count(*) FROM memcpy WHERE copy_kind = 1 AND src_kind = 1"), 0);
  // Tuned: each step is one replay of a CUDA graph holding Triton kernels; the batches come from pinned memory.
  EXPECT_GT(query("advisor_tuned.gpuscope", "SELECT count(*) FROM kernel WHERE graph_id IS NOT NULL"), 1000);
  EXPECT_EQ(query("advisor_tuned.gpuscope", "SELECT count(DISTINCT graph_id) FROM kernel WHERE graph_id IS NOT NULL"),
            1);
  EXPECT_GT(query("advisor_tuned.gpuscope", "SELECT count(*) FROM kernel_view WHERE name_text LIKE 'triton_%'"), 0);
  // 12 steps and the capture's first batch, two tensors each.
  EXPECT_EQ(query("advisor_tuned.gpuscope", "SELECT count(*) FROM memcpy WHERE bytes = 32768 AND src_kind = 2"), 26);
  // Without the caching allocator every tensor is a cudaMalloc: hundreds per step.
  EXPECT_GT(query("advisor_memory_activations.gpuscope", "SELECT count(*) FROM memory_event WHERE op = 1"), 1000);
  EXPECT_EQ(query("serial_copies.gpuscope", "SELECT count(*) FROM memcpy WHERE src_kind = 2 OR dst_kind = 2"), 96);
  EXPECT_EQ(query("serial_copies.gpuscope", "SELECT count(DISTINCT stream_id) FROM kernel"), 1);
  // The pool's events carry the sizes the sample printed (samples/memory_pool/README.md).
  EXPECT_EQ(query("memory_pool.gpuscope", "SELECT count(*) FROM memory_event WHERE op = 1 AND pool_address != 0"), 40);
  EXPECT_EQ(query("memory_pool.gpuscope",
                  "SELECT count(*) FROM memory_pool_event WHERE size_bytes = 134217728 AND utilized_bytes = 67108864"),
            1);
}

}  // namespace
}  // namespace gpuscope

namespace gpuscope {
namespace {

// `record --torch` on a GPT-2 training loop: module ranges on both threads, the optimizer's, the allocator's
// tensor events and what the bridge knew of each tensor.
TEST(Fixtures, TorchBridgeRunHoldsModulesAllocatorEventsAndRoles) {
  const std::string f = "pytorch_bridge_train.gpuscope";
  auto ranges = [&](const std::string& name) {
    return query(f, "SELECT count(*) FROM nvtx_view WHERE name_text = '" + name + "'");
  };
  EXPECT_EQ(ranges("GPT2LMHeadModel (forward)"), 6);
  EXPECT_EQ(ranges("GPT2LMHeadModel.transformer.h.1.attn (backward)"), 6);
  EXPECT_EQ(ranges("GPT2LMHeadModel.transformer.wte (backward)"), 6);  // ended by its parameter's gradient
  EXPECT_EQ(ranges("optimizer.step (AdamW)"), 6);
  // Backward runs on autograd's thread, forward on the main one.
  EXPECT_EQ(query(f, "SELECT count(DISTINCT thread_id) FROM nvtx_view WHERE name_text LIKE '% (backward)'"), 1);
  EXPECT_NE(query(f, "SELECT thread_id FROM nvtx_view WHERE name_text = 'GPT2LMHeadModel (backward)' LIMIT 1"),
            query(f, "SELECT thread_id FROM nvtx_view WHERE name_text = 'GPT2LMHeadModel (forward)' LIMIT 1"));
  EXPECT_EQ(query(f, "SELECT count(*) FROM allocator_event WHERE action = 1"), 1233);
  EXPECT_EQ(query(f, "SELECT count(*) FROM allocator_event WHERE action = 4"), 25);
  EXPECT_EQ(query(f, "SELECT count(*) FROM tensor_role WHERE role = 1"), 28);   // parameters
  EXPECT_EQ(query(f, "SELECT count(*) FROM tensor_role WHERE role = 3"), 168);  // gradients, 6 steps
  EXPECT_EQ(query(f, "SELECT count(*) FROM tensor_role WHERE role = 4"), 56);   // Adam's two moments
  // Every parameter lies inside a tensor block the allocator handed out before the parameter was seen.
  EXPECT_EQ(query(f,
                  "SELECT count(*) FROM tensor_role r WHERE r.role = 1 AND EXISTS (SELECT 1 FROM allocator_event a "
                  "WHERE a.action = 1 AND r.address >= a.address AND r.address < a.address + a.bytes "
                  "AND a.timestamp_ns <= r.timestamp_ns)"),
            28);
}

}  // namespace
}  // namespace gpuscope
