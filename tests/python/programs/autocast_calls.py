"""Calls a small model four times and prints as JSON, call by call, how many autocast contexts the bridge had
entered around it (0 without the bridge). With --featurizer, each call's input first goes through a module with
no parameters called at top level (as torchaudio's MelSpectrogram is before a speech model), and the JSON holds
both: {"featurizer": [...], "model": [...]}."""

import json
import sys

import torch
from torch import nn


def entered():
    bridge = sys.modules.get("gpuscope_torch.apply")
    return len(bridge._autocast) if bridge else 0


class Featurizer(nn.Module):
    def forward(self, x):
        SEEN["featurizer"].append(entered())
        return (x * x + 1e-6).log()


class Probe(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(4, 4)

    def forward(self, x):
        SEEN["model"].append(entered())
        return self.linear(x)


SEEN = {"featurizer": [], "model": []}
featurizer = Featurizer() if "--featurizer" in sys.argv else None
model = Probe()
for _ in range(4):
    x = torch.randn(2, 4)
    model(featurizer(x) if featurizer else x)
print(json.dumps(SEEN if featurizer else SEEN["model"]))
