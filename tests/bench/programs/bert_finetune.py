"""A BERT fine-tuning loop as a user would write it from the transformers docs: BertForSequenceClassification
(base size, random weights), batches of 32 × 128 tokens, AdamW, fp32, no NVTX ranges. For checking the
advisor on a program it was not written against (tests/bench/advisor_programs.sh)."""
import torch
from transformers import BertConfig, BertForSequenceClassification

model = BertForSequenceClassification(BertConfig(num_labels=4)).cuda()
optimizer = torch.optim.AdamW(model.parameters(), lr=2e-5)
for step in range(20):
    input_ids = torch.randint(0, 30522, (32, 128))
    labels = torch.randint(0, 4, (32,))
    out = model(input_ids=input_ids.cuda(), labels=labels.cuda())
    out.loss.backward()
    optimizer.step()
    optimizer.zero_grad()
    if step % 5 == 0:
        print(f"step {step} loss {out.loss.item():.4f}")
