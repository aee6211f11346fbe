"""One rank of a two-process job (torchrun, gloo on the CPU) asking whether any rank found the fixes slower:
the ranks named in the second argument (comma-separated) did. Writes this rank's answer as JSON to
RANK.json in the folder the first argument names.

Usage: ranks_agree.py OUT_DIR SLOW_RANKS"""

import json
import sys

import torch.distributed as dist

from gpuscope_torch import apply

dist.init_process_group("gloo")
rank = dist.get_rank()
slow_ranks = {int(r) for r in sys.argv[2].split(",") if r}
slower, where = apply._slower_on_any_rank("Net", rank in slow_ranks)
with open(f"{sys.argv[1]}/{rank}.json", "w") as out:
    json.dump({"rank": rank, "slower": slower, "where": where}, out)
dist.destroy_process_group()
