"""The package's tests without the optional extras: a module that needs one is skipped (reported as
skipped, not passed), never a collection error that stops the whole run."""
import os
import subprocess
import sys

from conftest import HERE, child_env

# a finder ahead of every other that refuses the fleet extra's modules, as in a fresh environment
BLOCKER = '''
import sys
BLOCKED = {"duckdb", "dask", "distributed", "pyarrow", "pandas", "numpy"}
class Blocker:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in BLOCKED:
            raise ModuleNotFoundError("No module named %r" % name, name=name)
        return None
sys.meta_path.insert(0, Blocker())
'''


def test_fleet_tests_skipped_without_the_extra(tmp_path):
    (tmp_path / "noextras.py").write_text(BLOCKER)
    env = child_env()
    env["PYTHONPATH"] = str(tmp_path) + os.pathsep + env["PYTHONPATH"]
    p = subprocess.run([sys.executable, "-m", "pytest", "-p", "noextras", "-q", "-rs", "-p", "no:cacheprovider",
                        os.path.join(HERE, "test_fleet.py"), os.path.join(HERE, "test_fleet_readtrace.py")],
                       cwd=os.path.dirname(HERE), env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True, timeout=300)
    assert p.returncode == 5 or p.returncode == 0, p.stdout[-3000:]  # 5: nothing ran (all skipped)
    assert "2 skipped" in p.stdout and "error" not in p.stdout.lower(), p.stdout[-3000:]
    assert "duckdb, numpy" in p.stdout and "pip install './python[fleet]' duckdb" in p.stdout, p.stdout[-3000:]
