// The compute step of samples/multi_stream and samples/serial_copies: `rounds` multiply-adds on each
// element of a chunk, long enough that its kernel and the chunk's copies take comparable time.
#pragma once

__global__ void work(float* x, int n, int rounds) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float v = x[i];
  for (int r = 0; r < rounds; ++r) v = v * 1.0001f + 0.0001f;
  x[i] = v;
}
