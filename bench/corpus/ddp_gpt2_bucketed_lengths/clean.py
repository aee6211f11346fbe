"""Data-parallel training of GPT-2 small (12 layers, 768 wide) on 2 GPUs (DistributedDataParallel, bf16 autocast,
fused AdamW) over a corpus chunked into sequences of 256, 512, 768 and 1024 tokens. The twin of program.py whose sampler
shuffles steps, not batches: each step's batches are of one length on every rank, so the ranks' work per step is the
same (the total per rank over an epoch is as in program.py).
Run with: torchrun --standalone --nproc_per_node=2 clean.py"""

import os
import time

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, Dataset, Sampler
from transformers import GPT2Config, GPT2LMHeadModel

LENGTHS = (256, 512, 768, 1024)
BATCH = 24


class ChunkedCorpus(Dataset):
    """Token sequences cut from documents at one of four lengths, the same number of each."""

    def __init__(self, per_length, seed=0):
        g = torch.Generator().manual_seed(seed)
        self.docs = [torch.randint(0, 50257, (n,), generator=g) for n in LENGTHS for _ in range(per_length)]

    def __len__(self):
        return len(self.docs)

    def __getitem__(self, i):
        return self.docs[i]


class BucketBatchSampler(Sampler):
    """Batches of sequences of one length, grouped world at a time by length and the groups shuffled each epoch
    with a seed all ranks share; rank r takes batch r of each group, so a step's batches have one length."""

    def __init__(self, dataset, batch_size, rank, world, seed=0):
        self.buckets = {}
        for i, doc in enumerate(dataset.docs):
            self.buckets.setdefault(len(doc), []).append(i)
        self.batch_size, self.rank, self.world, self.seed, self.epoch = batch_size, rank, world, seed, 0

    def set_epoch(self, epoch):
        self.epoch = epoch

    def batches(self, g):
        out = []
        for indices in self.buckets.values():
            order = [indices[i] for i in torch.randperm(len(indices), generator=g).tolist()]
            step = self.batch_size * self.world
            out += [order[s : s + step] for s in range(0, len(order) - step + 1, step)]
        groups = [out[i] for i in torch.randperm(len(out), generator=g).tolist()]
        return [group[r * self.batch_size : (r + 1) * self.batch_size] for group in groups for r in range(self.world)]

    def __iter__(self):
        g = torch.Generator().manual_seed(self.seed + self.epoch)
        yield from self.batches(g)[self.rank :: self.world]

    def __len__(self):
        return sum(len(v) // self.batch_size for v in self.buckets.values()) // self.world


def main():
    dist.init_process_group(backend="nccl")
    rank, world = dist.get_rank(), dist.get_world_size()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    device = torch.device("cuda", local_rank)

    torch.manual_seed(0)
    model = DDP(GPT2LMHeadModel(GPT2Config()).to(device), device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.1, fused=True)

    dataset = ChunkedCorpus(per_length=5 * BATCH * world)  # 20 steps per epoch
    sampler = BucketBatchSampler(dataset, BATCH, rank, world)
    loader = DataLoader(dataset, batch_sampler=sampler, collate_fn=torch.stack, num_workers=2, pin_memory=True,
                        persistent_workers=True)

    def train_step(ids):
        ids = ids.to(device, non_blocking=True)
        with torch.autocast(device_type="cuda", dtype=torch.bfloat16):
            loss = model(input_ids=ids, labels=ids).loss
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        return loss.detach()

    model.train()
    sampler.set_epoch(0)  # warm-up: one epoch, every length seen
    for ids in loader:
        train_step(ids)
    torch.cuda.synchronize()

    steps = 0
    start = time.perf_counter()
    for epoch in (1, 2):
        sampler.set_epoch(epoch)
        for ids in loader:
            loss = train_step(ids)
            steps += 1
    torch.cuda.synchronize()
    elapsed = time.perf_counter() - start

    dist.all_reduce(loss, op=dist.ReduceOp.AVG)
    if rank == 0:
        print(f"final loss {loss.item():.4f}")
        print(f"{elapsed * 1000 / steps:.3f} ms/step")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
