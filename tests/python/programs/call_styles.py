"""A classifier whose forward is wrapped in a decorator taking *args, as transformers wraps every model's forward,
called positionally in its warm-up and by keyword in its loop (--positional: positionally throughout). Prints as
JSON the logits' sums and how many frames torch compiled in the process (0 when nothing was compiled)."""

import functools
import json
import sys

import torch
from torch import nn

import models


def returns_tuple_if_asked(forward):
    @functools.wraps(forward)
    def wrapper(self, *args, **kwargs):
        return_dict = kwargs.pop("return_dict", True)
        out = forward(self, *args, **kwargs)
        return out if return_dict else (out,)

    return wrapper


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(64, 32)
        self.head = nn.Linear(32, 3)

    @returns_tuple_if_asked
    def forward(self, input_ids=None, attention_mask=None):
        hidden = self.embed(input_ids) * attention_mask[..., None]
        return self.head(torch.relu(hidden).mean(dim=1))


torch.manual_seed(0)
model = Classifier().eval()
batches = [(torch.randint(0, 64, (4, 8)), torch.ones(4, 8)) for _ in range(4)]
positional = "--positional" in sys.argv
sums = []
with torch.no_grad():
    for i in range(3):
        model(*batches[i])
    for i in range(12):
        ids, mask = batches[i % 4]
        logits = model(ids, mask) if positional else model(input_ids=ids, attention_mask=mask)
        sums.append(round(float(logits.sum()), 4))
print(json.dumps({"sums": sums, "frames": models.compiled_frames()}))
