"""A PyTorch training loop with NVTX ranges per phase, for range metrics.

  python3 rm_torch.py [--steps N]
Ranges: "step" around each iteration, inside it "forward", "backward",
"optimizer".  Prints the final loss (deterministic: fixed seed, fixed data),
so a run under gputap can be compared with a plain one.
"""
import sys

import torch

steps = int(sys.argv[sys.argv.index("--steps") + 1]) if "--steps" in sys.argv else 5
torch.manual_seed(0)
dev = "cuda"
model = torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.ReLU(), torch.nn.Linear(512, 10)).to(dev)
opt = torch.optim.SGD(model.parameters(), lr=0.01)
x = torch.randn(64, 256, device=dev)
y = torch.randint(0, 10, (64,), device=dev)
nvtx = torch.cuda.nvtx
for s in range(steps):
    nvtx.range_push("step")
    nvtx.range_push("forward")
    loss = torch.nn.functional.cross_entropy(model(x), y)
    nvtx.range_pop()
    nvtx.range_push("backward")
    opt.zero_grad()
    loss.backward()
    nvtx.range_pop()
    nvtx.range_push("optimizer")
    opt.step()
    nvtx.range_pop()
    nvtx.range_pop()
torch.cuda.synchronize()
print("loss %.6f" % loss.item())
