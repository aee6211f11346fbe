"""Greedy generation with a GPT-2 (6 layers, 768 wide) in fp16: 32 new tokens per generate call,
with a static KV cache, for which transformers compiles the decoding forward into CUDA graphs itself
(its recipe; compiling model.forward by hand over the static cache crashed in torch's CUDA-graph trees)."""

import time

import torch
from transformers import GPT2Config, GPT2LMHeadModel

torch.manual_seed(0)
device = torch.device("cuda")

config = GPT2Config(n_layer=6, n_embd=768, n_head=12)
model = GPT2LMHeadModel(config).to(device=device, dtype=torch.float16)
model.eval()

model.generation_config.cache_implementation = "static"

prompt_len = 32
input_ids = torch.randint(0, config.vocab_size, (1, prompt_len), device=device)
attention_mask = torch.ones_like(input_ids)


def generate():
    return model.generate(
        input_ids,
        attention_mask=attention_mask,
        max_new_tokens=32,
        do_sample=False,
        pad_token_id=config.eos_token_id,
    )


# The first calls compile the prefill and decode graphs and record their CUDA graphs.
out = generate()
print("generated:", out[0, -8:].tolist())
for _ in range(2):
    generate()
torch.cuda.synchronize()

timed_calls = 5
start = time.perf_counter()
for _ in range(timed_calls):
    out = generate()
torch.cuda.synchronize()
elapsed = time.perf_counter() - start

print(f"{elapsed * 1000 / timed_calls:.3f} ms/step")
