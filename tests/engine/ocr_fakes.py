"""Engines for the OCR reading process in tests (module level: the spawned process imports them by name)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass
class _Result:
    boxes: Any
    txts: Any


class StallsOnBlack:
    """Reads any picture as "read", except an all-black one, on which it spins forever."""

    def __call__(self, pixels: np.ndarray) -> _Result:
        while pixels.max() == 0:
            pass
        return _Result([[[0, 0], [10, 0], [10, 10], [0, 10]]], ["read"])


def stalling_engine() -> StallsOnBlack:
    return StallsOnBlack()
