// The same binning with its buffers made once: the frame's vectors live for the whole run, and Thrust's
// temporary storage (the sort's and the reduction's) comes from a cache that keeps what was freed, as in
// Thrust's custom_temporary_allocation example.
#include <chrono>
#include <cstdio>
#include <map>

#include <thrust/device_vector.h>
#include <thrust/execution_policy.h>
#include <thrust/fill.h>
#include <thrust/iterator/constant_iterator.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/reduce.h>
#include <thrust/sequence.h>
#include <thrust/sort.h>
#include <thrust/transform.h>

constexpr int kGrid = 256;

// Hands back blocks freed earlier, by size; frees them all at exit.
struct CachedAllocator {
  typedef char value_type;
  std::multimap<std::ptrdiff_t, char*> free_blocks;
  std::map<char*, std::ptrdiff_t> used_blocks;

  char* allocate(std::ptrdiff_t bytes) {
    auto found = free_blocks.find(bytes);
    char* block;
    if (found != free_blocks.end()) {
      block = found->second;
      free_blocks.erase(found);
    } else {
      cudaMalloc(&block, bytes);
    }
    used_blocks.insert({block, bytes});
    return block;
  }
  void deallocate(char* block, size_t) {
    auto used = used_blocks.find(block);
    free_blocks.insert({used->second, block});
    used_blocks.erase(used);
  }
  ~CachedAllocator() {
    for (auto& [bytes, block] : free_blocks) cudaFree(block);
    for (auto& [block, bytes] : used_blocks) cudaFree(block);
  }
};

struct CellOf {
  __host__ __device__ int operator()(const float2& p) const {
    int cx = min(kGrid - 1, max(0, int(p.x * kGrid)));
    int cy = min(kGrid - 1, max(0, int(p.y * kGrid)));
    return cy * kGrid + cx;
  }
};

struct Scatter {
  __host__ __device__ float2 operator()(int i) const {
    unsigned h = i * 2654435761u;
    return make_float2((h & 0xffff) / 65536.0f, (h >> 16) / 65536.0f);
  }
};

__global__ void move(float2* pos, const int* cell_of, const int* occupancy, float dt, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float s = dt * (1.0f + 0.01f * occupancy[cell_of[i]]);
  float2 p = pos[i];
  p.x += s * (p.y - 0.5f);
  p.y -= s * (p.x - 0.5f);
  p.x -= floorf(p.x);
  p.y -= floorf(p.y);
  pos[i] = p;
}

__global__ void scatter_counts(const int* cells, const int* counts, int runs, int* occupancy) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < runs) occupancy[cells[i]] = counts[i];
}

struct Binning {
  thrust::device_vector<int> keys, order, cell_of, cells, counts, occupancy;
  CachedAllocator cache;

  explicit Binning(int n)
      : keys(n), order(n), cell_of(n), cells(kGrid * kGrid), counts(kGrid * kGrid), occupancy(kGrid * kGrid) {}

  int frame(thrust::device_vector<float2>& pos) {
    const int n = pos.size();
    auto policy = thrust::cuda::par(cache);
    thrust::transform(policy, pos.begin(), pos.end(), keys.begin(), CellOf());
    thrust::sequence(policy, order.begin(), order.end());
    thrust::copy(policy, keys.begin(), keys.end(), cell_of.begin());
    thrust::sort_by_key(policy, keys.begin(), keys.end(), order.begin());
    auto ends = thrust::reduce_by_key(policy, keys.begin(), keys.end(), thrust::constant_iterator<int>(1),
                                      cells.begin(), counts.begin());
    int runs = ends.first - cells.begin();
    thrust::fill(policy, occupancy.begin(), occupancy.end(), 0);
    scatter_counts<<<(runs + 255) / 256, 256>>>(thrust::raw_pointer_cast(cells.data()),
                                                thrust::raw_pointer_cast(counts.data()), runs,
                                                thrust::raw_pointer_cast(occupancy.data()));
    move<<<(n + 255) / 256, 256>>>(thrust::raw_pointer_cast(pos.data()), thrust::raw_pointer_cast(cell_of.data()),
                                   thrust::raw_pointer_cast(occupancy.data()), 1e-3f, n);
    return runs;
  }
};

int main() {
  const int n = 1 << 20;
  thrust::device_vector<float2> pos(n);
  thrust::transform(thrust::counting_iterator<int>(0), thrust::counting_iterator<int>(n), pos.begin(), Scatter());
  Binning binning(n);
  int occupied = 0;
  for (int i = 0; i < 10; ++i) occupied = binning.frame(pos);
  cudaDeviceSynchronize();
  const int frames = 300;
  auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < frames; ++i) occupied = binning.frame(pos);
  cudaDeviceSynchronize();
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  std::printf("occupied cells %d\n", occupied);
  std::printf("%.3f ms/step\n", ms / frames);
  return 0;
}
