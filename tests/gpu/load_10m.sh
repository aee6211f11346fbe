#!/usr/bin/env bash
# Load: 10 million kernel launches (sample_stress_launch: 4 threads × 2.5 million) recorded; the trace's
# kernel count and data-quality rows (a dropped_records row would give the exact count lost), the
# program's peak resident memory with and without the collector, and the time both took.
# Usage: load_10m.sh CARRY_DIR OUT_DIR
set -u
carry=$1 out=$2
work=$(mktemp -d)
peak() {  # runs a command; prints its wall time and the largest resident set of it and its children
  python3 - "$@" <<'PY'
import resource, subprocess, sys, time
start = time.time()
status = subprocess.run(sys.argv[1:]).returncode
print(f"status {status}, {time.time() - start:.1f} s, peak resident {resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024:.0f} MiB")
PY
}
echo "== plain"
peak "$carry/bin/sample_stress_launch" 2500000
echo "== recorded, 1 million launches (is the collector's memory bounded?)"
peak "$carry/bin/gpuscope" record -q -o "$work/load1m.gpuscope" -- "$carry/bin/sample_stress_launch" 250000
echo "== recorded, 10 million (times: the program's last line, then gpuscope's exit)"
python3 - "$carry/bin/gpuscope" record -q -o "$work/load.gpuscope" -- "$carry/bin/sample_stress_launch" 2500000 <<'PY'
import resource, subprocess, sys, time
start = time.time()
p = subprocess.Popen(sys.argv[1:], stdout=subprocess.PIPE, text=True)
for line in p.stdout:
    print(f"{time.time() - start:6.1f} s: {line.rstrip()}")
status = p.wait()
print(f"{time.time() - start:6.1f} s: gpuscope exited with {status}; peak resident "
      f"{resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024:.0f} MiB")
PY
"$carry/bin/gpuscope" info "$work/load.gpuscope" | tee "$out/load_10m_info.txt"
ls -la "$work/load.gpuscope"
rm -rf "$work"
