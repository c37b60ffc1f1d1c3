"""Trusted side: read a lesson, Markdown prose, ```python code cells and ```exercise directives."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

_FENCE = re.compile(r"^```(python|exercise)[ \t]*\n(.*?)^```[ \t]*$", re.M | re.S)


@dataclass(frozen=True)
class Block:
    kind: Literal["markdown", "code", "exercise"]
    text: str


def parse(text: str) -> list[Block]:
    """Split a lesson into blocks in order; empty prose between fences is dropped."""
    blocks: list[Block] = []
    pos = 0
    for m in _FENCE.finditer(text):
        _prose(blocks, text[pos : m.start()])
        body = m.group(2).rstrip("\n")
        blocks.append(Block("code" if m.group(1) == "python" else "exercise", body.strip()
                            if m.group(1) == "exercise" else body))
        pos = m.end()
    _prose(blocks, text[pos:])
    return blocks


def _prose(blocks: list[Block], chunk: str) -> None:
    # a line "---" alone splits prose into separate Markdown cells
    for part in re.split(r"^---[ \t]*$", chunk, flags=re.M):
        if part.strip():
            blocks.append(Block("markdown", part.strip("\n")))
