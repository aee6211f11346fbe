"""Pre-training a small Llama (8 decoder layers, hidden 1024, vocabulary 32000) from scratch on 2 GPUs with
FullyShardedDataParallel: each decoder layer its own FSDP unit (transformer_auto_wrap_policy), bf16 mixed
precision for parameters, gradient reduction and buffers, fused AdamW, cosine schedule with warm-up,
gradient clipping. Run with: torchrun --standalone --nproc_per_node=2 program.py"""

import functools
import math
import os
import time

import torch
import torch.distributed as dist
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP
from torch.distributed.fsdp import MixedPrecision, ShardingStrategy
from torch.distributed.fsdp.wrap import transformer_auto_wrap_policy
from transformers import LlamaConfig, LlamaForCausalLM
from transformers.models.llama.modeling_llama import LlamaDecoderLayer


def cosine_with_warmup(warmup, total):
    def factor(step):
        if step < warmup:
            return (step + 1) / warmup
        progress = (step - warmup) / max(1, total - warmup)
        return 0.5 * (1.0 + math.cos(math.pi * progress))

    return factor


def main():
    dist.init_process_group(backend="nccl")
    rank = dist.get_rank()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    device = torch.device("cuda", local_rank)

    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=32000,
        hidden_size=1024,
        intermediate_size=2816,
        num_hidden_layers=8,
        num_attention_heads=16,
        num_key_value_heads=16,
        max_position_embeddings=2048,
        use_cache=False,
    )
    model = LlamaForCausalLM(config)
    bf16 = MixedPrecision(param_dtype=torch.bfloat16, reduce_dtype=torch.bfloat16, buffer_dtype=torch.bfloat16)
    model = FSDP(
        model,
        auto_wrap_policy=functools.partial(transformer_auto_wrap_policy, transformer_layer_cls={LlamaDecoderLayer}),
        mixed_precision=bf16,
        sharding_strategy=ShardingStrategy.FULL_SHARD,
        device_id=device,
        use_orig_params=True,
        limit_all_gathers=True,
    )
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4, betas=(0.9, 0.95), weight_decay=0.1, fused=True)
    warmup_steps, timed_steps = 5, 20
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, cosine_with_warmup(10, warmup_steps + timed_steps))

    batch_size, seq_len, num_batches = 8, 1024, 4
    generator = torch.Generator(device=device).manual_seed(1000 + rank)  # each rank its own shard
    batches = [
        torch.randint(0, config.vocab_size, (batch_size, seq_len), device=device, generator=generator)
        for _ in range(num_batches)
    ]

    def train_step(step):
        input_ids = batches[step % num_batches]
        loss = model(input_ids=input_ids, labels=input_ids).loss
        loss.backward()
        model.clip_grad_norm_(1.0)
        optimizer.step()
        scheduler.step()
        optimizer.zero_grad(set_to_none=True)
        return loss.detach()

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
