"""Pre-train a small Llama (4 layers, 512 wide, 8 heads, 32,000-token vocabulary) from scratch with transformers,
the way a hand-written loop does it on one GPU: bf16 autocast over fp32 weights, gradient accumulation over 4
micro-batches of 8 x 512 tokens, clipping, AdamW with a cosine schedule, the running loss summed with .item() for
the log, and an evaluation on held-out batches every 10 optimizer steps.

There is no tokenizer to download here: the token ids are random, already on the GPU as a tokenized corpus would be
once loaded."""

import math
import time

import torch
from transformers import LlamaConfig, LlamaForCausalLM, get_cosine_schedule_with_warmup


def main():
    torch.manual_seed(0)
    device = torch.device("cuda")
    config = LlamaConfig(vocab_size=32000, hidden_size=512, intermediate_size=1408, num_hidden_layers=4,
                         num_attention_heads=8, num_key_value_heads=8, max_position_embeddings=1024)
    model = LlamaForCausalLM(config).to(device)

    accumulation, micro_batch, seq_len = 4, 8, 512
    warmup_steps, timed_steps, eval_every, eval_batches = 3, 20, 10, 4
    total_steps = warmup_steps + timed_steps
    optimizer = torch.optim.AdamW(model.parameters(), lr=6e-4, betas=(0.9, 0.95), weight_decay=0.1)
    scheduler = get_cosine_schedule_with_warmup(optimizer, num_warmup_steps=2, num_training_steps=total_steps)
    train_tokens = torch.randint(0, config.vocab_size, (64, micro_batch, seq_len), device=device)
    val_tokens = torch.randint(0, config.vocab_size, (eval_batches, micro_batch, seq_len), device=device)

    @torch.no_grad()
    def evaluate():
        model.eval()
        losses = []
        for batch in val_tokens:
            with torch.autocast(device_type="cuda", dtype=torch.bfloat16):
                losses.append(model(input_ids=batch, labels=batch).loss.item())
        model.train()
        return sum(losses) / len(losses)

    model.train()
    micro = 0
    clock, timed, started = 0.0, 0, None
    for step in range(total_steps):
        if step == warmup_steps:
            torch.cuda.synchronize()
            started = time.perf_counter()
        running_loss = 0.0
        for _ in range(accumulation):
            batch = train_tokens[micro % len(train_tokens)]
            micro += 1
            with torch.autocast(device_type="cuda", dtype=torch.bfloat16):
                loss = model(input_ids=batch, labels=batch).loss / accumulation
            loss.backward()
            running_loss += loss.item()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        scheduler.step()
        optimizer.zero_grad(set_to_none=True)
        timed += started is not None
        if (step + 1) % eval_every == 0:
            if started is not None:  # the evaluation is no training step: the clock stops for it
                torch.cuda.synchronize()
                clock += time.perf_counter() - started
            val_loss = evaluate()
            print(f"step {step + 1:3d}  train loss {running_loss:.4f}  val loss {val_loss:.4f}  "
                  f"ppl {math.exp(val_loss):.1f}  lr {scheduler.get_last_lr()[0]:.2e}")
            if started is not None:
                torch.cuda.synchronize()
                started = time.perf_counter()
    torch.cuda.synchronize()
    clock += time.perf_counter() - started
    print(f"{clock * 1000 / timed:.3f} ms/step")


if __name__ == "__main__":
    main()
