"""What the GPU checks' scripts share: "ok NAME" / "not ok NAME: why" lines and the closing
"N passed, N failed", the collectives `gputap analyze --collectives` finds in one rank's trace, the
job's output, and `gputap fleet` over the run."""
import json
import os
import re
import subprocess


class Checks:
    def __init__(self):
        self.results = []

    def __call__(self, name, ok, why=""):
        self.results.append(bool(ok))
        print(("ok %s" % name) if ok else ("not ok %s: %s" % (name, why)))

    def summary(self):
        """Print the closing line; the exit status (0: all passed)."""
        passed = sum(self.results)
        print("%d passed, %d failed" % (passed, len(self.results) - passed))
        return 0 if passed == len(self.results) else 1


def collectives(exe, path):
    """The collective rows of `gputap analyze --format json --collectives PATH`, in launch order, or
    None with the analyzer's error."""
    cp = subprocess.run([exe, "analyze", "--format", "json", "--collectives", path], capture_output=True, text=True)
    if cp.returncode:
        return None, cp.stderr[-300:]
    rows = [c for r in json.loads(cp.stdout)["results"] for c in r.get("collectives", [])]
    rows.sort(key=lambda c: (c["launch_ns"] or c["start_ns"], c["start_ns"]))
    return rows, ""


def job_output(check, run, ranks=None, need=()):
    """The job's job.out in RUN and what the jobs of tests/gpu print there: (its text, the plant as (rank,
    from_step, steps, sleep_ms) from its PLANT line, {rank: value} of its CHECKSUM rank=R lines).
    Checked as "job-output": the plant is None when either is missing, or not `ranks` checksums, or
    a pattern of `need` not found."""
    out = open(os.path.join(run, "job.out")).read()
    m = re.search(r"PLANT rank=(\d+) from_step=(\d+) steps=(\d+) sleep_ms=([0-9.]+)", out)
    sums = {int(r): float(v) for r, v in re.findall(r"CHECKSUM rank=(\d+) (\S+)", out)}
    ok = bool(m and sums and (ranks is None or len(sums) == ranks) and all(re.search(n, out) for n in need))
    check("job-output", ok, "PLANT %s, CHECKSUM %s" % (bool(m), sums))
    plant = (int(m.group(1)), int(m.group(2)), int(m.group(3)), float(m.group(4))) if ok else None
    return out, plant, sums


def late_every_step(rows, slow, steps, sleep, lo=0.75, hi=1.25):
    """The steps (iterations) among `steps` in which fleet's collectives `rows` have no late arrival of
    rank `slow` by lo-hi times `sleep`: [(step, its latest lateness or None)]."""
    bad = []
    for it in steps:
        r = rows[(rows["iteration"] == it) & rows["is_late"] & (rows["late_rank"] == slow)]
        if not len(r) or not lo * sleep <= r["late_ms"].max() <= hi * sleep:
            bad.append((it, float(r["late_ms"].max()) if len(r) else None))
    return bad


def fleet_run(check, run, exe, world, workers=1):
    """`gputap fleet` over RUN (iterations: NVTX "train_step"; the analyzer EXE), checked as "ranks" (all
    `world` analysed, none failed); prints how its collectives were matched.  (summary, collectives)."""
    from gputap import fleet

    res = fleet.analyze([run], nvtx="train_step", workers=workers, gputap=exe, progress=None)
    s = res.summary
    print("rows by match", s["collective_rows_by_match"], "iterations", s["iterations"], "warnings", s["warnings"])
    check("ranks", s["ranks"] == world and not s["failed"], "%d ranks, failed %s" % (s["ranks"], s["failed"]))
    return s, res.collectives
