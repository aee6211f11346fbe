"""Keeps copies of a model as training scripts do after it has run: copy.deepcopy for the best model so far (or an
EMA), and torch.save of the whole model. Then changes the model's weights in place and prints, as JSON, what the
model, its deep copy and its reloaded copy compute: the copies must keep the weights they were made with."""

import copy
import io
import json

import torch
from torch import nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 2))
x = torch.randn(4, 8)
with torch.no_grad():
    for _ in range(3):  # the model has run before the copies are made (the bridge's fixes are in from call 2)
        model(x)
    best = copy.deepcopy(model)
    saved = io.BytesIO()
    torch.save(model, saved)
    for p in model.parameters():
        p.add_(1.0)
    saved.seek(0)
    reloaded = torch.load(saved, weights_only=False)
    print(json.dumps({name: m(x).double().sum().item() for name, m in
                      (("model", model), ("deepcopy", best), ("reloaded", reloaded))}))
