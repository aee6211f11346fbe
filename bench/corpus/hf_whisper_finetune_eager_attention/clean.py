"""Fine-tune Whisper for English speech recognition in a plain PyTorch loop, the Hugging Face "fine-tune Whisper"
recipe written out by hand: WhisperFeatureExtractor turns 16 kHz audio into 80 x 3000 log-mel features (every
clip padded to 30 s), the transcripts' token ids (<|en|><|transcribe|><|notimestamps|> ... <|endoftext|>, the
start-of-transcript token left to the model) are padded with -100 to the longest in the batch, and
WhisperForConditionalGeneration, whisper-base sized (6 + 6 layers, d_model 512, 8 heads), is trained on them with
bf16 autocast, AdamW at 1e-5 with a linear warm-up, gradient clipping at 1.0 and the loss logged every 25 steps.
The model is built with SDPA attention (PyTorch's fused scaled_dot_product_attention); the evaluation script that
goes with it, which asks generate() for word timestamps (they read the cross-attention weights), loads the
checkpoint with eager attention itself.

Random weights (no download on this machine); the 64 clips (4-14 s each) are synthetic, a few gliding tones over
noise, and their transcripts random token ids about 3.5 a second. The features and labels are prepared once, as
datasets.map() would, and the two batches of 32 are held in device memory. A step of the clock is one training
step."""

import time

import numpy as np
import torch
from transformers import (
    AutoModelForSpeechSeq2Seq,
    WhisperConfig,
    WhisperFeatureExtractor,
    get_linear_schedule_with_warmup,
)

torch.manual_seed(0)
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

sampling_rate = 16000
batch_size = 32

# ---------------------------------------------------------------------------------------------- the data

SOT, EN, TRANSCRIBE, NO_TIMESTAMPS, EOT = 50258, 50259, 50359, 50363, 50257


def synthetic_clip(rng):
    """A mono 16 kHz clip of 4-14 s: a few gliding tones with a syllable-like envelope over background noise."""
    seconds = rng.uniform(4, 14)
    t = np.arange(int(seconds * sampling_rate)) / sampling_rate
    audio = 0.01 * rng.standard_normal(t.shape)
    for _ in range(3):
        f0, f1 = rng.uniform(120, 900, size=2)
        phase = 2 * np.pi * (f0 * t + (f1 - f0) * t ** 2 / (2 * seconds))
        envelope = 0.5 + 0.5 * np.sin(2 * np.pi * rng.uniform(2, 5) * t)
        audio += 0.2 * envelope * np.sin(phase)
    return audio.astype(np.float32)


def synthetic_transcript(rng, seconds):
    """Token ids as the tokenizer would return them, the start-of-transcript token stripped as the collator does."""
    words = rng.integers(0, 50257, size=int(seconds * 3.5)).tolist()
    return [EN, TRANSCRIBE, NO_TIMESTAMPS] + words + [EOT]


rng = np.random.default_rng(0)
clips = [synthetic_clip(rng) for _ in range(64)]
transcripts = [synthetic_transcript(rng, len(clip) / sampling_rate) for clip in clips]

feature_extractor = WhisperFeatureExtractor(feature_size=80, sampling_rate=sampling_rate)


def collate(audio, labels):
    """The blog's DataCollatorSpeechSeq2SeqWithPadding: features as they come, labels padded with -100."""
    features = feature_extractor(audio, sampling_rate=sampling_rate, return_tensors="pt").input_features
    longest = max(len(ids) for ids in labels)
    padded = torch.full((len(labels), longest), -100, dtype=torch.long)
    for i, ids in enumerate(labels):
        padded[i, :len(ids)] = torch.tensor(ids)
    return {"input_features": features, "labels": padded}


train_batches = []
for i in range(0, len(clips), batch_size):
    batch = collate(clips[i:i + batch_size], transcripts[i:i + batch_size])
    train_batches.append({k: v.to(device) for k, v in batch.items()})

# ---------------------------------------------------------------------------------------------- the model

config = WhisperConfig(
    vocab_size=51865,
    num_mel_bins=80,
    d_model=512,
    encoder_layers=6,
    encoder_attention_heads=8,
    encoder_ffn_dim=2048,
    decoder_layers=6,
    decoder_attention_heads=8,
    decoder_ffn_dim=2048,
    max_source_positions=1500,
    max_target_positions=448,
    decoder_start_token_id=SOT,
    pad_token_id=EOT,
    bos_token_id=EOT,
    eos_token_id=EOT,
)
# SDPA for training: the evaluation's word-level timestamps (generate(..., return_token_timestamps=True)) read the
# cross-attention weights, which SDPA does not return, so the evaluation loads the checkpoint with eager attention
model = AutoModelForSpeechSeq2Seq.from_config(config, attn_implementation="sdpa").to(device)
model.config.use_cache = False
model.train()
print(f"Whisper with {sum(p.numel() for p in model.parameters()) / 1e6:.1f}M parameters")

optimizer = torch.optim.AdamW(model.parameters(), lr=1e-5)
scheduler = get_linear_schedule_with_warmup(optimizer, num_warmup_steps=500, num_training_steps=4000)

# ---------------------------------------------------------------------------------------------- training


def train_step(batch):
    with torch.autocast(device_type=device.type, dtype=torch.bfloat16):
        loss = model(**batch).loss
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    scheduler.step()
    optimizer.zero_grad(set_to_none=True)
    return loss


warmup, timed = 5, 20
for step in range(warmup):
    train_step(train_batches[step % len(train_batches)])
if device.type == "cuda":
    torch.cuda.synchronize()

start = time.perf_counter()
for step in range(timed):
    loss = train_step(train_batches[step % len(train_batches)])
    if step % 25 == 0:
        print(f"step {step} loss {loss.item():.4f} lr {scheduler.get_last_lr()[0]:.2e}")
if device.type == "cuda":
    torch.cuda.synchronize()
elapsed = time.perf_counter() - start

print(f"{elapsed * 1000 / timed:.3f} ms/step")
