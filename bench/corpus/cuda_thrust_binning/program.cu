// Particles in a periodic box, binned into grid cells every frame with Thrust: cell keys, a sort by key, a
// count per cell, then a move that reads each particle's cell occupancy. Written the way Thrust's examples
// read: the frame's vectors are made where they are needed.
#include <chrono>
#include <cstdio>

#include <thrust/device_vector.h>
#include <thrust/iterator/constant_iterator.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/reduce.h>
#include <thrust/sequence.h>
#include <thrust/sort.h>
#include <thrust/transform.h>

constexpr int kGrid = 256;

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
  // Crowded cells push their particles along a swirl; the box wraps around.
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

int frame(thrust::device_vector<float2>& pos) {
  const int n = pos.size();
  thrust::device_vector<int> keys(n), order(n);
  thrust::transform(pos.begin(), pos.end(), keys.begin(), CellOf());
  thrust::sequence(order.begin(), order.end());
  thrust::device_vector<int> cell_of = keys;
  thrust::sort_by_key(keys.begin(), keys.end(), order.begin());
  thrust::device_vector<int> cells(kGrid * kGrid), counts(kGrid * kGrid);
  auto ends = thrust::reduce_by_key(keys.begin(), keys.end(), thrust::constant_iterator<int>(1), cells.begin(),
                                    counts.begin());
  int runs = ends.first - cells.begin();
  thrust::device_vector<int> occupancy(kGrid * kGrid, 0);
  scatter_counts<<<(runs + 255) / 256, 256>>>(thrust::raw_pointer_cast(cells.data()),
                                              thrust::raw_pointer_cast(counts.data()), runs,
                                              thrust::raw_pointer_cast(occupancy.data()));
  move<<<(n + 255) / 256, 256>>>(thrust::raw_pointer_cast(pos.data()), thrust::raw_pointer_cast(cell_of.data()),
                                 thrust::raw_pointer_cast(occupancy.data()), 1e-3f, n);
  return runs;
}

int main() {
  const int n = 1 << 20;
  thrust::device_vector<float2> pos(n);
  thrust::transform(thrust::counting_iterator<int>(0), thrust::counting_iterator<int>(n), pos.begin(), Scatter());
  int occupied = 0;
  for (int i = 0; i < 10; ++i) occupied = frame(pos);
  cudaDeviceSynchronize();
  const int frames = 300;
  auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < frames; ++i) occupied = frame(pos);
  cudaDeviceSynchronize();
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  std::printf("occupied cells %d\n", occupied);
  std::printf("%.3f ms/step\n", ms / frames);
  return 0;
}
