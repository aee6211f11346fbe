"""Word-level language model trained as PyTorch's examples/word_language_model/main.py trains it: an embedding,
a two-layer LSTM (200 units, dropout 0.2) and a linear decoder over a 33,278-word vocabulary (WikiText-2's),
log-softmax and NLL loss, truncated backpropagation through time over 35 tokens with the hidden state detached
between batches, gradients clipped to 0.25, and the example's own SGD update (`p.data.add_(p.grad, alpha=-lr)`
for each parameter); the loss is summed with `loss.item()` for the log.

The corpus is synthetic (random token ids of WikiText-2's size, batchified on the GPU as the example does); the
model, the sizes and the loop are the example's defaults."""

import math
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(1111)
device = torch.device("cuda")

ntokens, emsize, nhid, nlayers, dropout = 33278, 200, 200, 2, 0.2
batch_size, bptt, lr, clip = 20, 35, 20.0, 0.25


class RNNModel(nn.Module):
    """Container module with an encoder, a recurrent module, and a decoder."""

    def __init__(self, ntoken, ninp, nhid, nlayers, dropout=0.5):
        super().__init__()
        self.ntoken = ntoken
        self.drop = nn.Dropout(dropout)
        self.encoder = nn.Embedding(ntoken, ninp)
        self.rnn = nn.LSTM(ninp, nhid, nlayers, dropout=dropout)
        self.decoder = nn.Linear(nhid, ntoken)
        self.nhid = nhid
        self.nlayers = nlayers
        self.init_weights()

    def init_weights(self):
        initrange = 0.1
        nn.init.uniform_(self.encoder.weight, -initrange, initrange)
        nn.init.zeros_(self.decoder.bias)
        nn.init.uniform_(self.decoder.weight, -initrange, initrange)

    def forward(self, input, hidden):
        emb = self.drop(self.encoder(input))
        output, hidden = self.rnn(emb, hidden)
        output = self.drop(output)
        decoded = self.decoder(output)
        decoded = decoded.view(-1, self.ntoken)
        return F.log_softmax(decoded, dim=1), hidden

    def init_hidden(self, bsz):
        weight = next(self.parameters())
        return (weight.new_zeros(self.nlayers, bsz, self.nhid), weight.new_zeros(self.nlayers, bsz, self.nhid))


def batchify(data, bsz):
    nbatch = data.size(0) // bsz
    data = data.narrow(0, 0, nbatch * bsz)
    data = data.view(bsz, -1).t().contiguous()
    return data.to(device)


def repackage_hidden(h):
    """Wraps hidden states in new Tensors, to detach them from their history."""
    if isinstance(h, torch.Tensor):
        return h.detach()
    return tuple(repackage_hidden(v) for v in h)


def get_batch(source, i):
    seq_len = min(bptt, len(source) - 1 - i)
    data = source[i : i + seq_len]
    target = source[i + 1 : i + 1 + seq_len].view(-1)
    return data, target


train_data = batchify(torch.randint(ntokens, (2088628,)), batch_size)
model = RNNModel(ntokens, emsize, nhid, nlayers, dropout).to(device)
criterion = nn.NLLLoss()


def train(first, steps, hidden):
    total_loss = 0.0
    for batch, i in enumerate(range(first * bptt, (first + steps) * bptt, bptt)):
        data, targets = get_batch(train_data, i)
        # Starting each batch, we detach the hidden state from how it was previously produced.
        hidden = repackage_hidden(hidden)
        model.zero_grad()
        output, hidden = model(data, hidden)
        loss = criterion(output, targets)
        loss.backward()
        # `clip_grad_norm` helps prevent the exploding gradient problem in RNNs / LSTMs.
        torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
        for p in model.parameters():
            p.data.add_(p.grad, alpha=-lr)
        total_loss += loss.item()
    return total_loss, hidden


model.train()
hidden = model.init_hidden(batch_size)
_, hidden = train(0, 20, hidden)
torch.cuda.synchronize()
timed = 200
start = time.perf_counter()
total_loss, hidden = train(20, timed, hidden)
torch.cuda.synchronize()
elapsed = time.perf_counter() - start
cur_loss = total_loss / timed
print(f"loss {cur_loss:5.2f} | ppl {math.exp(cur_loss):8.2f}")
print(f"{elapsed * 1000 / timed:.3f} ms/step")
