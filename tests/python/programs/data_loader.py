"""Builds a DataLoader as a training script would, reads every batch, and prints as JSON how the loader
was built and what it gave.

Usage: data_loader.py [--workers N] [--positional]   (--positional: batch_size and the rest by position)
"""

import argparse
import json

import torch
from torch.utils.data import DataLoader, TensorDataset


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--workers", type=int, default=0)
    parser.add_argument("--positional", action="store_true")
    args = parser.parse_args()

    dataset = TensorDataset(torch.arange(64, dtype=torch.float32).reshape(32, 2))
    if args.positional:  # DataLoader(dataset, batch_size, shuffle, sampler, batch_sampler, num_workers)
        loader = DataLoader(dataset, 4, False, None, None, args.workers)
    else:
        loader = DataLoader(dataset, batch_size=4, num_workers=args.workers)
    batches = [batch.tolist() for (batch,) in loader]
    print(json.dumps({"num_workers": loader.num_workers, "pin_memory": loader.pin_memory,
                      "persistent_workers": loader.persistent_workers, "batches": batches}))


if __name__ == "__main__":
    main()
