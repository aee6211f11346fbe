"""Data-parallel training of GPT-2 small (transformers GPT2LMHeadModel, 12 layers, 124 M parameters) on 2 GPUs
with DistributedDataParallel, bf16 autocast and fused AdamW, batch 8 x 512 tokens per rank (the twin of
program.py without its NCCL_P2P_DISABLE line).
Run with: torchrun --standalone --nproc_per_node=2 clean.py"""

import os
import time

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from transformers import GPT2Config, GPT2LMHeadModel


def main():
    dist.init_process_group(backend="nccl")
    rank = dist.get_rank()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    device = torch.device("cuda", local_rank)

    torch.manual_seed(0)
    model = GPT2LMHeadModel(GPT2Config()).to(device)
    model = DDP(model, device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=6e-4, betas=(0.9, 0.95), weight_decay=0.1, fused=True)

    batch_size, seq_len = 8, 512
    generator = torch.Generator(device=device).manual_seed(1234 + rank)
    data = torch.randint(0, 50257, (16, batch_size, seq_len + 1), device=device, generator=generator)

    def train_step(step):
        chunk = data[step % len(data)]
        x, y = chunk[:, :-1], chunk[:, 1:]
        with torch.autocast(device_type="cuda", dtype=torch.bfloat16):
            logits = model(input_ids=x).logits
            loss = torch.nn.functional.cross_entropy(logits.view(-1, logits.size(-1)), y.reshape(-1))
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        return loss.detach()

    warmup_steps, timed_steps = 5, 20
    model.train()
    for step in range(warmup_steps):
        train_step(step)
    torch.cuda.synchronize()

    start = time.perf_counter()
    for step in range(warmup_steps, warmup_steps + timed_steps):
        loss = train_step(step)
    torch.cuda.synchronize()
    elapsed = time.perf_counter() - start

    dist.all_reduce(loss, op=dist.ReduceOp.AVG)
    if rank == 0:
        print(f"final loss {loss.item():.4f}")
        print(f"{elapsed * 1000 / timed_steps:.3f} ms/step")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
