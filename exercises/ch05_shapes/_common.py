"""Chapter 5's trusted helpers shared by the two linear-layer units (the leading underscore keeps
the registry away): the layer's loss, its ReLU mask and the random draw of its values."""

import random


def mask(x: list, W: list, b: list) -> list[float]:
    """ReLU'(z_j) for z = xW + b: 1 where the unit is on, 0 where it is off."""
    z = [sum(x[i] * W[i][j] for i in range(2)) + b[j] for j in range(2)]
    return [1.0 if zj > 0 else 0.0 for zj in z]


def loss(x: list, W: list, b: list) -> float:
    z = [sum(x[i] * W[i][j] for i in range(2)) + b[j] for j in range(2)]
    return sum(max(zj, 0.0) for zj in z)


def draw(rng: random.Random) -> dict:
    """Random layer with one ReLU unit on and one off, both inputs safely away from the corner
    (b is chosen to put z_j at a signed distance of 0.2 to 1.5 from 0): the shown values have
    both units on, so an answer without the ReLU factor shows here."""
    x = [rng.uniform(-3, 3), rng.uniform(-3, 3)]
    W = [[rng.uniform(-1, 1) for _ in range(2)] for _ in range(2)]
    signs = rng.choice(([1.0, -1.0], [-1.0, 1.0]))
    b = [signs[j] * rng.uniform(0.2, 1.5) - sum(x[i] * W[i][j] for i in range(2)) for j in range(2)]
    return {"x": x, "W": W, "b": b}
