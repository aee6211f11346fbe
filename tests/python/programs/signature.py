"""A decoding loop that reads its model's forward signature, as transformers' generate does: it asks for the
last position's logits only when forward takes logits_to_keep. Prints as JSON the parameters it saw and the
shapes of the logits it got, call by call."""

import inspect
import json

import torch
from torch import nn


class Decoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(32, 16)
        self.head = nn.Linear(16, 32)

    def forward(self, input_ids, logits_to_keep=0):
        hidden = torch.tanh(self.embed(input_ids))
        return self.head(hidden[:, -logits_to_keep:, :])


torch.manual_seed(0)
model = Decoder()
ids = torch.randint(0, 32, (1, 6))
seen, shapes = [], []
with torch.no_grad():
    for _ in range(4):
        params = list(inspect.signature(model.forward).parameters)
        kwargs = {"logits_to_keep": 1} if "logits_to_keep" in params else {}
        logits = model(ids, **kwargs)
        seen.append(params)
        shapes.append(list(logits.shape))
        ids = torch.cat([ids, logits[:, -1:].argmax(-1)], dim=1)
print(json.dumps({"params": seen, "shapes": shapes}))
