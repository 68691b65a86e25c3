"""PyTorch building blocks the graph tests and ``benchmarks/bench_graph.py`` export to ONNX."""

from __future__ import annotations

import torch


class ResBlock(torch.nn.Module):
    """A ResNet basic block: two 3x3 convolutions with BatchNorm, the input added back."""

    def __init__(self, c: int) -> None:
        super().__init__()
        self.conv1 = torch.nn.Conv2d(c, c, 3, padding=1, bias=False)
        self.bn1 = torch.nn.BatchNorm2d(c)
        self.conv2 = torch.nn.Conv2d(c, c, 3, padding=1, bias=False)
        self.bn2 = torch.nn.BatchNorm2d(c)

    def forward(self, x):
        y = torch.relu(self.bn1(self.conv1(x)))
        return torch.relu(x + self.bn2(self.conv2(y)))


class EncoderBlock(torch.nn.Module):
    """A pre-norm transformer encoder block: multi-head self-attention and a GELU MLP of
    ``mlp_ratio * d`` hidden units."""

    def __init__(self, d: int = 16, heads: int = 4, mlp_ratio: int = 2) -> None:
        super().__init__()
        self.heads = heads
        self.qkv = torch.nn.Linear(d, 3 * d)
        self.proj = torch.nn.Linear(d, d)
        self.ln1, self.ln2 = torch.nn.LayerNorm(d), torch.nn.LayerNorm(d)
        self.mlp = torch.nn.Sequential(torch.nn.Linear(d, mlp_ratio * d), torch.nn.GELU(),
                                       torch.nn.Linear(mlp_ratio * d, d))

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(d, dim=-1)
        q, k, v = (z.reshape(b, t, self.heads, d // self.heads).transpose(1, 2) for z in (q, k, v))
        att = torch.softmax(q @ k.transpose(-2, -1) / (d // self.heads) ** 0.5, dim=-1) @ v
        x = x + self.proj(att.transpose(1, 2).reshape(b, t, d))
        return x + self.mlp(self.ln2(x))
