"""A signal-processing step in CuPy: five 64 MiB channels read into NumPy arrays, moved to the GPU with
cp.asarray, band-pass filtered with an FFT, and their power summed back to the host."""

import time

import cupy as cp
import numpy as np

channels, samples = 5, 16 * 1024 * 1024  # float32: 64 MiB each
rng = np.random.default_rng(0)
host = [rng.standard_normal(samples, dtype=np.float32) for _ in range(channels)]
freqs = cp.fft.rfftfreq(samples)
band = ((freqs > 0.01) & (freqs < 0.2)).astype(cp.complex64)


def process(chunks):
    power = []
    for chunk in chunks:
        x = cp.asarray(chunk)
        filtered = cp.fft.irfft(cp.fft.rfft(x) * band, n=samples)
        power.append(float(cp.mean(filtered * filtered)))
    return power


for _ in range(2):
    process(host)
cp.cuda.Device().synchronize()
timed = 10
start = time.perf_counter()
for _ in range(timed):
    power = process(host)
cp.cuda.Device().synchronize()
elapsed = time.perf_counter() - start
print("power", [round(p, 4) for p in power])
print(f"{elapsed * 1000 / timed:.3f} ms/step")
