"""Classify texts one at a time with a small Transformer encoder: each text is padded to one of a few
bucket lengths (with a padding mask) and run by the CUDA graph captured for its bucket."""

import time

import torch
import torch.nn as nn
import torch.nn.functional as F


class TextClassifier(nn.Module):
    def __init__(self, vocab_size=8000, d_model=256, nhead=4, num_layers=4, dim_feedforward=1024, max_len=512,
                 num_classes=4):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, d_model, padding_idx=0)
        self.pos = nn.Embedding(max_len, d_model)
        layer = nn.TransformerEncoderLayer(d_model, nhead, dim_feedforward, dropout=0.1, activation="gelu",
                                           batch_first=True, norm_first=True)
        self.encoder = nn.TransformerEncoder(layer, num_layers, norm=nn.LayerNorm(d_model),
                                             enable_nested_tensor=False)
        self.head = nn.Linear(d_model, num_classes)

    def forward(self, ids, padding_mask=None):
        positions = torch.arange(ids.size(1), device=ids.device)
        x = self.embed(ids) + self.pos(positions)
        h = self.encoder(x, src_key_padding_mask=padding_mask)
        if padding_mask is None:
            pooled = h.mean(dim=1)
        else:
            keep = (~padding_mask).unsqueeze(-1).to(h.dtype)
            pooled = (h * keep).sum(dim=1) / keep.sum(dim=1)
        return self.head(pooled)


torch.manual_seed(0)
device = torch.device("cuda")

model = TextClassifier().to(device).eval()

# Pre-tokenized texts of varying length (8 to 128 tokens), already on the GPU.
num_texts = 210
lengths = torch.randint(8, 129, (num_texts,)).tolist()
texts = [torch.randint(1, 8000, (1, n), device=device) for n in lengths]

# Capture the regular (SDPA) attention path in the graphs, not the native inference fast path.
torch.backends.mha.set_fastpath_enabled(False)

buckets = (32, 64, 96, 128)
static_ids, static_mask, static_logits, graphs, key_positions = {}, {}, {}, {}, {}
with torch.inference_mode():
    for b in buckets:
        static_ids[b] = torch.zeros(1, b, dtype=torch.long, device=device)
        static_mask[b] = torch.zeros(1, b, dtype=torch.bool, device=device)
        key_positions[b] = torch.arange(b, device=device).unsqueeze(0)
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(3):
                model(static_ids[b], static_mask[b])
        torch.cuda.current_stream().wait_stream(side)
        graphs[b] = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graphs[b]):
            static_logits[b] = model(static_ids[b], static_mask[b])


def predict(ids):
    n = ids.size(1)
    b = next(size for size in buckets if size >= n)
    with torch.inference_mode():
        static_ids[b].copy_(F.pad(ids, (0, b - n)))
        static_mask[b].copy_(key_positions[b] >= n)
        graphs[b].replay()
        return static_logits[b].argmax(dim=-1)


warmup_steps, timed_steps = 10, 200

for i in range(warmup_steps):
    predict(texts[i])
torch.cuda.synchronize()

predictions = []
start = time.perf_counter()
for i in range(warmup_steps, warmup_steps + timed_steps):
    predictions.append(predict(texts[i]))
torch.cuda.synchronize()
elapsed = time.perf_counter() - start

print("first predictions:", torch.cat(predictions[:16]).tolist())
print(f"{elapsed * 1000 / timed_steps:.3f} ms/step")
