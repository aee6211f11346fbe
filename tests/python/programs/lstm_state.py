"""A word-level LSTM language model trained as PyTorch's word_language_model example trains it: the forward takes
the hidden state and returns the new one, which the script detaches and hands to the next call; five steps, each
step's loss printed as JSON.

Under CUDA autocast, whatever its dtype, cuDNN's LSTM runs in fp16 and returns its hidden state in fp16; handed
back to a call that runs without that autocast, it meets fp32 inputs and the LSTM raises ("Input and hidden tensors
are not the same dtype"). Without CUDA, torch.autocast("cuda") switches itself off: there, whenever the bridge has
entered its autocast around the call, the state is returned as cuDNN's LSTM returns it under autocast."""

import json
import sys

import torch
import torch.nn.functional as F
from torch import nn

device = "cuda" if torch.cuda.is_available() else "cpu"


class RNNModel(nn.Module):
    def __init__(self, ntoken=50, ninp=16, nhid=16, nlayers=2):
        super().__init__()
        self.encoder = nn.Embedding(ntoken, ninp)
        self.rnn = nn.LSTM(ninp, nhid, nlayers)
        self.decoder = nn.Linear(nhid, ntoken)
        self.ntoken = ntoken

    def forward(self, input, hidden):
        output, hidden = self.rnn(self.encoder(input), hidden)
        decoded = self.decoder(output).view(-1, self.ntoken)
        bridge = sys.modules.get("gpuscope_torch.apply")
        if not decoded.is_cuda and bridge is not None and bridge._autocast:
            hidden = tuple(h.to(torch.float16) for h in hidden)
        return F.log_softmax(decoded, dim=1), hidden


torch.manual_seed(0)
model = RNNModel().to(device)
data = torch.randint(50, (6 * 8 + 1, 4), device=device)
hidden = (torch.zeros(2, 4, 16, device=device), torch.zeros(2, 4, 16, device=device))
losses = []
for i in range(0, 6 * 8, 8):
    hidden = tuple(h.detach() for h in hidden)
    model.zero_grad()
    output, hidden = model(data[i : i + 8], hidden)
    loss = F.nll_loss(output, data[i + 1 : i + 9].reshape(-1))
    loss.backward()
    for p in model.parameters():
        p.data.add_(p.grad, alpha=-1.0)
    losses.append(loss.item())
print(json.dumps(losses))
