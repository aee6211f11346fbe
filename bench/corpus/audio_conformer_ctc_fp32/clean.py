"""Speech recognition training: log-mel features computed on the GPU with torchaudio, two strided convolutions
that subsample time by 4, a torchaudio Conformer encoder (16 layers), and CTC loss over a 128-token vocabulary.
Synthetic 10 s utterances (a mix of tones and noise) with random transcripts, batch 32, AdamW; the model runs
under bf16 autocast, the features and the loss in fp32."""

import time

import torch
import torch.nn as nn
import torch.nn.functional as F
import torchaudio

SAMPLE_RATE = 16000
VOCAB = 128  # 0 is CTC's blank
device = "cuda"


class ConvSubsampling(nn.Module):
    def __init__(self, n_mels, dim):
        super().__init__()
        self.conv = nn.Sequential(nn.Conv2d(1, dim, 3, stride=2), nn.ReLU(), nn.Conv2d(dim, dim, 3, stride=2), nn.ReLU())
        self.out = nn.Linear(dim * (((n_mels - 1) // 2 - 1) // 2), dim)

    def forward(self, x, lengths):  # x: (batch, frames, mels)
        x = self.conv(x.unsqueeze(1))  # (batch, dim, frames/4, mels/4)
        b, c, t, f = x.shape
        x = self.out(x.transpose(1, 2).reshape(b, t, c * f))
        return x, ((lengths - 1) // 2 - 1) // 2


class ConformerCTC(nn.Module):
    def __init__(self, n_mels=80, dim=256, layers=16):
        super().__init__()
        self.subsample = ConvSubsampling(n_mels, dim)
        self.encoder = torchaudio.models.Conformer(input_dim=dim, num_heads=4, ffn_dim=1024, num_layers=layers,
                                                   depthwise_conv_kernel_size=31, dropout=0.1)
        self.head = nn.Linear(dim, VOCAB)

    def forward(self, feats, lengths):
        x, lengths = self.subsample(feats, lengths)
        x, lengths = self.encoder(x, lengths)
        return self.head(x).log_softmax(-1), lengths


def synthetic_batch(batch, seconds, generator):
    t = torch.arange(seconds * SAMPLE_RATE, device=device) / SAMPLE_RATE
    freqs = 100 + 900 * torch.rand(batch, 3, 1, device=device, generator=generator)
    wave = torch.sin(2 * torch.pi * freqs * t).sum(1) + 0.1 * torch.randn(batch, t.numel(), device=device,
                                                                          generator=generator)
    targets = torch.randint(1, VOCAB, (batch, 120), device=device, generator=generator)
    return wave, targets


def main():
    torch.manual_seed(0)
    generator = torch.Generator(device=device).manual_seed(0)
    featurizer = torchaudio.transforms.MelSpectrogram(SAMPLE_RATE, n_fft=400, hop_length=160, n_mels=80).to(device)
    model = ConformerCTC().to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=1e-2)
    batches = [synthetic_batch(32, 10, generator) for _ in range(4)]
    target_lengths = torch.full((32,), 120, device=device)

    def train_step(wave, targets):
        feats = (featurizer(wave) + 1e-6).log().transpose(1, 2)  # (batch, frames, mels)
        lengths = torch.full((wave.shape[0],), feats.shape[1], device=device)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            log_probs, out_lengths = model(feats, lengths)
        log_probs = log_probs.float().transpose(0, 1)
        loss = F.ctc_loss(log_probs, targets, out_lengths, target_lengths, zero_infinity=True)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 5.0)
        optimizer.step()
        return loss

    model.train()
    for step in range(5):
        train_step(*batches[step % 4])
    torch.cuda.synchronize()
    steps = 40
    losses = []
    start = time.perf_counter()
    for step in range(steps):
        losses.append(train_step(*batches[step % 4]).detach())
    torch.cuda.synchronize()
    elapsed = time.perf_counter() - start
    print(f"loss {torch.stack(losses).mean().item():.4f}")
    print(f"{elapsed / steps * 1000:.3f} ms/step")


if __name__ == "__main__":
    main()
