"""Sequence-to-sequence GRU trained with teacher forcing, the shape of PyTorch's seq2seq translation tutorial:
a GRU encoder, and a decoder that steps through the target one position at a time (embedding, ReLU, GRU cell,
linear, log-softmax), the NLL loss summed over the positions. Batches of random token ids on the GPU."""

import time

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
device = torch.device("cuda")

vocab_size, embed_size, hidden_size = 5000, 256, 512
batch_size, src_len, tgt_len = 64, 30, 30
SOS_token = 0


class EncoderRNN(nn.Module):
    def __init__(self, vocab_size, embed_size, hidden_size, dropout_p=0.1):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, embed_size)
        self.gru = nn.GRU(embed_size, hidden_size, batch_first=True)
        self.dropout = nn.Dropout(dropout_p)

    def forward(self, input):
        embedded = self.dropout(self.embedding(input))
        output, hidden = self.gru(embedded)
        return output, hidden


class DecoderRNN(nn.Module):
    def __init__(self, vocab_size, embed_size, hidden_size):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, embed_size)
        self.gru = nn.GRUCell(embed_size, hidden_size)
        self.out = nn.Linear(hidden_size, vocab_size)

    def forward(self, input, hidden):
        output = F.relu(self.embedding(input))
        hidden = self.gru(output, hidden)
        return F.log_softmax(self.out(hidden), dim=1), hidden


encoder = EncoderRNN(vocab_size, embed_size, hidden_size).to(device)
decoder = DecoderRNN(vocab_size, embed_size, hidden_size).to(device)
encoder_optimizer = torch.optim.SGD(encoder.parameters(), lr=0.01)
decoder_optimizer = torch.optim.SGD(decoder.parameters(), lr=0.01)
criterion = nn.NLLLoss()

pairs = [(torch.randint(1, vocab_size, (batch_size, src_len), device=device),
          torch.randint(1, vocab_size, (batch_size, tgt_len), device=device)) for _ in range(8)]
sos = torch.full((batch_size,), SOS_token, dtype=torch.long, device=device)


def train_step(input_tensor, target_tensor):
    encoder_optimizer.zero_grad()
    decoder_optimizer.zero_grad()
    _, encoder_hidden = encoder(input_tensor)
    decoder_hidden = encoder_hidden[0]
    # Teacher forcing: feed the target as the next input
    decoder_input = sos
    loss = 0
    for di in range(tgt_len):
        decoder_output, decoder_hidden = decoder(decoder_input, decoder_hidden)
        loss += criterion(decoder_output, target_tensor[:, di])
        decoder_input = target_tensor[:, di]
    loss.backward()
    encoder_optimizer.step()
    decoder_optimizer.step()
    return loss.detach() / tgt_len


encoder.train()
decoder.train()
warmup_steps, timed_steps = 3, 30

for step in range(warmup_steps):
    train_step(*pairs[step % len(pairs)])
torch.cuda.synchronize()

start = time.perf_counter()
for step in range(timed_steps):
    loss = train_step(*pairs[step % len(pairs)])
torch.cuda.synchronize()
elapsed = time.perf_counter() - start

print(f"final loss {loss.item():.4f}")
print(f"{elapsed * 1000 / timed_steps:.3f} ms/step")
