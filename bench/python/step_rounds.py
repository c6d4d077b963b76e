"""Training step with ranges against no package, interleaved block by block
(for bench/python/run.sh; needs a GPU and PyTorch).

  step_rounds.py OUT.jsonl ROUNDS STEPS [GPUTAP]

One warm process per mode (step.py MODE STEPS --serve): none (gputap not
imported), off (ranges, no init), on (ranges, init() in-process), and, when the
gputap program is given, gputap-run (`on` under `gputap run`).  The processes
start one after another; then, ROUNDS times, each in turn runs one timed block
of STEPS steps while the others wait on their input (no GPU work), so drift of
the machine falls on every mode alike.  Prints the medians and writes every
block's JSON line to OUT.jsonl."""
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

OUT, ROUNDS, STEPS = sys.argv[1], int(sys.argv[2]), sys.argv[3]
GPUTAP = sys.argv[4] if len(sys.argv) > 4 else None
STEP = os.path.join(os.path.dirname(os.path.abspath(__file__)), "step.py")
tmp = tempfile.mkdtemp(prefix="gt-bench-step-")


def start(mode):
    cmd = [sys.executable, STEP, "on" if mode == "gputap-run" else mode, STEPS, "--serve"]
    if mode == "gputap-run":
        cmd = [GPUTAP, "run", "-o", os.path.join(tmp, "run"), "--"] + cmd
    p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    reply(p, mode)  # warm: {"ready": true}
    return p


def reply(p, mode):
    for line in p.stdout:
        if line.startswith("{"):
            return json.loads(line)
    raise SystemExit("step_rounds.py: the %s process ended early (exit status %s)" % (mode, p.wait()))


modes = ["none", "off", "on"] + (["gputap-run"] if GPUTAP else [])
procs = {m: start(m) for m in modes}
rows = []
try:
    for i in range(ROUNDS):
        for m in modes:
            p = procs[m]
            p.stdin.write("go\n")
            p.stdin.flush()
            r = reply(p, m)
            r.update(mode=m, round=i)
            rows.append(r)
finally:
    for p in procs.values():
        try:
            p.stdin.close()
        except OSError:
            pass
        p.wait()
    shutil.rmtree(tmp, ignore_errors=True)
with open(OUT, "w") as f:
    for r in rows:
        f.write(json.dumps(r) + "\n")
by = {}
for r in rows:
    by.setdefault(r["mode"], []).append(r["ms_per_step"])
base = statistics.median(by["none"])
print("training step (ms per step; %d interleaved blocks of %s steps per mode, one warm process each):"
      % (ROUNDS, STEPS))
for m in modes:
    v = by[m]
    print("  %-11s %7.3f ms  x%.3f  (blocks %.3f..%.3f)" % (m, statistics.median(v), statistics.median(v) / base,
                                                          min(v), max(v)))
last = {r["mode"]: r for r in rows}
for m in modes[1:]:
    r = last[m]
    print("  %-11s gputap mode %s, binding %s, 'step' calls %s, kernels %s"
          % (m, r.get("gputap_mode"), r.get("binding"), r.get("step_calls"), r.get("step_kernels")))
