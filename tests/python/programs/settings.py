"""Prints as JSON the global settings the bridge's fixes may change: TF32 for matmuls and convolutions,
whether scaled_dot_product_attention may run cuDNN's attention, and the caching allocator's configuration."""

import json
import os

import torch

print(json.dumps({
    "matmul_tf32": torch.backends.cuda.matmul.allow_tf32,
    "cudnn_tf32": torch.backends.cudnn.allow_tf32,
    "cudnn_sdp": torch.backends.cuda.cudnn_sdp_enabled(),
    "alloc_conf": os.environ.get("PYTORCH_CUDA_ALLOC_CONF"),
}))
