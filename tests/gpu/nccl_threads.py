"""Two threads of each rank call NCCL at once (torchrun, 2 ranks): one all-reduces on process group A,
the other broadcasts on process group B, 40 times each, after a barrier.  What the profiler-plugin
records must be matched to: the kernels their own thread launched (docs/analyze.md).  Prints the
job's checksum; tests/gpu/check_nccl_threads.py checks the run."""
import os
import threading

import torch
import torch.distributed as dist

N = 40


def main():
    dist.init_process_group("nccl")
    rank = dist.get_rank()
    torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", rank)))
    pg_a, pg_b = dist.new_group([0, 1]), dist.new_group([0, 1])
    x = torch.full((1 << 18,), float(rank + 1), device="cuda")
    y = torch.full((1 << 18,), float(rank + 1), device="cuda")
    dist.all_reduce(x, group=pg_a)
    dist.broadcast(y, 0, group=pg_b)
    torch.cuda.synchronize()
    bar = threading.Barrier(2)

    def loop(fn):
        s = torch.cuda.Stream()
        with torch.cuda.stream(s):
            bar.wait()
            for _ in range(N):
                fn()
        s.synchronize()

    ta = threading.Thread(target=loop, args=(lambda: dist.all_reduce(x, group=pg_a),))
    tb = threading.Thread(target=loop, args=(lambda: dist.broadcast(y, 0, group=pg_b),))
    ta.start()
    tb.start()
    ta.join()
    tb.join()
    torch.cuda.synchronize()
    print("CHECKSUM rank%d %.6e %.6e" % (rank, float(x.double().sum()), float(y.double().sum())))
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
