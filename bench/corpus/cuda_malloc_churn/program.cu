// A particle simulation step: each iteration allocates its scratch buffers, runs the force, integrate and
// energy kernels, reads the energy back, and frees the scratch.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <cuda_runtime.h>

#define CHECK(call)                                                                      \
  do {                                                                                   \
    cudaError_t err_ = (call);                                                           \
    if (err_ != cudaSuccess) {                                                           \
      std::fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(err_)); \
      std::exit(1);                                                                      \
    }                                                                                    \
  } while (0)

__global__ void forces(const float4* pos, float4* force, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float4 p = pos[i], f = make_float4(0, 0, 0, 0);
  for (int j = 0; j < 64; ++j) {  // neighbours in a fixed window
    float4 q = pos[(i + j + 1) % n];
    float dx = q.x - p.x, dy = q.y - p.y, dz = q.z - p.z;
    float inv = rsqrtf(dx * dx + dy * dy + dz * dz + 1e-3f);
    float s = inv * inv * inv;
    f.x += dx * s, f.y += dy * s, f.z += dz * s;
  }
  force[i] = f;
}

__global__ void integrate(float4* pos, float4* vel, const float4* force, float dt, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  vel[i].x += dt * force[i].x, vel[i].y += dt * force[i].y, vel[i].z += dt * force[i].z;
  pos[i].x += dt * vel[i].x, pos[i].y += dt * vel[i].y, pos[i].z += dt * vel[i].z;
}

__global__ void kinetic(const float4* vel, float* partial, int n) {
  __shared__ float sum[256];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float4 v = i < n ? vel[i] : make_float4(0, 0, 0, 0);
  sum[threadIdx.x] = 0.5f * (v.x * v.x + v.y * v.y + v.z * v.z);
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) sum[threadIdx.x] += sum[threadIdx.x + s];
    __syncthreads();
  }
  if (threadIdx.x == 0) partial[blockIdx.x] = sum[0];
}

int main() {
  const int n = 1 << 18, threads = 256, blocks = (n + threads - 1) / threads;
  std::vector<float4> host(n);
  for (int i = 0; i < n; ++i) host[i] = make_float4(i % 64, (i / 64) % 64, i / 4096, 0);
  float4 *pos, *vel;
  CHECK(cudaMalloc(&pos, n * sizeof(float4)));
  CHECK(cudaMalloc(&vel, n * sizeof(float4)));
  CHECK(cudaMemcpy(pos, host.data(), n * sizeof(float4), cudaMemcpyHostToDevice));
  CHECK(cudaMemset(vel, 0, n * sizeof(float4)));
  std::vector<float> partial_host(blocks);
  double energy = 0;
  auto step = [&] {
    float4* force;
    float* partial;
    CHECK(cudaMalloc(&force, n * sizeof(float4)));
    CHECK(cudaMalloc(&partial, blocks * sizeof(float)));
    forces<<<blocks, threads>>>(pos, force, n);
    integrate<<<blocks, threads>>>(pos, vel, force, 1e-4f, n);
    kinetic<<<blocks, threads>>>(vel, partial, n);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(partial_host.data(), partial, blocks * sizeof(float), cudaMemcpyDeviceToHost));
    energy = 0;
    for (float p : partial_host) energy += p;
    CHECK(cudaFree(partial));
    CHECK(cudaFree(force));
  };
  for (int i = 0; i < 10; ++i) step();
  CHECK(cudaDeviceSynchronize());
  const int timed = 300;
  auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < timed; ++i) step();
  CHECK(cudaDeviceSynchronize());
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  std::printf("kinetic energy %.6e\n", energy);
  std::printf("%.3f ms/step\n", ms / timed);
  CHECK(cudaFree(pos));
  CHECK(cudaFree(vel));
  return 0;
}
