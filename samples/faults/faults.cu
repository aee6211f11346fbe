// What a profiler must survive: a program that aborts, segfaults, leaves with _exit, forks and execs, runs 16
// threads on 8 streams, or runs out of GPU memory. Each mode first does some GPU work (kernels on a stream,
// synchronised), so a trace has something to keep, then does what its name says.
//   faults abort | segv | exit | threads | oom | fork | child
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "../common/sample_check.h"

namespace {

__global__ void bump(unsigned long long* counter) { atomicAdd(counter, 1ULL); }

// `launches` kernels on a stream of its own, then the count the device made; about `seconds` long, so the
// collector's periodic flush has run before a mode that gives it no final flush (segv, _exit).
unsigned long long work(int launches, double seconds = 0) {
  unsigned long long* counter = nullptr;
  cudaStream_t stream;
  SAMPLE_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  SAMPLE_CUDA(cudaMallocAsync(&counter, sizeof *counter, stream));
  SAMPLE_CUDA(cudaMemsetAsync(counter, 0, sizeof *counter, stream));
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  int done = 0;
  do {
    for (int i = 0; i < launches; ++i) bump<<<1, 1, 0, stream>>>(counter);
    done += launches;
    SAMPLE_CUDA(cudaStreamSynchronize(stream));
  } while (std::chrono::steady_clock::now() < until);
  unsigned long long total = 0;
  SAMPLE_CUDA(cudaMemcpyAsync(&total, counter, sizeof total, cudaMemcpyDeviceToHost, stream));
  SAMPLE_CUDA(cudaFreeAsync(counter, stream));
  SAMPLE_CUDA(cudaStreamSynchronize(stream));
  SAMPLE_CUDA(cudaStreamDestroy(stream));
  return total == static_cast<unsigned long long>(done) ? total : 0;
}

// 16 host threads, two per stream on 8 streams, 5,000 launches each: 80,000 kernels.
int threads() {
  constexpr int kThreads = 16, kStreams = 8, kEach = 5000;
  unsigned long long* counter = nullptr;
  SAMPLE_CUDA(cudaMalloc(&counter, sizeof *counter));
  SAMPLE_CUDA(cudaMemset(counter, 0, sizeof *counter));
  std::vector<cudaStream_t> streams(kStreams);
  for (auto& s : streams) SAMPLE_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  std::vector<std::thread> pool;
  for (int t = 0; t < kThreads; ++t) {
    pool.emplace_back([&, t] {
      for (int i = 0; i < kEach; ++i) bump<<<1, 1, 0, streams[t % kStreams]>>>(counter);
    });
  }
  for (auto& t : pool) t.join();
  SAMPLE_CUDA(cudaDeviceSynchronize());
  unsigned long long total = 0;
  SAMPLE_CUDA(cudaMemcpy(&total, counter, sizeof total, cudaMemcpyDeviceToHost));
  for (auto& s : streams) SAMPLE_CUDA(cudaStreamDestroy(s));
  SAMPLE_CUDA(cudaFree(counter));
  return sampleResult("faults threads", total == kThreads * kEach, "80,000 kernels from 16 threads on 8 streams");
}

// Allocates 1 GiB blocks until cudaMalloc fails, as a program probing for its batch size does, then frees
// them and works on: the failure is the program's to handle, not the profiler's.
int oom() {
  std::vector<void*> blocks;
  for (;;) {
    void* p = nullptr;
    const cudaError_t err = cudaMalloc(&p, size_t{1} << 30);
    if (err != cudaSuccess) {
      (void)cudaGetLastError();  // clear it: out of memory is not sticky
      break;
    }
    blocks.push_back(p);
  }
  for (void* p : blocks) SAMPLE_CUDA(cudaFree(p));
  const bool ok = !blocks.empty() && work(1000) == 1000;
  std::printf("faults oom: %zu GiB allocated before cudaMalloc failed\n", blocks.size());
  return sampleResult("faults oom", ok, "out of memory, freed, worked on");
}

// Forks after CUDA is initialised; the child execs this program again (mode child), which does its own GPU
// work; the parent waits and passes the child's status on.
int forkExec(const char* self) {
  if (work(1000) != 1000) return 1;
  const pid_t child = fork();
  if (child == 0) {
    execl(self, self, "child", static_cast<char*>(nullptr));
    _exit(127);
  }
  int status = 0;
  waitpid(child, &status, 0);
  const bool ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  return sampleResult("faults fork", ok, "the exec'd child's work done");
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  if (mode == "threads") return threads();
  if (mode == "oom") return oom();
  if (mode == "fork") return forkExec(argv[0]);
  if (mode == "child") return sampleResult("faults child", work(2000) == 2000, "2,000 kernels");
  if (mode == "abort" || mode == "segv" || mode == "exit") {
    if (work(1000, 2.5) == 0) return 1;
    std::printf("faults %s: work done, now ending\n", mode.c_str());
    std::fflush(stdout);
    if (mode == "abort") std::abort();
    if (mode == "exit") _exit(7);
    volatile int* nowhere = nullptr;
    *nowhere = 1;  // segv
  }
  std::fprintf(stderr, "usage: faults abort|segv|exit|threads|oom|fork\n");
  return 2;
}
