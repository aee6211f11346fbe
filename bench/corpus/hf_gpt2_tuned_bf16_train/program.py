"""Pre-train GPT-2 small (124M: 12 layers, 768 wide, 12 heads, context 1024) from scratch with transformers.

Set up along the lines of PyTorch's performance tuning guide: the token windows come from a DataLoader with worker
processes, pinned memory and non-blocking copies; bf16 autocast, TF32 allowed for whatever stays in fp32; SDPA
(flash) attention; the tanh GELU as one kernel instead of gelu_new's chain; the vocabulary padded from 50257 to
50304, a multiple of 64, for the tensor cores; fused AdamW, no weight decay on biases and LayerNorm weights;
gradients clipped at 1.0; linear warm-up then cosine decay; the loss read back only every LOG_INTERVAL steps.
No torch.compile: compiling GPT-2 takes longer than this benchmark run lasts.

The token stream is synthetic (16M random GPT-2 token ids standing in for a tokenized corpus, as a train.bin
would hold them) and the weights are random: nothing is downloaded."""

import time

import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset
from transformers import GPT2Config, GPT2LMHeadModel, get_cosine_schedule_with_warmup

BATCH_SIZE = 32
SEQ_LEN = 1024
GPT2_VOCAB = 50257           # token ids in the data
PADDED_VOCAB = 50304         # embedding / LM head rows: a multiple of 64
LEARNING_RATE = 6e-4
WEIGHT_DECAY = 0.1
LR_WARMUP_STEPS = 10
TRAIN_STEPS = 35             # this benchmark run: 5 warm-up steps, 30 timed
BENCH_WARMUP = 5
LOG_INTERVAL = 10
NUM_WORKERS = 4


class TokenWindows(Dataset):
    """Consecutive SEQ_LEN-token windows of a flat stream of token ids."""

    def __init__(self, tokens, seq_len):
        self.tokens = tokens
        self.seq_len = seq_len

    def __len__(self):
        return len(self.tokens) // self.seq_len

    def __getitem__(self, index):
        start = index * self.seq_len
        window = self.tokens[start:start + self.seq_len]
        return torch.from_numpy(window.astype(np.int64))


def infinite(loader):
    while True:
        yield from loader


def main():
    torch.manual_seed(1337)
    torch.set_float32_matmul_precision("high")   # TF32 for any matmul autocast leaves in fp32
    device = torch.device("cuda")

    tokens = np.random.default_rng(1337).integers(0, GPT2_VOCAB, size=16 * 2**20, dtype=np.uint16)
    loader = DataLoader(
        TokenWindows(tokens, SEQ_LEN),
        batch_size=BATCH_SIZE,
        shuffle=True,
        drop_last=True,
        num_workers=NUM_WORKERS,
        pin_memory=True,
        persistent_workers=True,
    )
    batches = infinite(loader)

    config = GPT2Config(
        vocab_size=PADDED_VOCAB,
        n_positions=SEQ_LEN,
        n_embd=768,
        n_layer=12,
        n_head=12,
        activation_function="gelu_pytorch_tanh",
        resid_pdrop=0.0,
        embd_pdrop=0.0,
        attn_pdrop=0.0,
        use_cache=False,
        attn_implementation="sdpa",
    )
    model = GPT2LMHeadModel(config).to(device)
    model.train()
    print(f"{sum(p.numel() for p in model.parameters()) / 1e6:.1f}M parameters")

    decay = [p for p in model.parameters() if p.dim() >= 2]
    no_decay = [p for p in model.parameters() if p.dim() < 2]
    optimizer = torch.optim.AdamW(
        [{"params": decay, "weight_decay": WEIGHT_DECAY}, {"params": no_decay, "weight_decay": 0.0}],
        lr=LEARNING_RATE,
        betas=(0.9, 0.95),
        eps=1e-8,
        fused=True,
    )
    scheduler = get_cosine_schedule_with_warmup(optimizer, LR_WARMUP_STEPS, TRAIN_STEPS)

    def train_step(input_ids):
        input_ids = input_ids.to(device, non_blocking=True)
        with torch.autocast(device_type="cuda", dtype=torch.bfloat16):
            loss = model(input_ids=input_ids, labels=input_ids).loss
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
        optimizer.step()
        scheduler.step()
        optimizer.zero_grad(set_to_none=True)
        return loss.detach()

    def log(step, loss):
        print(f"step {step:4d} | loss {loss.item():.4f} | lr {scheduler.get_last_lr()[0]:.2e}")

    for step in range(BENCH_WARMUP):
        loss = train_step(next(batches))
        if step % LOG_INTERVAL == 0:
            log(step, loss)
    torch.cuda.synchronize()

    timed = TRAIN_STEPS - BENCH_WARMUP
    start = time.perf_counter()
    for step in range(BENCH_WARMUP, TRAIN_STEPS):
        loss = train_step(next(batches))
        if step % LOG_INTERVAL == 0:
            log(step, loss)
    torch.cuda.synchronize()
    elapsed = time.perf_counter() - start

    print(f"final loss {loss.item():.4f}, {BATCH_SIZE * SEQ_LEN * timed / elapsed:,.0f} tokens/s")
    print(f"{elapsed * 1000 / timed:.3f} ms/step")


if __name__ == "__main__":
    main()
