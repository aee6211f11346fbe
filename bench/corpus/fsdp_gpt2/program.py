"""Fully sharded data-parallel training (FSDP2, fully_shard) of a GPT-2 (12 layers, 1024 wide) on 2 GPUs:
each transformer block and then the whole model sharded, parameters gathered in bf16 and gradients reduced
in fp32, AdamW on the sharded parameters. Run with: torchrun --standalone --nproc_per_node=2 program.py"""

import os
import time

import torch
import torch.distributed as dist
from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard
from transformers import GPT2Config, GPT2LMHeadModel


def main():
    dist.init_process_group(backend="nccl")
    rank = dist.get_rank()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    device = torch.device("cuda", local_rank)

    torch.manual_seed(0)
    config = GPT2Config(n_layer=12, n_embd=1024, n_head=16)
    model = GPT2LMHeadModel(config).to(device)
    policy = MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32)
    for block in model.transformer.h:
        fully_shard(block, mp_policy=policy)
    fully_shard(model, mp_policy=policy)
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.1)

    batch_size, seq_len, num_batches = 8, 512, 4
    generator = torch.Generator(device=device).manual_seed(1000 + rank)  # each rank its own shard
    batches = [
        torch.randint(0, config.vocab_size, (batch_size, seq_len), device=device, generator=generator)
        for _ in range(num_batches)
    ]

    def train_step(step):
        input_ids = batches[step % num_batches]
        loss = model(input_ids=input_ids, labels=input_ids).loss
        loss.backward()
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
