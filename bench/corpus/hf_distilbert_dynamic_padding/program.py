"""Fine-tune DistilBERT for sentiment classification with dynamic padding: a pre-tokenised dataset of reviews of
varied length, a DataLoader whose collate pads each batch to its longest review, bf16 autocast, AdamW with a
linear warm-up schedule."""

import time

import torch
from torch.utils.data import DataLoader, Dataset
from transformers import DistilBertConfig, DistilBertForSequenceClassification, get_linear_schedule_with_warmup

torch.manual_seed(0)
device = torch.device("cuda")


class Reviews(Dataset):
    """Token ids as a tokenizer would leave them: [CLS] ... [SEP], 24 to 320 tokens."""

    def __init__(self, count, vocab_size):
        generator = torch.Generator().manual_seed(1)
        lengths = torch.randint(24, 321, (count,), generator=generator)
        self.reviews = [torch.randint(1000, vocab_size, (int(n),), generator=generator) for n in lengths]
        self.labels = torch.randint(0, 2, (count,), generator=generator)

    def __len__(self):
        return len(self.reviews)

    def __getitem__(self, i):
        ids = torch.cat([torch.tensor([101]), self.reviews[i], torch.tensor([102])])
        return {"input_ids": ids, "label": self.labels[i]}


def collate(samples):
    ids = torch.nn.utils.rnn.pad_sequence([s["input_ids"] for s in samples], batch_first=True, padding_value=0)
    return {
        "input_ids": ids,
        "attention_mask": (ids != 0).long(),
        "labels": torch.stack([s["label"] for s in samples]),
    }


config = DistilBertConfig(num_labels=2)
model = DistilBertForSequenceClassification(config).to(device)
dataset = Reviews(4096, config.vocab_size)
loader = DataLoader(dataset, batch_size=32, shuffle=True, collate_fn=collate, num_workers=2, pin_memory=True,
                    drop_last=True)
optimizer = torch.optim.AdamW(model.parameters(), lr=5e-5, weight_decay=0.01)
scheduler = get_linear_schedule_with_warmup(optimizer, num_warmup_steps=20, num_training_steps=len(loader))


def train_step(batch):
    batch = {k: v.to(device, non_blocking=True) for k, v in batch.items()}
    with torch.autocast("cuda", dtype=torch.bfloat16):
        loss = model(**batch).loss
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    scheduler.step()
    optimizer.zero_grad(set_to_none=True)
    return loss.detach()


model.train()
batches = iter(loader)
for _ in range(10):
    train_step(next(batches))
torch.cuda.synchronize()
steps = 60
start = time.perf_counter()
for _ in range(steps):
    loss = train_step(next(batches))
torch.cuda.synchronize()
elapsed = time.perf_counter() - start
print(f"loss {loss.item():.4f}")
print(f"{elapsed * 1000 / steps:.3f} ms/step")
