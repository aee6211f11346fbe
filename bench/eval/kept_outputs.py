"""What torch.compile(mode="reduce-overhead") does to a model's outputs that the caller keeps across calls, as an
evaluation loop that appends every batch's logits to a list does: each call's output is compared with the same
call run eagerly, once all calls are done. Prints one line per mode: the calls whose kept output differs from
eager, or the error raised when they are read. Run on a GPU (bench/corpus/pt_eval_keeps_outputs is the case)."""

import json

import torch
import torch.nn as nn


def model():
    torch.manual_seed(0)
    return nn.Sequential(nn.Conv2d(3, 32, 3, padding=1), nn.BatchNorm2d(32), nn.Hardswish(),
                         nn.Conv2d(32, 21, 1)).cuda().eval()


def run(fn, inputs, grad):
    kept = []
    with torch.set_grad_enabled(grad):
        for x in inputs:
            kept.append(fn(x))
    try:
        return [k.detach().float().clone() for k in kept], None
    except RuntimeError as error:
        return None, str(error).splitlines()[0][:200]


def main():
    inputs = [torch.randn(4, 3, 64, 64, device="cuda") for _ in range(8)]
    eager = model()
    expected, _ = run(eager, inputs, grad=False)
    report = {}
    for mode in ("default", "reduce-overhead"):
        for grad in (False, True):
            compiled = torch.compile(model(), mode=mode)
            kept, error = run(compiled, inputs, grad)
            name = f"{mode}, grad {'on' if grad else 'off'}"
            if error:
                report[name] = {"error reading kept outputs": error}
            else:
                differ = [i for i, (k, e) in enumerate(zip(kept, expected)) if not torch.allclose(k, e, atol=1e-3)]
                report[name] = {"calls whose kept output differs from eager": differ}
            torch._dynamo.reset()
    print(json.dumps({"torch": torch.__version__, **report}, indent=1))


if __name__ == "__main__":
    main()
