"""Data-parallel training of a GPT-2 (12 layers, 1024 wide, 2048 positions) on 2 GPUs (DistributedDataParallel, bf16 autocast, fused AdamW) over
documents of very different lengths: a DistributedSampler shuffles them, each rank takes micro-batches of 4 and
pads them to the longest document in its own micro-batch, as transformers' DataCollatorWithPadding does.
Run with: torchrun --standalone --nproc_per_node=2 program.py"""

import os
import time

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, Dataset, DistributedSampler
from transformers import GPT2Config, GPT2LMHeadModel


class Documents(Dataset):
    """Token sequences whose lengths follow a long-tailed distribution (most short, a few near the context)."""

    def __init__(self, n, max_len=2048, seed=0):
        g = torch.Generator().manual_seed(seed)
        lengths = torch.exp(torch.randn(n, generator=g) * 1.0 + 5.6).clamp(16, max_len).long()
        self.docs = [torch.randint(0, 50257, (int(l),), generator=g) for l in lengths]

    def __len__(self):
        return len(self.docs)

    def __getitem__(self, i):
        return self.docs[i]


def pad_to_longest(batch):
    longest = max(len(d) for d in batch)
    ids = torch.full((len(batch), longest), 50256, dtype=torch.long)
    mask = torch.zeros((len(batch), longest), dtype=torch.long)
    for row, doc in enumerate(batch):
        ids[row, : len(doc)] = doc
        mask[row, : len(doc)] = 1
    return ids, mask


def main():
    dist.init_process_group(backend="nccl")
    rank = dist.get_rank()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    device = torch.device("cuda", local_rank)

    torch.manual_seed(0)
    config = GPT2Config(n_positions=2048, n_embd=1024, n_head=16)
    model = DDP(GPT2LMHeadModel(config).to(device), device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.1, fused=True)

    dataset = Documents(600)
    sampler = DistributedSampler(dataset, shuffle=True, seed=0)
    loader = DataLoader(dataset, batch_size=4, sampler=sampler, collate_fn=pad_to_longest, num_workers=2,
                        pin_memory=True, persistent_workers=True)

    def train_step(ids, mask):
        ids, mask = ids.to(device, non_blocking=True), mask.to(device, non_blocking=True)
        labels = ids.masked_fill(mask == 0, -100)
        with torch.autocast(device_type="cuda", dtype=torch.bfloat16):
            loss = model(input_ids=ids, attention_mask=mask, labels=labels).loss
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        return loss.detach()

    warmup_steps, timed_steps = 5, 30
    model.train()
    batches = iter(loader)
    for _ in range(warmup_steps):
        train_step(*next(batches))
    torch.cuda.synchronize()

    start = time.perf_counter()
    for _ in range(timed_steps):
        loss = train_step(*next(batches))
    torch.cuda.synchronize()
    elapsed = time.perf_counter() - start

    dist.all_reduce(loss, op=dist.ReduceOp.AVG)
    if rank == 0:
        print(f"final loss {loss.item():.4f}")
        print(f"{elapsed * 1000 / timed_steps:.3f} ms/step")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
