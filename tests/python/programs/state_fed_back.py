"""carried_state.py's recurrent cell (MODE: carry, each step handed the state the previous one returned; fresh, a
new zero state each step, often at an address an earlier output was freed from), with the bridge's module
annotation installed for STEPS steps and the NVTX spy recording. Writes the spy's events to OUT as JSON.

Usage: state_fed_back.py OUT STEPS MODE"""

import json
import pathlib
import runpy
import sys

import nvtx_spy


def main():
    out, steps, mode = sys.argv[1:4]
    nvtx_spy.install()
    from gpuscope_torch import annotate

    annotate.install(steps=steps)
    sys.argv = ["carried_state.py", mode]
    runpy.run_path(str(pathlib.Path(__file__).with_name("carried_state.py")), run_name="__main__")
    with open(out, "w") as f:
        json.dump({"events": nvtx_spy.events}, f)


if __name__ == "__main__":
    main()
