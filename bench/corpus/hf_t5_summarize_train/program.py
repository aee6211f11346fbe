"""Train a small T5 (6+6 layers, d_model 512) for summarisation on synthetic article/summary pairs: fixed-length
batches of 256 source and 64 target tokens made on the GPU, bf16 autocast, AdamW, gradient clipping."""

import time

import torch
from transformers import T5Config, T5ForConditionalGeneration

torch.manual_seed(0)
device = torch.device("cuda")

config = T5Config(
    vocab_size=32128, d_model=512, d_kv=64, d_ff=2048, num_layers=6, num_decoder_layers=6, num_heads=8,
    decoder_start_token_id=0, pad_token_id=0,
)
model = T5ForConditionalGeneration(config).to(device)
optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
batch, source_len, target_len = 32, 256, 64


def make_batch():
    input_ids = torch.randint(2, config.vocab_size, (batch, source_len), device=device)
    labels = torch.randint(2, config.vocab_size, (batch, target_len), device=device)
    # Summaries end early: the tail of each is padding, ignored by the loss.
    ends = torch.randint(target_len // 2, target_len, (batch, 1), device=device)
    labels = labels.masked_fill(torch.arange(target_len, device=device) >= ends, -100)
    return {"input_ids": input_ids, "attention_mask": torch.ones_like(input_ids), "labels": labels}


def train_step(inputs):
    with torch.autocast("cuda", dtype=torch.bfloat16):
        loss = model(**inputs).loss
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    return loss.detach()


model.train()
data = [make_batch() for _ in range(8)]
for i in range(5):
    train_step(data[i % 8])
torch.cuda.synchronize()
steps = 30
start = time.perf_counter()
for i in range(steps):
    loss = train_step(data[i % 8])
torch.cuda.synchronize()
elapsed = time.perf_counter() - start
print(f"loss {loss.item():.4f}")
print(f"{elapsed * 1000 / steps:.3f} ms/step")
