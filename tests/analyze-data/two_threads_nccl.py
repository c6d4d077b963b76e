"""A process whose two threads call NCCL at once (PyTorch's main thread and autograd's can): per
step, thread 1 launches an AllReduce on communicator A, thread 2 one on communicator B a microsecond
later, and each thread's profiler-plugin record starts just after its own launch, so between thread
1's launch and its record comes thread 2's launch.  Matching a record to the kernels launched around
it in the process would give thread 1's record thread 2's kernel; by the record's own thread it is
its own.

    python3 two_threads_nccl.py OUT/trace.gtr      (prints the expected rows as JSON)
"""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
from gputap.fleet.gtrwrite import TraceWriter  # noqa: E402

US = 1000
T0 = 1_800_000_000_000_000_000
COMM = {1: 0x1111222233334444, 2: 0x5555666677778888}
KERNEL = "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)"


def main():
    w = TraceWriter(sys.argv[1], "rank0", "node0", pid=4242, start_ns=T0)
    want = []
    for step in range(8):
        base = T0 + step * 1000 * US
        for tid in (1, 2):  # thread 2 launches a microsecond after thread 1
            corr = 10 * step + tid
            launch = base + (tid - 1) * US
            w.api("cuLaunchKernelEx", launch, launch + US // 2, corr, tid=100 + tid)
            w.kernel(KERNEL, 0, tid, base + 20 * US + tid * 5 * US, base + 120 * US + tid * 5 * US, corr)
            want.append({"comm": "0x%016x" % COMM[tid], "seq": step, "start_ns": base + 20 * US + tid * 5 * US})
        for tid in (1, 2):  # each record just after its own thread's launch, after both launches
            rec = base + (tid + 1) * US
            w.nccl_coll(COMM[tid], step, rec, rec + 50 * US, "AllReduce", "RING", "LL", 1024, 0, 2, tid=100 + tid)
    w.close()
    print(json.dumps(want))


if __name__ == "__main__":
    main()
