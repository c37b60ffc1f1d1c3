"""What an autograd error protects you from: the shared answers of the "what does this error
protect you from?" exercises (chapters 3, 4 and 6).

Each exercise runs its snippet in torch, reads the exception's message, and maps it to the
hazard the check exists for. The keys are the answers a student picks; the prompt shows the
table below and the message torch actually printed (run, never typed: at import, or, where
running it costs seconds, when the prompt is written: ``Exercise.prompt_fields``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from autograder.kinds import Choice
from gradtutor.key.exercise import Wrong

PROTECTIONS: dict[str, str] = {
    "guessed_seed": "a vector output has no single gradient: PyTorch would have to guess a weight "
                    "for each of its entries",
    "freed_values": "a second walk would need saved values that the first walk already freed",
    "no_nudge": "an integer cannot be moved by an arbitrarily small step, so it has no derivative",
    "never_updated": "the optimizer would hold a tensor whose .grad is never filled, so it would "
                     "never move",
    "unversioned_save": "a tensor without a version counter, saved for backward, could be changed "
                        "in place unseen before backward reads it",
    "stale_value": "backward would read a saved value that was changed in place since, and return "
                   "wrong numbers",
}
# a fragment of torch's message -> the hazard the check stands guard against
MESSAGES: dict[str, str] = {
    "grad can be implicitly created only for scalar outputs": "guessed_seed",
    "Trying to backward through the graph a second time": "freed_values",
    "Only Tensors of floating point and complex dtype can require gradients": "no_nudge",
    "can't optimize a non-leaf Tensor": "never_updated",
    "Inference tensors cannot be saved for backward": "unversioned_save",
    "modified by an inplace operation": "stale_value",
}
KIND = Choice(options=tuple(PROTECTIONS))


def message_of(action: Callable[[], Any]) -> str:
    """``Name: message`` of the exception ``action()`` raises (its first sentence)."""
    try:
        action()
    except Exception as e:  # the exception is what the exercise is about
        return f"{type(e).__name__}: {str(e).split('. ')[0]}"
    raise AssertionError("the snippet was expected to raise")


def protection_of(action: Callable[[], Any]) -> str | None:
    """The hazard that the exception ``action()`` raises guards against (None if it runs)."""
    try:
        action()
    except Exception as e:
        return next((key for fragment, key in MESSAGES.items() if fragment in str(e)), None)
    return None


def table() -> str:
    rows = "\n".join(f"| `\"{key}\"` | {text} |" for key, text in PROTECTIONS.items())
    return "| answer | what would go wrong without the error |\n|---|---|\n" + rows


def wrong(key: str, explanation: str, hint: str) -> Wrong:
    return Wrong("error_purpose", lambda **_: key, explanation, hint)
