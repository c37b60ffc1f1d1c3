"""Student side: answer kinds, how a plain answer is validated and compared with a reference.

Every kind turns plain data (see ``plain.py``) into a canonical value, or raises ``Invalid`` with
a message that says what was expected. Validity comes before correctness: a wrong shape is an
invalid answer with its own message, never a wrong one.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from itertools import repeat
from typing import Any

import torch

from autograder.plain import Plain, describe, to_plain
from autograder.sealed import Sealed
from autograder.sealed import from_json as sealed_from_json
from autograder.sealed import to_json as sealed_to_json


class Invalid(Exception):
    """The answer cannot be judged; the message says why and what to give instead."""


BOXED = ("Your answer is a tuple (or list) holding one tensor, not the tensor itself. "
         "torch.autograd.grad returns a tuple, one gradient per input: take its element, "
         "e.g. `(g,) = torch.autograd.grad(...)` or `torch.autograd.grad(...)[0]`.")


Canonical = Any  # float64 tensor, bool, str or None, or a dict of those (tables)


def _floats(v: Any) -> Any:
    return [_floats(u) for u in v] if isinstance(v, list) else float(v)


def _as_tensor(p: Plain) -> torch.Tensor:
    return torch.tensor(_floats(p["v"]), dtype=torch.float64).reshape(p["shape"])


SMALL = 64  # up to this many float64 numbers, compared in Python: a torch call costs more


def numbers_close(a: torch.Tensor, b: torch.Tensor, rtol: float, atol: float) -> bool:
    """allclose where NaN matches only NaN and an infinity only the same infinity."""
    if a.shape != b.shape:
        return False
    if a.dtype == b.dtype == torch.float64 and a.numel() <= SMALL:
        return all(map(_close, a.flatten().tolist(), b.flatten().tolist(), repeat(rtol), repeat(atol)))
    nan_a, nan_b = torch.isnan(a), torch.isnan(b)
    if not torch.equal(nan_a, nan_b):
        return False
    inf_a, inf_b = torch.isinf(a), torch.isinf(b)
    if not torch.equal(inf_a, inf_b) or not torch.equal(a[inf_a], b[inf_b]):
        return False
    finite = ~(nan_a | inf_a)
    return bool(torch.all(torch.abs(a[finite] - b[finite]) <= atol + rtol * torch.abs(b[finite])))


def _close(x: float, y: float, rtol: float, atol: float) -> bool:
    """One number of ``numbers_close``, with the same float64 operations in the same order."""
    if math.isnan(x) or math.isnan(y):
        return math.isnan(x) and math.isnan(y)
    if math.isinf(x) or math.isinf(y):
        return x == y
    return abs(x - y) <= atol + rtol * abs(y)


@dataclass(frozen=True)
class Kind:
    """Base class. ``rtol``/``atol`` matter only for numbers."""

    rtol: float = 1e-4
    atol: float = 1e-6

    def expected(self) -> str:
        raise NotImplementedError

    def canonical(self, p: Plain) -> Canonical:
        raise NotImplementedError

    def same(self, a: Canonical, b: Canonical) -> bool:
        return a == b

    def of(self, value: Any) -> Canonical:
        """Canonical form of a trusted value (references, wrong answers)."""
        return self.canonical(to_plain(value))

    def show(self, c: Canonical) -> Any:
        """JSON-friendly form for answer keys."""
        return c

    def _refuse(self, p: Plain) -> Invalid:
        if p.get("t") == "none" and isinstance(self, Number | Tensor):
            return Invalid(f"Your answer is None, but {self.expected()} is expected. "
                           "A .grad is None when backward was not called, when the tensor is not "
                           "a leaf, or when it does not require grad.")
        return Invalid(f"Expected {self.expected()}, got {describe(p)}.")


@dataclass(frozen=True)
class Number(Kind):
    """A single number: a Python number, a one-element tensor or numpy value."""

    def expected(self) -> str:
        return "a single number"

    def canonical(self, p: Plain) -> torch.Tensor:
        if p.get("t") != "array":
            raise self._refuse(p)
        if p.get("boxed"):
            raise Invalid(BOXED)
        t = _as_tensor(p)
        if t.numel() != 1:
            raise Invalid(f"Expected a single number, got an array of shape {tuple(t.shape)}.")
        return t.reshape(())

    def same(self, a: torch.Tensor, b: torch.Tensor) -> bool:
        return numbers_close(a, b, self.rtol, self.atol)

    def show(self, c: torch.Tensor) -> Any:
        return _json_number(c.item())


@dataclass(frozen=True)
class Tensor(Kind):
    """Numbers of one shape: nested lists, tuples of tensors, numpy arrays or tensors."""

    shape: tuple[int, ...] = ()

    def expected(self) -> str:
        return f"numbers of shape {self.shape}"

    def canonical(self, p: Plain) -> torch.Tensor:
        if p.get("t") != "array":
            raise self._refuse(p)
        if p.get("boxed") and self.shape[:1] != (1,):
            raise Invalid(BOXED)
        t = _as_tensor(p)
        if tuple(t.shape) != self.shape:
            # (2,) given as [[a, b]] or (1, 2) is still the same numbers: accept singleton dims
            if t.numel() == math.prod(self.shape) and _drop_ones(t.shape) == _drop_ones(self.shape):
                return t.reshape(self.shape)
            raise Invalid(f"Expected shape {self.shape}, got shape {tuple(t.shape)}. "
                          "A gradient always has the shape of the tensor it belongs to.")
        return t

    def same(self, a: torch.Tensor, b: torch.Tensor) -> bool:
        return numbers_close(a, b, self.rtol, self.atol)

    def show(self, c: torch.Tensor) -> Any:
        return _json_nested(c.tolist())


def _drop_ones(shape: tuple[int, ...] | torch.Size) -> tuple[int, ...]:
    return tuple(s for s in shape if s != 1)


def _json_number(x: float) -> Any:
    if math.isnan(x) or math.isinf(x):
        return str(x)
    return int(x) if x == int(x) and abs(x) < 2**53 else x


def _json_nested(v: Any) -> Any:
    return [_json_nested(u) for u in v] if isinstance(v, list) else _json_number(v)


@dataclass(frozen=True)
class Bool(Kind):
    """True or False: a bool, numpy or torch bool, a one-element bool tensor, or 0 / 1."""

    def expected(self) -> str:
        return "True or False"

    def canonical(self, p: Plain) -> bool:
        if p.get("t") == "bool":
            return bool(p["v"])
        if p.get("t") == "array" and _as_tensor(p).numel() == 1:
            value = _as_tensor(p).item()
            if p.get("dtype") == "bool" or value in (0.0, 1.0):  # 0 and 1 are how many write them
                return bool(value)
        raise self._refuse(p)


@dataclass(frozen=True)
class Choice(Kind):
    """One name out of a set: a grad_fn class name, an exception name, or None.

    ``AddBackward0``, ``"<AddBackward0 object at 0x...>"``, the node ``z.grad_fn`` itself, the
    class ``RuntimeError`` or an instance of it all read as their names.
    """

    options: tuple[str | None, ...] = ()
    none_means: str = "None"

    def expected(self) -> str:
        """What kind of name is asked for, never the list of options (it holds the answer)."""
        if self.options and all(o is None or o.endswith(("Error", "Exception")) for o in self.options):
            return f"the name of an exception (a string, the class or an instance), or {self.none_means}"
        if self.options and all(o is None or "Backward" in o or o == "AccumulateGrad" for o in self.options):
            return f"a grad_fn: the node itself, its class or its name as a string, or {self.none_means}"
        return "one name, as a string" + (f", or {self.none_means}" if None in self.options else "")

    def canonical(self, p: Plain) -> str | None:
        t = p.get("t")
        if t == "none":
            name = None
        elif t in ("node", "exception"):
            name = p["v"]
        elif t == "str":
            name = _clean_name(p["v"])
        else:
            raise Invalid(f"Expected {self.expected()}, got {describe(p)}.")
        if self.options and name not in self.options:
            matches = [o for o in self.options if o and name and o.lower() == name.lower()]
            if matches:
                return matches[0]
            raise Invalid("That name is not one of the answers this question can have: check its "
                          "spelling (print the object to see its exact name). Expected "
                          f"{self.expected()}.")
        return name


def _clean_name(s: str) -> str | None:
    s = s.strip().strip("<>").strip()
    if s.lower() in ("none", "no error", ""):
        return None
    s = s.split(" object")[0].split("(")[0].strip()
    return s.removeprefix("torch.").removeprefix("builtins.")


@dataclass(frozen=True)
class Table(Kind):
    """A dict of rows, each a dict of columns, e.g. ``{"x": {"is_leaf": True, "grad": 4.0}}``.

    Right only when every entry is right; feedback names the wrong entries.
    """

    rows: tuple[str, ...] = ()
    columns: tuple[tuple[str, Kind], ...] = field(default_factory=tuple)

    def expected(self) -> str:
        cols = ", ".join(c for c, _ in self.columns)
        return f"a dict with rows {list(self.rows)}, each a dict with keys {cols}"

    def canonical(self, p: Plain) -> dict[str, dict[str, Any]]:
        if p.get("t") != "dict":
            raise self._refuse(p)
        rows = p["v"]
        missing = [r for r in self.rows if r not in rows]
        if missing:
            raise Invalid(f"Your table has no row for {missing}. Expected {self.expected()}.")
        out: dict[str, dict[str, Any]] = {}
        for r in self.rows:
            row = rows[r]
            if row.get("t") != "dict":
                raise Invalid(f"Row {r!r} should be a dict with keys {[c for c, _ in self.columns]}.")
            cells = row["v"]
            out[r] = {}
            for c, kind in self.columns:
                if c not in cells:
                    raise Invalid(f"Row {r!r} has no entry {c!r}.")
                try:
                    out[r][c] = kind.canonical(cells[c])
                except Invalid as e:
                    if cells[c].get("t") == "none" and _allows_none(kind):
                        out[r][c] = None
                    else:
                        raise Invalid(f"Row {r!r}, entry {c!r}: {e}") from None
        return out

    def _cells(self, a: dict, b: dict) -> list[bool]:
        flags = []
        for r in self.rows:
            for c, kind in self.columns:
                x, y = a[r][c], b[r][c]
                if isinstance(y, Sealed) or isinstance(x, Sealed):  # shipped sealed (sealed.py)
                    flags.append(y.holds(x) if isinstance(y, Sealed) else x.holds(y))
                    continue
                flags.append(x is y is None or (x is not None and y is not None and kind.same(x, y)))
        return flags

    def same(self, a: dict, b: dict) -> bool:
        return all(self._cells(a, b))

    def wrong_cells(self, answer: dict, ref: dict) -> list[str]:
        names = [f"{r}.{c}" for r in self.rows for c, _ in self.columns]
        return [n for n, ok in zip(names, self._cells(answer, ref), strict=True) if not ok]

    def show(self, c: dict) -> Any:
        kinds = dict(self.columns)
        return {r: {k: (None if v is None else kinds[k].show(v)) for k, v in row.items()}
                for r, row in c.items()}


def _allows_none(kind: Kind) -> bool:
    # a .grad cell may rightly be None; numbers columns accept it and compare it as None
    return isinstance(kind, Number | Tensor)


@dataclass(frozen=True)
class TensorOrSlip(Tensor):
    """``Tensor(shape)``, plus answers whose shape is one of ``slips`` (judged, never right).

    Some typical mistakes change the shape of the answer: a dot product (one number) where a
    vector-Jacobian product belongs, a transposed Jacobian. Plain ``Tensor`` refuses those as
    invalid; this kind reads them so the judge can diagnose them. They can never be right: the
    comparison checks the shape first.
    """

    slips: tuple[tuple[int, ...], ...] = ()

    def canonical(self, p: Plain) -> torch.Tensor:
        try:
            return super().canonical(p)
        except Invalid:
            slip = self._slip_shape(p)
            if slip is None:
                raise
            return Tensor(shape=slip).canonical(p)

    def _slip_shape(self, p: Plain) -> tuple[int, ...] | None:
        if p.get("t") != "array":
            return None
        shape = tuple(p["shape"])
        for slip in self.slips:
            if shape == slip or _drop_ones(shape) == _drop_ones(slip):
                return slip
        return None


# --- kinds as JSON: the student runtime ships them as data, never as exercise code ------------

KINDS: dict[str, type[Kind]] = {k.__name__: k for k in (Number, Tensor, TensorOrSlip, Bool, Choice, Table)}


def kind_to_json(kind: Kind) -> dict[str, Any]:
    name = type(kind).__name__
    if KINDS.get(name) is not type(kind):
        raise TypeError(f"{name} is not a kind of autograder.kinds; the student runtime cannot ship it")
    out: dict[str, Any] = {"kind": name, "rtol": kind.rtol, "atol": kind.atol}
    if isinstance(kind, Tensor):
        out["shape"] = list(kind.shape)
    if isinstance(kind, TensorOrSlip):
        out["slips"] = [list(s) for s in kind.slips]
    if isinstance(kind, Choice):
        out["options"], out["none_means"] = list(kind.options), kind.none_means
    if isinstance(kind, Table):
        out["rows"] = list(kind.rows)
        out["columns"] = [[c, kind_to_json(k)] for c, k in kind.columns]
    return out


def kind_from_json(data: dict[str, Any]) -> Kind:
    cls = KINDS[data["kind"]]
    fields: dict[str, Any] = {"rtol": float(data["rtol"]), "atol": float(data["atol"])}
    if issubclass(cls, Tensor):
        fields["shape"] = tuple(int(n) for n in data["shape"])
    if cls is TensorOrSlip:
        fields["slips"] = tuple(tuple(int(n) for n in s) for s in data["slips"])
    if cls is Choice:
        fields["options"] = tuple(data["options"])
        fields["none_means"] = str(data["none_means"])
    if cls is Table:
        fields["rows"] = tuple(data["rows"])
        fields["columns"] = tuple((str(c), kind_from_json(k)) for c, k in data["columns"])
    return cls(**fields)


def canonical_to_json(c: Canonical) -> Plain:
    """A canonical value as plain data; ``canonical_from_json`` reads it back through the
    same kind. A sealed value (or a table of sealed cells) stays sealed."""
    sealed = sealed_to_json(c)
    return sealed if sealed is not None else to_plain(c)


def canonical_from_json(kind: Kind, p: Plain) -> Canonical:
    sealed = sealed_from_json(p)
    if sealed is not None:
        return sealed
    if p.get("t") == "none" and not isinstance(kind, Choice):
        return None
    if isinstance(kind, Table):
        return {r: {c: canonical_from_json(k, p["v"][r]["v"][c]) for c, k in kind.columns}
                for r in kind.rows}
    return kind.canonical(p)
