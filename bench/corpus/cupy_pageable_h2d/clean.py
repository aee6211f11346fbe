"""A signal-processing step in CuPy: five 64 MiB channels in pinned host memory, copied asynchronously on a
copy stream one channel ahead of the FFT band-pass filter, their power kept on the GPU and read once."""

import time

import cupy as cp
import cupyx
import numpy as np

channels, samples = 5, 16 * 1024 * 1024  # float32: 64 MiB each
rng = np.random.default_rng(0)
host = []
for _ in range(channels):
    pinned = cupyx.empty_pinned(samples, dtype=np.float32)
    pinned[:] = rng.standard_normal(samples, dtype=np.float32)
    host.append(pinned)
freqs = cp.fft.rfftfreq(samples)
band = ((freqs > 0.01) & (freqs < 0.2)).astype(cp.complex64)
device = [cp.empty(samples, dtype=cp.float32) for _ in range(2)]
copy_stream, compute_stream = cp.cuda.Stream(non_blocking=True), cp.cuda.Stream(non_blocking=True)


def process(chunks):
    power = cp.empty(len(chunks), dtype=cp.float32)
    copied = [None] * len(chunks)

    def start_copy(i):
        buf = device[i % 2]
        if i >= 2:  # the buffer's previous channel must be filtered before it is overwritten
            copy_stream.wait_event(copied[i - 2][1])
        buf.set(chunks[i], stream=copy_stream)
        copied[i] = (copy_stream.record(), None)

    start_copy(0)
    for i in range(len(chunks)):
        if i + 1 < len(chunks):
            start_copy(i + 1)
        compute_stream.wait_event(copied[i][0])
        with compute_stream:
            x = device[i % 2]
            filtered = cp.fft.irfft(cp.fft.rfft(x) * band, n=samples)
            power[i] = cp.mean(filtered * filtered)
            copied[i] = (copied[i][0], compute_stream.record())
    compute_stream.synchronize()
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
print("power", [round(p, 4) for p in power.get().tolist()])
print(f"{elapsed * 1000 / timed:.3f} ms/step")
