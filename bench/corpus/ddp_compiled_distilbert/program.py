"""Fine-tuning DistilBERT for sentiment classification on 2 GPUs with DistributedDataParallel, the model compiled
the way PyTorch's DDP and torch.compile tutorials show (wrap in DDP, then torch.compile): bf16 autocast, fused AdamW
with a cosine schedule, batches of 32 reviews of 256 tokens per GPU, two labels.
Run with: torchrun --standalone --nproc_per_node=2 program.py"""

import os
import time

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from transformers import DistilBertConfig, DistilBertForSequenceClassification, get_cosine_schedule_with_warmup


def main():
    dist.init_process_group(backend="nccl")
    rank = dist.get_rank()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    device = torch.device("cuda", local_rank)

    torch.manual_seed(0)
    model = DistilBertForSequenceClassification(DistilBertConfig(num_labels=2)).to(device)
    model = torch.compile(DDP(model, device_ids=[local_rank]))
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-5, weight_decay=0.01, fused=True)
    warmup_steps, timed_steps = 8, 40
    scheduler = get_cosine_schedule_with_warmup(optimizer, 4, warmup_steps + timed_steps)

    batch_size, seq_len = 32, 256
    generator = torch.Generator(device=device).manual_seed(11 + rank)
    batches = []
    for _ in range(8):
        input_ids = torch.randint(1000, 30522, (batch_size, seq_len), device=device, generator=generator)
        input_ids[:, 0] = 101  # [CLS]
        labels = torch.randint(0, 2, (batch_size,), device=device, generator=generator)
        batches.append((input_ids, torch.ones_like(input_ids), labels))

    def train_step(step):
        input_ids, attention_mask, labels = batches[step % len(batches)]
        with torch.autocast(device_type="cuda", dtype=torch.bfloat16):
            loss = model(input_ids=input_ids, attention_mask=attention_mask, labels=labels).loss
        loss.backward()
        optimizer.step()
        scheduler.step()
        optimizer.zero_grad(set_to_none=True)
        return loss.detach()

    model.train()
    for step in range(warmup_steps):  # the first steps compile
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
