# PyTorch's side of ember_dist_bench's ddp_step_mlp784_vs_pytorch: one rank (env://, as started
# by ember_dist_bench) timing the Adam step of the 784-256-128-10 MLP at batch 64 under
# DistributedDataParallel on gloo with one thread, as bench/dist/dist_bench.cpp's worker_step.
# Usage: python3 ddp_step.py STEPS_PER_BLOCK BLOCKS; prints "result step_s <median seconds>".
import statistics
import sys
import time

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch import nn


def main():
    steps, blocks = int(sys.argv[1]), int(sys.argv[2])
    torch.set_num_threads(1)
    dist.init_process_group("gloo")
    torch.manual_seed(0)
    mlp = nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 128), nn.ReLU(), nn.Linear(128, 10))
    ddp = nn.parallel.DistributedDataParallel(mlp)
    opt = torch.optim.Adam(ddp.parameters(), lr=1e-3)
    gen = torch.Generator().manual_seed(dist.get_rank() + 1)
    x = torch.randn(64, 784, generator=gen)
    y = torch.randint(0, 10, (64,), generator=gen)

    def step():
        opt.zero_grad(set_to_none=True)  # Ember's default
        F.cross_entropy(ddp(x), y).backward()
        opt.step()

    for _ in range(steps):
        step()
    per_step = []
    for _ in range(blocks):
        t0 = time.perf_counter()
        for _ in range(steps):
            step()
        per_step.append((time.perf_counter() - t0) / steps)
    print(f"result step_s {statistics.median(per_step):.9g}", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
