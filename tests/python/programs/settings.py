"""Prints as JSON the global settings the bridge's fixes may change: TF32 for matmuls and convolutions,
and the caching allocator's configuration."""

import json
import os

import torch

print(json.dumps({
    "matmul_tf32": torch.backends.cuda.matmul.allow_tf32,
    "cudnn_tf32": torch.backends.cudnn.allow_tf32,
    "alloc_conf": os.environ.get("PYTORCH_CUDA_ALLOC_CONF"),
}))
