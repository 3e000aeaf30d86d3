#!/usr/bin/python3
"""PyTorch peer of the moe_train layer benchmark: one Mixtral-style sparse MoE block, CPU eager, forward and
backward, timed per iteration.

The block is the Hugging Face transformers MixtralSparseMoeBlock algorithm (written here from its description):
router Linear(h, E, bias=False) -> softmax over the E experts -> top-k -> the k weights renormalised to sum 1
(the same as top-k on the logits then softmax over the k); per expert SwiGLU w2(silu(w1 x) * w3 x), no biases;
tokens reach an expert through torch.where on a one-hot expert mask, rows are gathered, the expert output is
scaled by its routing weight and added back with index_add_. No aux loss. Backward is loss.backward() of
(y * dy).sum() with a fixed random dy; the input requires grad, so dx is computed as in a real layer (and as
mlsysbench's moe_train backward does).

Runs with Debian's /usr/bin/python3 (python3-torch, python3-numpy). Prints two machine-readable lines:
  torch_moe_layer fwd_bwd_ms_median=... fwd_ms_median=... bwd_ms_median=... iters=N torch=VERSION threads=T
  torch_gemm_peak_tflops=P          (fp32 2048^3 torch.mm, best of 5, same process and threads)
"""
import argparse
import os
import sys
import time


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--hidden", type=int, default=1024)
    p.add_argument("--ffn", type=int, default=3584)
    p.add_argument("--experts", type=int, default=8)
    p.add_argument("--topk", type=int, default=2)
    p.add_argument("--tokens", type=int, default=2048)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--warmup", type=int, default=2)
    p.add_argument("--iters", type=int, default=10)
    p.add_argument("--dtype", choices=["fp32", "bf16"], default="fp32")
    p.add_argument("--seed", type=int, default=1)
    a = p.parse_args()
    if a.topk < 1 or a.topk > a.experts:
        p.error("--topk must lie in [1, --experts]")
    for name in ("hidden", "ffn", "experts", "tokens", "threads", "iters"):
        if getattr(a, name) < 1:
            p.error(f"--{name} must be at least 1")
    if a.warmup < 0:
        p.error("--warmup must be at least 0")
    return a


args = parse_args()
# torch.set_num_threads sets OpenMP/oneDNN threads, not those of Debian's OpenBLAS (libblas.so.3, which does the
# GEMMs): give it the same count before torch loads it, unless the caller chose one.
os.environ.setdefault("OPENBLAS_NUM_THREADS", str(args.threads))
os.environ.setdefault("OMP_NUM_THREADS", str(args.threads))

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from torch import nn  # noqa: E402


class Expert(nn.Module):
    """SwiGLU feed-forward: w2(silu(w1 x) * w3 x), no biases."""

    def __init__(self, hidden, ffn):
        super().__init__()
        self.w1 = nn.Linear(hidden, ffn, bias=False)  # gate
        self.w3 = nn.Linear(hidden, ffn, bias=False)  # up
        self.w2 = nn.Linear(ffn, hidden, bias=False)  # down

    def forward(self, x):
        return self.w2(F.silu(self.w1(x)) * self.w3(x))


class SparseMoeBlock(nn.Module):
    def __init__(self, hidden, ffn, experts, topk):
        super().__init__()
        self.hidden, self.num_experts, self.topk = hidden, experts, topk
        self.gate = nn.Linear(hidden, experts, bias=False)
        self.experts = nn.ModuleList(Expert(hidden, ffn) for _ in range(experts))

    def forward(self, x):  # x [tokens, hidden]
        logits = self.gate(x)                                          # [T, E]
        probs = torch.softmax(logits, dim=-1, dtype=torch.float32)
        weights, chosen = torch.topk(probs, self.topk, dim=-1)        # [T, k]
        weights = (weights / weights.sum(dim=-1, keepdim=True)).to(x.dtype)
        out = torch.zeros_like(x)
        # mask[e, j, t] = 1 when token t picked expert e in its j-th slot.
        mask = F.one_hot(chosen, num_classes=self.num_experts).permute(2, 1, 0)
        for e in range(self.num_experts):
            slot, tok = torch.where(mask[e])
            if tok.numel() == 0:
                continue
            rows = x[tok]                                               # gathered [n_e, hidden]
            current = self.experts[e](rows) * weights[tok, slot, None]
            out.index_add_(0, tok, current.to(x.dtype))
        return out


def median(xs):
    s = sorted(xs)
    n = len(s)
    return s[n // 2] if n % 2 else 0.5 * (s[n // 2 - 1] + s[n // 2])


def gemm_peak_tflops(dtype, n=2048, reps=5):
    a = torch.randn(n, n, dtype=dtype)
    b = torch.randn(n, n, dtype=dtype)
    c = torch.mm(a, b)  # warm-up (thread pool, pages)
    best = float("inf")
    for _ in range(reps):
        t0 = time.perf_counter()
        torch.mm(a, b, out=c)
        best = min(best, time.perf_counter() - t0)
    return 2.0 * n ** 3 / best / 1e12


def main():
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    dtype = {"fp32": torch.float32, "bf16": torch.bfloat16}[args.dtype]

    block = SparseMoeBlock(args.hidden, args.ffn, args.experts, args.topk).to(dtype)
    x = torch.randn(args.tokens, args.hidden, dtype=dtype).requires_grad_(True)
    dy = torch.randn(args.tokens, args.hidden, dtype=dtype)

    fwd, bwd, both = [], [], []
    for it in range(args.warmup + args.iters):
        block.zero_grad(set_to_none=True)
        x.grad = None
        t0 = time.perf_counter()
        y = block(x)
        loss = (y * dy).sum()
        t1 = time.perf_counter()
        loss.backward()
        t2 = time.perf_counter()
        if it >= args.warmup:
            fwd.append((t1 - t0) * 1e3)
            bwd.append((t2 - t1) * 1e3)
            both.append((t2 - t0) * 1e3)
        del y, loss

    if not all(torch.isfinite(p.grad).all() for p in block.parameters() if p.grad is not None):
        print("torch_moe_layer: non-finite gradients", file=sys.stderr)
        return 1

    peak = gemm_peak_tflops(dtype)
    print(f"torch_moe_layer fwd_bwd_ms_median={median(both):.3f} fwd_ms_median={median(fwd):.3f} "
          f"bwd_ms_median={median(bwd):.3f} iters={args.iters} torch={torch.__version__} "
          f"threads={torch.get_num_threads()}")
    print(f"torch_gemm_peak_tflops={peak:.4f}")
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
