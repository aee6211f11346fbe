"""A causal transformer language model (nn.TransformerEncoder, 6 layers, d_model 512) trained with fp16 autocast,
GradScaler, gradient clipping and AdamW with a cosine schedule; token batches sampled from a corpus held on the
GPU."""

import math
import time

import torch
import torch.nn as nn

torch.manual_seed(0)
device = "cuda"
vocab, d_model, layers, heads, seq_len, batch = 16384, 512, 6, 8, 256, 32


class LanguageModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(vocab, d_model)
        self.pos = nn.Parameter(torch.zeros(1, seq_len, d_model))
        layer = nn.TransformerEncoderLayer(d_model, heads, 4 * d_model, dropout=0.1, batch_first=True,
                                           norm_first=True, activation="gelu")
        self.blocks = nn.TransformerEncoder(layer, layers)
        self.norm = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, vocab, bias=False)
        self.register_buffer("mask", nn.Transformer.generate_square_subsequent_mask(seq_len), persistent=False)

    def forward(self, tokens):
        x = self.embed(tokens) + self.pos[:, : tokens.shape[1]]
        x = self.blocks(x, mask=self.mask, is_causal=True)
        return self.head(self.norm(x))


model = LanguageModel().to(device)
optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.1)
total_steps = 400
scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: 0.5 * (1 + math.cos(math.pi * s / total_steps)))
scaler = torch.amp.GradScaler("cuda")
corpus = torch.randint(0, vocab, (2_000_000,), device=device)


def get_batch():
    starts = torch.randint(0, corpus.numel() - seq_len - 1, (batch,), device=device)
    offsets = torch.arange(seq_len + 1, device=device)
    chunk = corpus[starts[:, None] + offsets]
    return chunk[:, :-1], chunk[:, 1:]


def train_step():
    inputs, targets = get_batch()
    with torch.autocast("cuda", dtype=torch.float16):
        logits = model(inputs)
        loss = nn.functional.cross_entropy(logits.view(-1, vocab), targets.reshape(-1))
    optimizer.zero_grad(set_to_none=True)
    scaler.scale(loss).backward()
    scaler.unscale_(optimizer)
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    scaler.step(optimizer)
    scaler.update()
    scheduler.step()
    return loss.detach()


model.train()
for _ in range(10):
    train_step()
torch.cuda.synchronize()
steps = 40
start = time.perf_counter()
for _ in range(steps):
    loss = train_step()
torch.cuda.synchronize()
elapsed = time.perf_counter() - start
print(f"loss {loss.item():.4f}, scale {scaler.get_scale():.0f}")
print(f"{elapsed * 1000 / steps:.3f} ms/step")
