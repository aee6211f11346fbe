"""LoRA fine-tuning of a small GPT-2 (6 layers, random init) with peft on batches of random token ids."""

import time

import torch
from peft import LoraConfig, get_peft_model
from transformers import GPT2Config, GPT2LMHeadModel

torch.manual_seed(0)
device = torch.device("cuda")

config = GPT2Config(
    vocab_size=50257,
    n_positions=512,
    n_embd=768,
    n_layer=6,
    n_head=12,
)
model = GPT2LMHeadModel(config)

lora_config = LoraConfig(
    r=8,
    lora_alpha=16,
    target_modules=["c_attn"],
    lora_dropout=0.05,
    task_type="CAUSAL_LM",
)
model = get_peft_model(model, lora_config)
model.print_trainable_parameters()
model.to(device)
model.train()

optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=2e-4)

batch_size, seq_len = 8, 256
num_batches = 8
batches = [
    torch.randint(0, config.vocab_size, (batch_size, seq_len), device=device)
    for _ in range(num_batches)
]


def train_step(input_ids):
    outputs = model(input_ids=input_ids, labels=input_ids)
    loss = outputs.loss
    loss.backward()
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    return loss.detach()


warmup_steps, timed_steps = 5, 30

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
