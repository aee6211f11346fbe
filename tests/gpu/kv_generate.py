"""Greedy decoding with a KV cache, as a transformers serving script does it: a small GPT-2 built from its config
(random weights, fp16), five generate() calls of 24 new tokens each from the same prompts; prints every call's
token ids as JSON. Each forward is handed the cache the previous one returned: CUDA graphs replaying the
forward would overwrite it."""

import json

import torch
from transformers import GPT2Config, GPT2LMHeadModel

torch.manual_seed(0)
config = GPT2Config(n_layer=2, n_head=4, n_embd=128, vocab_size=1000, n_positions=128)
model = GPT2LMHeadModel(config).to("cuda", torch.float16).eval()
prompts = torch.randint(0, config.vocab_size, (2, 8), device="cuda")
calls = []
with torch.inference_mode():
    for _ in range(5):
        out = model.generate(prompts, max_new_tokens=24, do_sample=False, pad_token_id=0,
                             attention_mask=torch.ones_like(prompts))
        calls.append(out[:, prompts.shape[1]:].tolist())
print(json.dumps(calls))
