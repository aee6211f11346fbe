"""verify.py's watch over the losses after apply's check, driven by hand: the values of a run as written are
given, values.py notes this run's losses from real backward() calls, and the watch is told the model's fixes
were kept at step 10. Prints, as JSON, the step at which the watch rolled them back (null: never) and why.
Argument: the step from which this run's loss leaves the run as written's (0: never)."""

import json
import sys

import torch

from gpuscope_torch import values, verify

leaves_at = int(sys.argv[1])
reference = [1.0 - 0.01 * step for step in range(40)]
verify._reference.append({"losses": reference, "models": []})
values.install()
rolled = []
weight = torch.ones((), requires_grad=True)
for step, expected in enumerate(reference, 1):
    loss = weight * expected * (1.5 if leaves_at and step >= leaves_at else 1.0)
    loss.backward()
    if step == 10:
        verify.watch(["autocast"], lambda reason: rolled.append((step, reason)))
print(json.dumps({"rolled_back_at": rolled[0][0] if rolled else None, "reason": rolled[0][1] if rolled else None}))
