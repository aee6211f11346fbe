"""Fine-tuning a multilingual XLM-RoBERTa-base classifier (12 layers, hidden 768, vocabulary 250002) on
2 GPUs with DistributedDataParallel: bf16 autocast, fused AdamW with a linear decay schedule, batches of
16 reviews of 256 tokens per GPU, three labels. Run with: torchrun --standalone --nproc_per_node=2 program.py"""

import os
import time

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from transformers import XLMRobertaConfig, XLMRobertaForSequenceClassification, get_linear_schedule_with_warmup


def main():
    dist.init_process_group(backend="nccl")
    rank = dist.get_rank()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    device = torch.device("cuda", local_rank)

    torch.manual_seed(0)
    config = XLMRobertaConfig(vocab_size=250002, max_position_embeddings=514, type_vocab_size=1, num_labels=3)
    model = XLMRobertaForSequenceClassification(config).to(device)
    model = DDP(model, device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=2e-5, weight_decay=0.01, fused=True)
    warmup_steps, timed_steps = 5, 20
    scheduler = get_linear_schedule_with_warmup(optimizer, 2, warmup_steps + timed_steps)

    batch_size, seq_len, num_batches = 16, 256, 4
    generator = torch.Generator(device=device).manual_seed(7 + rank)  # each rank its own shard
    batches = []
    for _ in range(num_batches):
        input_ids = torch.randint(5, config.vocab_size, (batch_size, seq_len), device=device, generator=generator)
        input_ids[:, 0] = 0  # <s>
        attention_mask = torch.ones_like(input_ids)
        labels = torch.randint(0, 3, (batch_size,), device=device, generator=generator)
        batches.append((input_ids, attention_mask, labels))

    def train_step(step):
        input_ids, attention_mask, labels = batches[step % num_batches]
        with torch.autocast(device_type="cuda", dtype=torch.bfloat16):
            loss = model(input_ids=input_ids, attention_mask=attention_mask, labels=labels).loss
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
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
