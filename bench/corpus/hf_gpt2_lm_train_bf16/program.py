"""Pre-train a small GPT-2 (6 layers, 512 wide, 8 heads) from scratch with transformers: bf16 autocast, AdamW
with a linear warm-up schedule, gradient clipping at 1.0; the token batches (16 x 256) are already tokenized
and on the GPU, and the loss is logged every 10 steps."""

import time

import torch
from transformers import GPT2Config, GPT2LMHeadModel, get_linear_schedule_with_warmup


def main():
    torch.manual_seed(0)
    device = torch.device("cuda")
    config = GPT2Config(n_layer=6, n_embd=512, n_head=8, n_positions=512)
    model = GPT2LMHeadModel(config).to(device)
    model.train()

    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4, betas=(0.9, 0.95), weight_decay=0.1)
    total_steps = 60
    scheduler = get_linear_schedule_with_warmup(optimizer, num_warmup_steps=10, num_training_steps=total_steps)
    batch_size, seq_len = 16, 256
    corpus = torch.randint(0, config.vocab_size, (32, batch_size, seq_len), device=device)

    def train_step(input_ids):
        with torch.autocast(device_type="cuda", dtype=torch.bfloat16):
            loss = model(input_ids=input_ids, labels=input_ids).loss
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        scheduler.step()
        optimizer.zero_grad(set_to_none=True)
        return loss.detach()

    warmup = 5
    for step in range(warmup):
        train_step(corpus[step])
    torch.cuda.synchronize()

    timed = total_steps - warmup
    start = time.perf_counter()
    for step in range(timed):
        loss = train_step(corpus[(warmup + step) % len(corpus)])
        if step % 10 == 0:
            print(f"step {step:3d}  loss {loss.item():.4f}  lr {scheduler.get_last_lr()[0]:.2e}")
    torch.cuda.synchronize()
    elapsed = time.perf_counter() - start
    print(f"{elapsed * 1000 / timed:.3f} ms/step")


if __name__ == "__main__":
    main()
