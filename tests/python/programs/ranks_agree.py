"""One rank of a two-process job (torchrun, gloo on the CPU) asking whether every rank's calls with the fixes
were far apart from its run as written's (the ranks named in the third argument, comma-separated, found them too
close), then whether any rank found the fixes slower (the ranks named in the second argument did). Writes this
rank's answers as JSON to RANK.json in the folder the first argument names.

Usage: ranks_agree.py OUT_DIR SLOW_RANKS [CLOSE_RANKS]"""

import json
import sys

import torch.distributed as dist

from gpuscope_torch import apply

dist.init_process_group("gloo")
rank = dist.get_rank()
slow_ranks = {int(r) for r in sys.argv[2].split(",") if r}
close_ranks = {int(r) for r in (sys.argv[3] if len(sys.argv) > 3 else "").split(",") if r}
apart = apply._apart_on_every_rank("Net", rank not in close_ranks)
slower, where = apply._slower_on_any_rank("Net", rank in slow_ranks)
with open(f"{sys.argv[1]}/{rank}.json", "w") as out:
    json.dump({"rank": rank, "apart": apart, "slower": slower, "where": where}, out)
dist.destroy_process_group()
