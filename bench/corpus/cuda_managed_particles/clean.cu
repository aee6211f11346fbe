// The same particle update with its unified memory placed where it is used, as the guides on cudaMemAdvise and
// cudaMemPrefetchAsync show it: the particles move to the GPU once and stay there (the energy is summed on the
// GPU), and the forces, written by the host every frame, stay in host memory where the GPU reads them directly.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include <cuda_runtime.h>

#define CHECK(call)                                                                      \
  do {                                                                                   \
    cudaError_t err_ = (call);                                                           \
    if (err_ != cudaSuccess) {                                                           \
      std::fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(err_)); \
      std::exit(1);                                                                      \
    }                                                                                    \
  } while (0)

struct Particle {
  float x, y, z, vx, vy, vz;
};

__global__ void sample_energy(const Particle* p, int n, int stride, double* energy) {
  double e = 0.0;
  for (int i = (blockIdx.x * blockDim.x + threadIdx.x) * stride; i < n; i += blockDim.x * gridDim.x * stride) {
    const Particle& q = p[i];
    e += 0.5 * (q.vx * q.vx + q.vy * q.vy + q.vz * q.vz);
  }
  atomicAdd(energy, e);
}

__global__ void integrate(Particle* p, const float* force, int n, float dt) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
    Particle q = p[i];
    q.vx += force[3 * i + 0] * dt;
    q.vy += (force[3 * i + 1] - 9.81f) * dt;
    q.vz += force[3 * i + 2] * dt;
    q.x += q.vx * dt, q.y += q.vy * dt, q.z += q.vz * dt;
    if (q.y < 0.0f) q.y = -q.y, q.vy = -0.8f * q.vy;  // bounce off the floor
    p[i] = q;
  }
}

int main() {
  const int n = 4 << 20;  // 4M particles: 96 MiB of state, 48 MiB of forces
  const float dt = 1e-3f;
  Particle* particles;
  float* force;
  CHECK(cudaMallocManaged(&particles, n * sizeof(Particle)));
  CHECK(cudaMallocManaged(&force, 3 * size_t(n) * sizeof(float)));
  for (int i = 0; i < n; ++i) particles[i] = {float(i % 1024), 10.0f + float(i % 7), float(i / 1024), 0, 0, 0};

  int device = 0, sms = 0;
  CHECK(cudaGetDevice(&device));
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  const cudaMemLocation gpu{cudaMemLocationTypeDevice, device}, cpu{cudaMemLocationTypeHost, 0};
  const size_t force_bytes = 3 * size_t(n) * sizeof(float);
  CHECK(cudaMemAdvise(force, force_bytes, cudaMemAdviseSetPreferredLocation, cpu));
  CHECK(cudaMemAdvise(force, force_bytes, cudaMemAdviseSetAccessedBy, gpu));
  CHECK(cudaMemPrefetchAsync(particles, n * sizeof(Particle), gpu, 0, 0));
  double* energy_sum;
  CHECK(cudaMallocManaged(&energy_sum, sizeof(double)));

  auto frame = [&](int f) {
    float gust = std::sin(0.1f * f);  // this frame's wind
    for (int i = 0; i < n; ++i) {
      force[3 * i + 0] = gust * float(i % 13) * 0.01f;
      force[3 * i + 1] = 0.0f;
      force[3 * i + 2] = gust * float(i % 5) * 0.02f;
    }
    integrate<<<sms * 8, 256>>>(particles, force, n, dt);
    CHECK(cudaGetLastError());
    *energy_sum = 0.0;
    sample_energy<<<sms * 4, 256>>>(particles, n, 64, energy_sum);  // a sample of the particles is enough for the log
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    return *energy_sum;
  };

  const int warmup = 3, frames = 30;
  double energy = 0.0;
  for (int f = 0; f < warmup; ++f) energy = frame(f);
  auto start = std::chrono::steady_clock::now();
  for (int f = warmup; f < warmup + frames; ++f) energy = frame(f);
  auto elapsed = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  std::printf("sampled kinetic energy %.3f\n", energy);
  std::printf("%.3f ms/step\n", elapsed / frames);
  CHECK(cudaFree(particles));
  CHECK(cudaFree(force));
  CHECK(cudaFree(energy_sum));
  return 0;
}
