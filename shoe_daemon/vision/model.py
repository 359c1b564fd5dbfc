"""The glyph classifiers: small multilayer perceptrons, numpy only at run time.

A model file is JSON (it ships as package data): for each classifier its classes, the input
normalisation, two layers of float16 weights (base64), and a softmax temperature fitted on
held-out data; plus the fusion's calibration and provenance (what it was trained on). The file
is written by ``python -m shoe_daemon.vision.train`` (see docs/camera.md).
"""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

MODELS_DIR = Path(__file__).resolve().parent / "models"
DEFAULT_MODEL = MODELS_DIR / "glyphs.json"

RANK_CLASSES = ("A", "2", "3", "4", "5", "6", "7", "8", "9", "T", "J", "Q", "K", "reject")
SUIT_CLASSES = ("S", "H", "D", "C", "reject")


def _enc(a: np.ndarray) -> dict[str, Any]:
    a16 = np.ascontiguousarray(a, dtype=np.float16)
    return {"shape": list(a16.shape), "f16": base64.b64encode(a16.tobytes()).decode()}


def _dec(d: dict[str, Any]) -> np.ndarray:
    raw = np.frombuffer(base64.b64decode(d["f16"]), dtype=np.float16)
    return raw.reshape(d["shape"]).astype(np.float32)


@dataclass
class MLP:
    classes: tuple[str, ...]
    mean: np.ndarray
    scale: np.ndarray
    w1: np.ndarray
    b1: np.ndarray
    w2: np.ndarray
    b2: np.ndarray
    temperature: float = 1.0

    def logits(self, x: np.ndarray) -> np.ndarray:
        # einsum, not BLAS: a few rows at a time, and a multi-threaded BLAS wakes its threads for
        # each small product (milliseconds on a busy 2-core machine; microseconds this way).
        h = (np.atleast_2d(x).astype(np.float32) - self.mean) * self.scale
        h = np.maximum(np.einsum("ij,jk->ik", h, self.w1) + self.b1, 0.0)
        return np.einsum("ij,jk->ik", h, self.w2) + self.b2

    def proba(self, x: np.ndarray) -> np.ndarray:
        z = self.logits(x) / self.temperature
        z -= z.max(axis=1, keepdims=True)
        e = np.exp(z)
        return e / e.sum(axis=1, keepdims=True)

    def to_json(self) -> dict[str, Any]:
        return {"classes": list(self.classes), "mean": _enc(self.mean), "scale": _enc(self.scale),
                "w1": _enc(self.w1), "b1": _enc(self.b1), "w2": _enc(self.w2), "b2": _enc(self.b2),
                "temperature": self.temperature}  # fmt: skip

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> MLP:
        return cls(tuple(d["classes"]), _dec(d["mean"]), _dec(d["scale"]), _dec(d["w1"]), _dec(d["b1"]),
                   _dec(d["w2"]), _dec(d["b2"]), float(d.get("temperature", 1.0)))  # fmt: skip


@dataclass
class GlyphModels:
    rank: MLP
    suit: MLP
    calibration: dict[str, Any] = field(default_factory=dict)
    info: dict[str, Any] = field(default_factory=dict)

    def save(self, path: str | Path) -> None:
        data = {"format": 1, "rank": self.rank.to_json(), "suit": self.suit.to_json(),
                "calibration": self.calibration, "info": self.info}  # fmt: skip
        Path(path).write_text(json.dumps(data, separators=(",", ":")) + "\n")

    @classmethod
    def load(cls, path: str | Path = DEFAULT_MODEL) -> GlyphModels:
        data = json.loads(Path(path).read_text())
        if data.get("format") != 1:
            raise ValueError(f"{path}: unknown model format {data.get('format')!r}")
        return cls(MLP.from_json(data["rank"]), MLP.from_json(data["suit"]),
                   data.get("calibration", {}), data.get("info", {}))  # fmt: skip


@lru_cache(maxsize=4)
def load_models(path: str | None = None) -> GlyphModels:
    return GlyphModels.load(path or DEFAULT_MODEL)


