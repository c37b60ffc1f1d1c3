"""Student side: turn any answer object into plain, JSON-safe data.

This is the boundary between student objects and judging. Only exact, known types are read;
everything else becomes ``{"t": "unsupported"}``. Tensors (subclasses included) are read with
``__torch_function__`` disabled, so an override or a patched method cannot change what we see,
and no ``__eq__``, ``__float__`` or ``__bool__`` of a student object is ever called.
"""

from __future__ import annotations

import math
import types
from typing import Any

import numpy as np
import torch

from autograder.contract import MAX_NUMBER

Plain = dict[str, Any]

MAX_ELEMENTS = 100_000  # answers in this course are tiny; refuse to copy a memory bomb


def _encode_float(x: float) -> float | str:
    # strict JSON has no NaN or infinity: spell them as strings
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return x


def _array(values: list[Any], shape: list[int], dtype: str) -> Plain:
    def enc(v: Any) -> Any:
        return [enc(u) for u in v] if isinstance(v, list) else _encode_float(float(v))

    return {"t": "array", "shape": shape, "dtype": dtype, "v": enc(values)}


def _tensor(obj: torch.Tensor) -> Plain:
    with torch._C.DisableTorchFunction():
        t = torch.Tensor.detach(obj)
        if t.layout != torch.strided or t.is_complex() or t.is_quantized:
            return {"t": "unsupported", "type": "tensor with layout or dtype " + str(t.dtype)}
        if t.numel() > MAX_ELEMENTS:
            return {"t": "unsupported", "type": f"tensor with {t.numel()} elements"}
        dtype = str(t.dtype).removeprefix("torch.")
        shape = list(t.shape)
        t = torch.Tensor.to(t, device="cpu", dtype=torch.float64)
        values = torch.Tensor.tolist(t)
    if not shape:
        return {"t": "array", "shape": [], "dtype": dtype, "v": _encode_float(values)}
    return _array(values, shape, dtype)


def _numpy(obj: np.ndarray | np.generic) -> Plain:
    arr = np.asarray(obj)
    if arr.dtype.kind == "b":
        if arr.shape == ():
            return {"t": "bool", "v": bool(arr.item())}
        return _array(arr.astype(np.float64).tolist(), list(arr.shape), "bool")
    if arr.dtype.kind not in "iuf" or arr.size > MAX_ELEMENTS:
        return {"t": "unsupported", "type": f"numpy array of {arr.dtype}"}
    if arr.shape == ():
        return {"t": "array", "shape": [], "dtype": str(arr.dtype), "v": _encode_float(float(arr))}
    return _array(arr.astype(np.float64).tolist(), list(arr.shape), str(arr.dtype))


def _is_node(obj: Any) -> bool:
    return isinstance(obj, torch.autograd.graph.Node)


def _is_node_class(cls: type) -> bool:
    try:
        return issubclass(cls, torch.autograd.graph.Node)
    except TypeError:
        return False


def to_plain(obj: Any, _depth: int = 0) -> Plain:
    """Describe ``obj`` as plain data; never calls a method the object could override."""
    if _depth > 6:
        return {"t": "unsupported", "type": "deeply nested value"}
    kind = type(obj)
    if obj is None:
        return {"t": "none"}
    if obj is Ellipsis:
        return {"t": "ellipsis"}
    if kind is bool or kind is np.bool_:
        return {"t": "bool", "v": bool(obj)}
    if kind is int:  # the contract's bound: an integer no float holds is not a number it reads
        if abs(obj) > MAX_NUMBER:
            return {"t": "unsupported", "type": "integer beyond the float range"}
        return {"t": "array", "shape": [], "dtype": "int", "v": float(obj)}
    if kind is float:
        return {"t": "array", "shape": [], "dtype": "float", "v": _encode_float(obj)}
    if kind is str:
        return {"t": "str", "v": obj[:200]}
    if isinstance(obj, torch.Tensor):  # subclasses too: read through the base class
        return _tensor(obj)
    if kind is np.ndarray or isinstance(obj, np.generic):
        return _numpy(obj)
    if kind is torch.Size:
        return _array([float(v) for v in obj], [len(obj)], "int")
    if kind in (list, tuple):
        return _sequence(obj, _depth)
    if kind is dict:
        return {"t": "dict", "v": {str(k)[:80]: to_plain(v, _depth + 1) for k, v in list(obj.items())[:50]}}
    if isinstance(obj, type) and issubclass(obj, BaseException):
        return {"t": "exception", "v": obj.__name__}
    if isinstance(obj, type) and _is_node_class(obj):  # type(z.grad_fn): the node's class
        return {"t": "node", "v": obj.__name__}
    if isinstance(obj, BaseException):
        return {"t": "exception", "v": type(obj).__name__}
    if _is_node(obj):
        return {"t": "node", "v": type(obj).__name__}
    if isinstance(obj, types.FunctionType | types.BuiltinFunctionType | types.MethodType):
        return {"t": "function", "name": getattr(obj, "__name__", "?")}
    if isinstance(obj, types.GeneratorType):
        return {"t": "unsupported", "type": "generator"}
    return {"t": "unsupported", "type": kind.__name__[:60]}


