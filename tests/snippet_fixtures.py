"""Small stand-ins that let the pages' code samples run on a CPU in seconds.

A page loads them in a hidden setup block (not shown to readers)::

    % invisible-code-block: python
    %
    % import snippet_fixtures
    % globals().update(snippet_fixtures.training())

Each function returns the names the samples of one kind of page use, built
fresh (seeded) so pages do not affect each other.
"""

from __future__ import annotations

from types import SimpleNamespace


def training() -> dict:
    """A tiny regression model whose ``forward(batch)`` returns the loss, as the
    articles write ``loss = model(batch)``, with its optimizer and data."""
    import torch
    from torch import nn
    from torch.utils.data import DataLoader, TensorDataset

    torch.manual_seed(0)

    class TinyModel(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.net = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 1))
            self.layer_norm = nn.LayerNorm(16)

        def forward(self, batch):
            x, y = batch
            return nn.functional.mse_loss(self.net(self.layer_norm(x)), y)

    model = TinyModel()
    dataset = TensorDataset(torch.randn(64, 16), torch.randn(64, 1))
    dataloader = DataLoader(dataset, batch_size=8)
    return {
        "torch": torch,
        "nn": nn,
        "DataLoader": DataLoader,
        "model": model,
        "optimizer": torch.optim.AdamW(model.parameters(), lr=1e-3),
        "dataset": dataset,
        "dataloader": dataloader,
        "inputs": next(iter(dataloader)),
        "batch_size": 32,
        "model_layer": nn.Linear(16, 16),
        "x": torch.randn(4, 16, requires_grad=True),
        "total_steps": 10_000,
    }


class FakeRequest(SimpleNamespace):
    """A generation request that finishes after ``steps`` decoding steps."""

    def __init__(self, name: str, steps: int) -> None:
        super().__init__(name=name, remaining=steps, tokens=[], done=False)

    def generate_step(self) -> None:
        self.tokens.append(len(self.tokens))
        self.remaining -= 1
        self.done = self.remaining <= 0


def troubleshooting() -> dict:
    """The training stand-ins plus what the troubleshooting cases name."""
    import torch
    from torch import nn

    names = training()
    model = names["model"]

    def train_step() -> None:
        batch = names["inputs"]
        names["optimizer"].zero_grad()
        model(batch).backward()
        names["optimizer"].step()

    labels = [0, 0, 0, 0, 1, 1, 2]
    names.update(
        {
            "labels": labels,
            "class_weights": torch.tensor([1.0, 2.0, 4.0]),
            "probs": torch.softmax(torch.randn(8, 3), dim=-1),
            "sensitive_layer": nn.Linear(16, 16),
            "train_step": train_step,
            "local_rank": 0,
        }
    )
    return names


def process_group():
    """A one-process gloo group on 127.0.0.1: collectives run as on a cluster of one."""
    import socket

    import torch.distributed as dist

    if not dist.is_initialized():
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=0, world_size=1)
    return dist
