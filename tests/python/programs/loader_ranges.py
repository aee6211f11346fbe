"""Iterates a DataLoader (3 batches, in the main process or one worker) with the bridge's annotation installed
and the NVTX spy recording; writes the spy's events and the batches' sums as JSON to OUT.

Usage: loader_ranges.py OUT WORKERS
"""

import json
import sys

import torch
from torch.utils.data import DataLoader, TensorDataset

import nvtx_spy


def main():
    out, workers = sys.argv[1], int(sys.argv[2])
    nvtx_spy.install()
    from gpuscope_torch import annotate

    annotate.install()
    data = TensorDataset(torch.arange(12, dtype=torch.float32).reshape(6, 2))
    sums = []
    for (batch,) in DataLoader(data, batch_size=2, num_workers=workers):
        nvtx_spy.mark("batch")
        sums.append(batch.sum().item())
    with open(out, "w") as f:
        json.dump({"events": nvtx_spy.events, "sums": sums}, f)


if __name__ == "__main__":
    main()
