"""Without a driver or a GPU: init() raises the documented exception, nothing else breaks."""
from conftest import run_py

SCRIPT = """
import gputap
try:
    gputap.init()
except gputap.GPUUnavailableError as e:
    print("GPUUnavailableError:", e)
else:
    print("started")
with gputap.range("still-works"):
    pass
print("results", type(gputap.results()).__name__)
"""


def test_init_without_gpu_raises_documented_error():
    # No device visible: on a CPU machine there is no driver at all; on a GPU
    # machine CUDA_VISIBLE_DEVICES="" hides every device.  Both must raise.
    r = run_py(SCRIPT, CUDA_VISIBLE_DEVICES="")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].startswith("GPUUnavailableError: "), r.stdout
    assert len(lines[0]) > len("GPUUnavailableError: ") + 10  # says what is missing
    assert lines[1] == "results dict"
    assert r.stderr == "", r.stderr  # nothing printed unless asked


def test_init_with_unloadable_library():
    r = run_py(SCRIPT, GPUTAP_LIB="/nonexistent/libgputap.so")
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("GPUUnavailableError: libgputap.so could not be loaded"), r.stdout
