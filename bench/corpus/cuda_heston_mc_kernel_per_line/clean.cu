// Prices an arithmetic-average Asian call under the Heston stochastic-volatility model by Monte Carlo: 8M paths,
// 252 daily steps over one year, log-Euler for the price and Euler with absorption at zero for the variance.
// Ported from the desk's NumPy prototype, whose lines one thread per path runs step after step in registers:
//
//   z1, z2 = rng.standard_normal((2, n))
//   z2 = rho * z1 + sqrt(1 - rho**2) * z2
//   S *= exp((r - 0.5 * V) * dt + sqrt(V * dt) * z1)
//   V = maximum(V + kappa * (theta - V) * dt + xi * sqrt(V * dt) * z2, 0)
//   A += S
//
// The normals come from counter-based Philox keyed on (path, step), so a path's draws do not depend on how the
// kernels are launched. The book is repriced as the spot ticks; one pricing is one step of the clock.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include <cuda_runtime.h>
#include <curand_kernel.h>

#define CHECK(call)                                                                      \
  do {                                                                                   \
    cudaError_t err_ = (call);                                                           \
    if (err_ != cudaSuccess) {                                                           \
      std::fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(err_)); \
      std::exit(1);                                                                      \
    }                                                                                    \
  } while (0)

constexpr int kPaths = 1 << 23;
constexpr int kSteps = 252;
constexpr int kThreads = 256;
constexpr unsigned long long kSeed = 20261203ull;

struct Heston {
  float spot, v0, kappa, theta, xi, rho, rate, maturity, strike;
};

// One thread per path: the prototype's five lines, step after step, in registers. The draws are drawNormals'
// (Philox keyed on path and step), so each path is the one the stage-by-stage port simulated. Then the payoff,
// summed per block: sums[0] += sum of max(A / steps - K, 0), sums[1] += sum of its squares (for the standard error).
__global__ void simulateAsianCall(int n, Heston h, float dt, int steps, unsigned long long seed, double* sums) {
  __shared__ double s_sum[kThreads], s_sq[kThreads];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  double payoff = 0.0f;
  if (i < n) {
    float S = h.spot, V = h.v0, A = 0.0f;
    for (int t = 0; t < steps; ++t) {
      curandStatePhilox4_32_10_t rng;
      curand_init(seed, i, 2ull * t, &rng);
      float2 z = curand_normal2(&rng);
      float z1 = z.x;
      float z2 = h.rho * z1 + sqrtf(1.0f - h.rho * h.rho) * z.y;
      float v = V;
      S *= expf((h.rate - 0.5f * v) * dt + sqrtf(v * dt) * z1);
      V = fmaxf(v + h.kappa * (h.theta - v) * dt + h.xi * sqrtf(v * dt) * z2, 0.0f);
      A += S;
    }
    payoff = fmaxf(A / steps - h.strike, 0.0f);
  }
  s_sum[threadIdx.x] = payoff;
  s_sq[threadIdx.x] = payoff * payoff;
  __syncthreads();
  for (int half = blockDim.x / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) {
      s_sum[threadIdx.x] += s_sum[threadIdx.x + half];
      s_sq[threadIdx.x] += s_sq[threadIdx.x + half];
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    atomicAdd(&sums[0], s_sum[0]);
    atomicAdd(&sums[1], s_sq[0]);
  }
}

struct Paths {
  double* sums;
};

// Discounted price and its standard error.
void priceAsianCall(const Heston& h, const Paths& p, double* price, double* stderr_) {
  const int blocks = (kPaths + kThreads - 1) / kThreads;
  const float dt = h.maturity / kSteps;
  CHECK(cudaMemset(p.sums, 0, 2 * sizeof(double)));
  simulateAsianCall<<<blocks, kThreads>>>(kPaths, h, dt, kSteps, kSeed, p.sums);
  CHECK(cudaGetLastError());
  double sums[2];
  CHECK(cudaMemcpy(sums, p.sums, sizeof(sums), cudaMemcpyDeviceToHost));
  const double mean = sums[0] / kPaths, var = sums[1] / kPaths - mean * mean;
  const double discount = std::exp(-double(h.rate) * h.maturity);
  *price = discount * mean;
  *stderr_ = discount * std::sqrt(var / kPaths);
}

int main() {
  Paths p;
  CHECK(cudaMalloc(&p.sums, 2 * sizeof(double)));

  Heston h{100.0f, 0.04f, 1.5f, 0.04f, 0.5f, -0.7f, 0.03f, 1.0f, 100.0f};
  const float ticks[] = {0.0f, 0.05f, 0.10f, 0.05f, -0.05f, -0.10f, -0.05f, 0.0f};  // spot moves, in points
  double price = 0.0, err = 0.0;

  for (int k = 0; k < 2; ++k) priceAsianCall(h, p, &price, &err);
  CHECK(cudaDeviceSynchronize());
  const int pricings = 20;
  double total = 0.0;
  auto start = std::chrono::steady_clock::now();
  for (int k = 0; k < pricings; ++k) {
    h.spot = 100.0f + ticks[k % 8];
    priceAsianCall(h, p, &price, &err);
    total += price;
  }
  CHECK(cudaDeviceSynchronize());
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  std::printf("Heston Asian call, %d paths x %d steps: last price %.5f (std err %.5f), mean over %d ticks %.5f\n",
              kPaths, kSteps, price, err, pricings, total / pricings);
  std::printf("%.3f ms/step\n", ms / pricings);

  CHECK(cudaFree(p.sums));
  return 0;
}
