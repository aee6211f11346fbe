"""Small models shaped like the ones the bridge meets, for the programs the tests run.

Blocks count their own forward calls (in CALLS, by the name label() gave them), in the body of forward: a
checkpointed block's recomputation calls forward directly, past the module hooks, and must count too.
"""

import collections
import sys

import torch
from torch import nn

CALLS = collections.Counter()


def compiled_frames():
    """How many frames torch has compiled in this process so far (0 when nothing was compiled)."""
    utils = sys.modules.get("torch._dynamo.utils")
    return utils.counters["frames"]["ok"] if utils else 0


def label(model):
    """Names every module by its path in the model, for CALLS."""
    for name, module in model.named_modules():
        module.label = name or type(model).__name__
    return model


class Scale(nn.Module):
    """Made inside Net's forward on every call, so the bridge meets a module no tree holds."""

    def forward(self, x):
        return x * 0.5


class Fragile(nn.Module):
    """Always raises; Net catches it, as a program that tries a path and falls back would."""

    def forward(self, x):
        raise ValueError("fragile")


class Gate(nn.Module):
    """Two inputs that need a gradient, whose gradients come at different moments of the backward pass."""

    def forward(self, x, gate):
        return x * torch.sigmoid(gate)


class Block(nn.Module):
    """A residual MLP block: modules made of modules, like a transformer layer."""

    def __init__(self, width):
        super().__init__()
        self.fc1 = nn.Linear(width, width)
        self.act = nn.ReLU()
        self.fc2 = nn.Linear(width, width)

    def forward(self, x):
        CALLS[self.label] += 1
        return x + self.fc2(self.act(self.fc1(x)))


class Net(nn.Module):
    """The annotation tests' model: a first layer whose input needs no gradient, a ModuleList of blocks, a
    module that raises, a module of two inputs, a module made during forward, and a head."""

    def __init__(self, width=16, blocks=3):
        super().__init__()
        self.embed = nn.Linear(8, width)
        self.blocks = nn.ModuleList(Block(width) for _ in range(blocks))
        self.fragile = Fragile()
        self.gate_in = nn.Linear(width, width)
        self.gate = Gate()
        self.head = nn.Linear(width, 4)

    def forward(self, x):
        h = self.embed(x)
        for block in self.blocks:
            h = block(h)
        try:
            self.fragile(h)
        except ValueError:
            pass
        h = self.gate(h, self.gate_in(h))
        return self.head(Scale()(h))


class Transformer(nn.Module):
    """A transformer's layout: an embedding, a ModuleList of like blocks, a norm and a head."""

    def __init__(self, width=16, layers=4):
        super().__init__()
        self.embed = nn.Linear(8, width)
        self.layers = nn.ModuleList(Block(width) for _ in range(layers))
        self.norm = nn.LayerNorm(width)
        self.head = nn.Linear(width, 4)

    def forward(self, x):
        h = self.embed(x)
        for layer in self.layers:
            h = layer(h)
        return self.head(self.norm(h))


class Bottleneck(nn.Module):
    """torchvision's bottleneck, small: 1x1, 3x3, 1x1 convolutions and a downsample Sequential of a
    convolution and a norm (a Sequential of unlike modules, which is no run of blocks)."""

    def __init__(self, channels_in, channels, stride=1):
        super().__init__()
        self.conv1 = nn.Conv2d(channels_in, channels, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(channels)
        self.conv2 = nn.Conv2d(channels, channels, 3, stride=stride, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(channels)
        self.relu = nn.ReLU()
        self.downsample = None
        if stride != 1 or channels_in != channels:
            self.downsample = nn.Sequential(nn.Conv2d(channels_in, channels, 1, stride=stride, bias=False),
                                            nn.BatchNorm2d(channels))

    def forward(self, x):
        CALLS[self.label] += 1
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return self.relu(out + (x if self.downsample is None else self.downsample(x)))


class ResNet(nn.Module):
    """torchvision's ResNet layout: a stem, stages layer1..layer3 (each a Sequential of bottlenecks, held
    as attributes), pooling and a head."""

    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1, bias=False), nn.BatchNorm2d(8), nn.ReLU())
        self.layer1 = nn.Sequential(Bottleneck(8, 8), Bottleneck(8, 8))
        self.layer2 = nn.Sequential(Bottleneck(8, 16, stride=2), Bottleneck(16, 16))
        self.layer3 = nn.Sequential(Bottleneck(16, 16, stride=2), Bottleneck(16, 16), Bottleneck(16, 16))
        self.head = nn.Linear(16, 4)

    def forward(self, x):
        x = self.layer3(self.layer2(self.layer1(self.stem(x))))
        return self.head(x.mean(dim=(2, 3)))


class Stage(nn.Sequential):
    """A Sequential of bottlenecks that counts its calls."""

    def forward(self, x):
        CALLS[self.label] += 1
        return super().forward(x)


class NestedStages(nn.Module):
    """Runs of blocks inside a run: a Sequential of stages, each a Sequential of bottlenecks."""

    def __init__(self):
        super().__init__()
        self.stages = nn.Sequential(Stage(Bottleneck(3, 8), Bottleneck(8, 8)),
                                    Stage(Bottleneck(8, 8), Bottleneck(8, 8)))
        self.head = nn.Linear(8, 4)

    def forward(self, x):
        return self.head(self.stages(x).mean(dim=(2, 3)))


class SelfCheckpointing(Transformer):
    """A model with its own switch for checkpointing, as transformers' PreTrainedModel has; it records how
    it was called and leaves its blocks as they are."""

    supports_gradient_checkpointing = True

    def __init__(self):
        super().__init__()
        self.enabled_with = None

    def gradient_checkpointing_enable(self, **kwargs):
        self.enabled_with = kwargs


MODELS = {"net": Net, "transformer": Transformer, "resnet": ResNet, "nested": NestedStages,
          "self_checkpointing": SelfCheckpointing}


def example_input(model_name, batch=4):
    if model_name in ("resnet", "nested"):
        return torch.randn(batch, 3, 16, 16)
    return torch.randn(batch, 8)