# --------------------------------------------------------------------------- training (numpy)


def train_mlp(x: np.ndarray, y: np.ndarray, classes: tuple[str, ...], hidden: int = 96, epochs: int = 40,
              lr: float = 2e-3, l2: float = 1e-4, batch: int = 256, seed: int = 0,
              class_weight: np.ndarray | None = None, log=None) -> MLP:  # fmt: skip
    """Softmax MLP (one ReLU hidden layer) trained with Adam and input noise."""
    rng = np.random.default_rng(seed)
    n, d = x.shape
    k = len(classes)
    mean = x.mean(axis=0)
    scale = 1.0 / (x.std(axis=0) + 1e-3)
    xs = (x - mean) * scale
    w1 = (rng.normal(0, 1, (d, hidden)) * np.sqrt(2.0 / d)).astype(np.float32)
    b1 = np.zeros(hidden, np.float32)
    w2 = (rng.normal(0, 1, (hidden, k)) * np.sqrt(1.0 / hidden)).astype(np.float32)
    b2 = np.zeros(k, np.float32)
    params = [w1, b1, w2, b2]
    m = [np.zeros_like(p) for p in params]
    v = [np.zeros_like(p) for p in params]
    cw = np.ones(k, np.float32) if class_weight is None else class_weight.astype(np.float32)
    step = 0
    for epoch in range(epochs):
        order = rng.permutation(n)
        rate = lr * (0.5 * (1 + np.cos(np.pi * epoch / epochs)))
        total = 0.0
        for i in range(0, n, batch):
            idx = order[i:i + batch]
            xb = xs[idx] + rng.normal(0, 0.15, (len(idx), d)).astype(np.float32)
            yb = y[idx]
            h_pre = xb @ w1 + b1
            h = np.maximum(h_pre, 0)
            # Dropout on the hidden layer.
            keep = (rng.random(h.shape) > 0.2).astype(np.float32) / 0.8
            h = h * keep
            z = h @ w2 + b2
            z -= z.max(axis=1, keepdims=True)
            p = np.exp(z)
            p /= p.sum(axis=1, keepdims=True)
            wts = cw[yb]
            total += float(-(np.log(p[np.arange(len(yb)), yb] + 1e-9) * wts).sum())
            g = p
            g[np.arange(len(yb)), yb] -= 1
            g *= (wts / wts.sum())[:, None]
            gw2 = h.T @ g + l2 * w2
            gb2 = g.sum(axis=0)
            gh = (g @ w2.T) * keep * (h_pre > 0)
            gw1 = xb.T @ gh + l2 * w1
            gb1 = gh.sum(axis=0)
            step += 1
            for j, gr in enumerate((gw1, gb1, gw2, gb2)):
                m[j] = 0.9 * m[j] + 0.1 * gr
                v[j] = 0.999 * v[j] + 0.001 * gr * gr
                mh = m[j] / (1 - 0.9 ** step)
                vh = v[j] / (1 - 0.999 ** step)
                params[j] -= rate * mh / (np.sqrt(vh) + 1e-8)
        if log:
            log(f"  epoch {epoch + 1}/{epochs} loss {total / n:.4f}")
    w1, b1, w2, b2 = params
    return MLP(classes, mean.astype(np.float32), scale.astype(np.float32), w1, b1, w2, b2)


def fit_temperature(model: MLP, x: np.ndarray, y: np.ndarray) -> float:
    """The softmax temperature that minimises the negative log-likelihood on (x, y)."""
    z = model.logits(x)
    best, best_nll = 1.0, np.inf
    for t in np.exp(np.linspace(np.log(0.3), np.log(5.0), 60)):
        zt = z / t
        zt = zt - zt.max(axis=1, keepdims=True)
        logp = zt - np.log(np.exp(zt).sum(axis=1, keepdims=True))
        nll = float(-logp[np.arange(len(y)), y].mean())
        if nll < best_nll:
            best, best_nll = float(t), nll
    return best
