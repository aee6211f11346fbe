"""Host time per caching-allocator round trip through the driver: allocate an 8 MiB tensor, fill it, drop it and
empty the cache, so every iteration makes one cudaMalloc and one cudaFree, as a loop that calls
torch.cuda.empty_cache() every step does. Prints the median over batches in microseconds; run plain, under
`gpuscope record` and under `gpuscope record --torch` (tests/bench/alloc_cost.sh) to see what recording adds to
each allocation."""

import json
import statistics
import sys
import time

import torch


def main():
    batches = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    cycles = int(sys.argv[2]) if len(sys.argv) > 2 else 100
    per_cycle_us = []
    for b in range(batches + 2):  # the first two batches warm up
        torch.cuda.synchronize()
        start = time.perf_counter()
        for _ in range(cycles):
            x = torch.empty(2 << 20, device="cuda")
            x.fill_(1.0)
            del x
            torch.cuda.empty_cache()
        torch.cuda.synchronize()
        if b >= 2:
            per_cycle_us.append((time.perf_counter() - start) * 1e6 / cycles)
    print(json.dumps({"empty_cache_cycle_us_median": round(statistics.median(per_cycle_us), 3),
                      "cycles": batches * cycles}))


if __name__ == "__main__":
    main()
