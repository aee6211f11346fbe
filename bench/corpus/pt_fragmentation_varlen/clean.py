"""Train a Transformer text classifier with dynamic padding: batches come grouped by length (as a
length-grouped sampler yields them) and each is padded only to its own longest text, so every step has a
different sequence length. Per-sample losses are kept on the GPU for a loss-by-length report at the end.
The caching allocator grows its segments as needed (expandable_segments) instead of caching fixed ones."""

import os
import random
import time

os.environ.setdefault("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True")

import torch
import torch.nn as nn
import torch.nn.functional as F


class TextClassifier(nn.Module):
    def __init__(self, vocab_size=30522, d_model=512, nhead=8, num_layers=4, dim_feedforward=2048, max_len=1024,
                 num_classes=3):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, d_model, padding_idx=0)
        self.pos = nn.Embedding(max_len, d_model)
        layer = nn.TransformerEncoderLayer(d_model, nhead, dim_feedforward, dropout=0.1, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, num_layers, enable_nested_tensor=False)
        self.head = nn.Linear(d_model, num_classes)

    def forward(self, ids, padding_mask):
        positions = torch.arange(ids.size(1), device=ids.device)
        x = self.embed(ids) + self.pos(positions)
        h = self.encoder(x, src_key_padding_mask=padding_mask)
        keep = (~padding_mask).unsqueeze(-1).to(h.dtype)
        pooled = (h * keep).sum(dim=1) / keep.sum(dim=1)
        return self.head(pooled)


random.seed(0)
torch.manual_seed(0)
device = torch.device("cuda")

vocab_size, batch_size = 30522, 32
model = TextClassifier(vocab_size=vocab_size).to(device)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4, weight_decay=0.01, fused=True)


def next_batch():
    """A batch of texts of similar length, padded to the longest one (token id 0)."""
    seq_len = random.randint(64, 1024)
    lengths = torch.randint(seq_len * 3 // 4, seq_len + 1, (batch_size,), device=device)
    lengths[0] = seq_len
    padding_mask = torch.arange(seq_len, device=device)[None, :] >= lengths[:, None]
    ids = torch.randint(1, vocab_size, (batch_size, seq_len), device=device).masked_fill_(padding_mask, 0)
    labels = torch.randint(0, 3, (batch_size,), device=device)
    return ids, padding_mask, labels, lengths


sample_losses, sample_lengths = [], []


def train_step():
    ids, padding_mask, labels, lengths = next_batch()
    logits = model(ids, padding_mask)
    losses = F.cross_entropy(logits, labels, reduction="none")
    loss = losses.mean()
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    sample_losses.append(losses.detach())
    sample_lengths.append(lengths)
    return loss.detach()


model.train()
warmup_steps, timed_steps = 5, 40

for _ in range(warmup_steps):
    train_step()
torch.cuda.synchronize()

start = time.perf_counter()
for _ in range(timed_steps):
    loss = train_step()
torch.cuda.synchronize()
elapsed = time.perf_counter() - start

losses, lengths = torch.cat(sample_losses), torch.cat(sample_lengths)
print(f"final loss {loss.item():.4f}; mean loss of texts under 512 tokens {losses[lengths < 512].mean().item():.4f}, "
      f"of longer ones {losses[lengths >= 512].mean().item():.4f}")
print(f"peak memory: {torch.cuda.max_memory_allocated() / 2**30:.2f} GiB allocated, "
      f"{torch.cuda.max_memory_reserved() / 2**30:.2f} GiB reserved")
print(f"{elapsed * 1000 / timed_steps:.3f} ms/step")
