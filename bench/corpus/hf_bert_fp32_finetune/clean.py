"""Fine-tune a BERT sequence classifier (6 layers) on synthetic token batches, forward under bf16 autocast."""

import time

import torch
from transformers import BertConfig, BertForSequenceClassification

torch.manual_seed(0)
device = torch.device("cuda")

config = BertConfig(
    hidden_size=768,
    num_hidden_layers=6,
    num_attention_heads=12,
    intermediate_size=3072,
    num_labels=2,
)
model = BertForSequenceClassification(config).to(device)
model.train()

optimizer = torch.optim.AdamW(model.parameters(), lr=2e-5)

batch_size, seq_len = 32, 128
num_batches = 8
batches = [
    {
        "input_ids": torch.randint(0, config.vocab_size, (batch_size, seq_len), device=device),
        "attention_mask": torch.ones(batch_size, seq_len, dtype=torch.long, device=device),
        "labels": torch.randint(0, config.num_labels, (batch_size,), device=device),
    }
    for _ in range(num_batches)
]


def train_step(batch):
    with torch.autocast(device_type="cuda", dtype=torch.bfloat16):
        outputs = model(**batch)
    loss = outputs.loss
    loss.backward()
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    return loss.detach()


warmup_steps, timed_steps = 5, 20

for step in range(warmup_steps):
    train_step(batches[step % num_batches])
torch.cuda.synchronize()

start = time.perf_counter()
for step in range(timed_steps):
    loss = train_step(batches[step % num_batches])
torch.cuda.synchronize()
elapsed = time.perf_counter() - start

print(f"final loss {loss.item():.4f}")
print(f"{elapsed * 1000 / timed_steps:.3f} ms/step")
