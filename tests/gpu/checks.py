"""What the GPU checks' scripts share: "ok NAME" / "not ok NAME: why" lines and the closing
"N passed, N failed", and the collectives `gputap analyze --collectives` finds in one rank's trace."""
import json
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