def _sequence(obj: list | tuple, depth: int) -> Plain:
    items = [to_plain(v, depth + 1) for v in obj[:MAX_ELEMENTS]]
    if items and all(i["t"] == "array" for i in items):
        shapes = {tuple(i["shape"]) for i in items}
        if len(shapes) == 1:
            (shape,) = shapes
            dtypes = {i["dtype"] for i in items}
            dtype = dtypes.pop() if len(dtypes) == 1 else "float"
            out = {"t": "array", "shape": [len(items), *shape], "dtype": dtype,
                   "v": [i["v"] for i in items]}
            if len(obj) == 1 and isinstance(obj[0], torch.Tensor | np.ndarray):
                out["boxed"] = True  # (g,) as torch.autograd.grad returns it: kinds say so
            return out
    if items and all(i["t"] == "bool" for i in items):
        return {"t": "array", "shape": [len(items)], "dtype": "bool",
                "v": [1.0 if i["v"] else 0.0 for i in items]}
    return {"t": "list", "v": items}


def describe(p: Plain) -> str:
    """A short description of a plain value, for validity messages. It never repeats text the
    answer carries (strings, names, keys): a message is made of the grader's own words."""
    t = p.get("t")
    if t == "array":
        shape = tuple(p["shape"])
        return "a number" if shape == () else f"an array of shape {shape}"
    return {
        "none": "None",
        "ellipsis": "the placeholder ...",
        "bool": f"the boolean {bool(p.get('v'))}",
        "str": "a string",
        "exception": "an exception",
        "node": "a graph node (a grad_fn)",
        "dict": "a dict",
        "list": "a list of mixed items",
        "function": "a function",
    }.get(str(t), "a value of a type the grader does not read")


def plain_source(p: Plain) -> str:
    """Python source that a student could type for this plain value (exact floats): how the
    trusted side's tools write an answer down (the demo class's planted answers, the report's
    unexplained wrong answers)."""
    t = p["t"]
    if t == "array":
        return _nested(p["v"], p["dtype"])
    if t == "bool":
        return repr(bool(p["v"]))
    if t == "none":
        return "None"
    if t in ("str", "exception", "node"):  # names are written as strings: "AddBackward0"
        return repr(p["v"])
    if t == "dict":
        return "{" + ", ".join(f"{k!r}: {plain_source(v)}" for k, v in p["v"].items()) + "}"
    if t == "list":
        return "[" + ", ".join(plain_source(v) for v in p["v"]) + "]"
    raise ValueError(f"cannot write a {t!r} value as a literal")


def _nested(v: Any, dtype: str) -> str:
    if isinstance(v, list):
        return "[" + ", ".join(_nested(u, dtype) for u in v) + "]"
    if isinstance(v, str):  # "nan", "inf", "-inf"
        return f'float("{v}")'
    if dtype == "bool":
        return repr(bool(v))
    if dtype.startswith(("int", "uint")) or dtype == "int":
        return repr(int(v))
    return repr(float(v))
