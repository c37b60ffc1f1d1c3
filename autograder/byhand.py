"""Student side: by-hand exercises; while their answer cell runs, autograd is switched off.

A derivation exercise (``Exercise(by_hand=True)``) asks for an expression of the
parameters, not for torch to compute it. While its answer cell (or its function, for a function
answer) runs under ``autograd_off()``, the ways to ask autograd for a gradient raise ``ByHand``
with a message that says so: ``backward()``, ``torch.autograd.grad`` and ``.backward`` (through
the engine they share), ``torch.autograd.functional``, forward-mode dual numbers and the
``torch.func`` transforms. A gradient caught and swallowed by the answer still counts: the
guard remembers that it tripped.

Those names are only the friendly first line: an answer may hold references to the engine saved
by an earlier cell (``torch.autograd.grad``, ``Tensor.backward``, the engine's ``run_backward``,
``torch.func`` transforms, ``forward_ad``). So the guard also watches the engine at its source,
whatever name reached it: a dispatch mode sees every tensor operation the cell runs, and an
operation run while an autograd node is being evaluated (reverse mode: every backward, however
started) or while forward gradients are switched back on trips the guard. Forward mode is
switched off (the forward-gradient flag off, and the one dual level torch allows held by the
guard, so entering another raises). Taking the dispatch-mode stack apart from the answer cell
trips it too. What remains open: code that pops the guard's mode and pushes it back before the
cell ends (see docs/grading.md, "By hand in grading").

Code written by hand (``Exercise(refuse=...)``): a function or class the student writes (a
backward derived on paper, an engine in plain Python) runs under ``guarded``: every call of the
function, every method of the class, with autograd refused (``AUTOGRAD``: the guard above,
where the only autograd node allowed to run operations is the one the code was called from,
and grad mode may not be switched back on inside a block entered without it), or torch refused
altogether (``TORCH``: every torch function and operation). The grader's own code around it
(the harness's autograd reference, gradcheck) runs as usual.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
from collections.abc import Callable, Iterator
from typing import Any

MESSAGE = ("This exercise is done by hand: autograd is switched off while its answer cell runs. "
           "Work the derivative out on paper and write it as an expression of the parameters "
           "in the setup cell (plain Python or torch arithmetic, no backward, autograd.grad or "
           "torch.func).")


NO_TORCH_MESSAGE = ("This code is written by hand in plain Python: torch is refused while it "
                    "runs. Use numbers and the math module only.")

AUTOGRAD = "autograd"  # the student's code runs with autograd refused
TORCH = "torch"  # the student's code runs with torch refused altogether
REFUSALS = ("", AUTOGRAD, TORCH)


class ByHand(RuntimeError):
    """Raised when a by-hand answer asks autograd for a gradient."""

    def __init__(self, what: str = "autograd", message: str = MESSAGE) -> None:
        super().__init__(f"{what} is switched off here. {message}")


class _Guard:
    """Counts trips; one instance is active at a time (kernels run one cell at a time)."""

    def __init__(self) -> None:
        self.depth = 0
        self.tripped = False
        self.trips = 0  # every trip since the kernel started: a caller compares before and after
        self.saved: list[tuple[Any, str, Any]] = []
        self.source: _SourceSwitch | None = None
        self.no_torch = False  # torch_off's modes are on


_GUARD = _Guard()


class _Engine:
    # stands in for torch's autograd engine: every backward and autograd.grad call reaches it
    def run_backward(self, *args: Any, **kwargs: Any) -> Any:
        _trip("backward() and torch.autograd.grad")

    def queue_callback(self, *args: Any, **kwargs: Any) -> Any:
        _trip("backward()")

    def is_checkpoint_valid(self) -> bool:
        return True


def _trip(what: str, message: str = MESSAGE) -> None:
    _GUARD.tripped = True
    _GUARD.trips += 1
    raise ByHand(what, message)


def _refuser(what: str):
    def refuse(*args: Any, **kwargs: Any) -> Any:
        _trip(what)

    return refuse


def _targets() -> list[tuple[Any, str, Any]]:
    """(object, attribute, replacement) for every way into autograd an answer would use."""
    import torch
    import torch.autograd.forward_ad as forward_ad
    import torch.autograd.functional as functional
    import torch.func as func

    out: list[tuple[Any, str, Any]] = [(torch.autograd.Variable, "_execution_engine", _Engine())]
    for name in ("grad", "grad_and_value", "vjp", "jvp", "jacrev", "jacfwd", "hessian", "linearize"):
        if hasattr(func, name):
            out.append((func, name, _refuser(f"torch.func.{name}")))
    for name in ("vjp", "jvp", "jacobian", "hessian", "vhp", "hvp"):
        out.append((functional, name, _refuser(f"torch.autograd.functional.{name}")))
    out.append((forward_ad, "make_dual", _refuser("forward-mode AD (make_dual)")))
    return out


_NESTED_FORWARD = "Nested forward mode AD"  # torch's error when a second dual level is entered


@classmethod
def _no_dynamo_wrapper(cls: type) -> bool:
    """False: torch then leaves a mode's ``__torch_dispatch__`` as written, without the wrapper
    that keeps torch.compile out of it (about 2 of the 8 microseconds each operation costs under
    the guard, and a trained network runs tens of thousands of them per grading read). Nothing
    here is compiled; if student code compiles, the checks still run as Python, graph break or not."""
    return False


@functools.cache
def _watch_class() -> type:
    """The dispatch mode that watches the engine (built on first use: importing this module must
    not import torch, the self-check loads it at kernel start)."""
    import torch
    from torch.utils._python_dispatch import TorchDispatchMode

    class EngineWatch(TorchDispatchMode):
        # every aten operation of the cell passes here, below autograd, whoever called it
        _should_skip_dynamo = _no_dynamo_wrapper

        def __init__(self, node: Any, grad_on: bool) -> None:
            super().__init__()
            self.node = node  # the autograd node the block was entered from (a Function's backward)
            self.grad_on = grad_on

        def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
            node = torch._C._current_autograd_node()
            if node is not None and node is not self.node:
                _trip("the autograd engine (a backward pass)")
            if torch._C._is_fwd_grad_enabled():
                _trip("forward-mode AD")
            if not self.grad_on and torch.is_grad_enabled():
                _trip("enable_grad (grad mode switched back on)")
            return func(*args, **(kwargs or {}))

    return EngineWatch


class _SourceSwitch:
    """Autograd off at its source for one block: forward gradients off, the dual level held, and
    the engine watched by a dispatch mode (see the module docstring)."""

    def __init__(self) -> None:
        import torch

        self.torch = torch
        self.forward_was = torch._C._is_fwd_grad_enabled()
        self.level: int | None = None
        self.mode: Any = None

    def __enter__(self) -> _SourceSwitch:
        torch = self.torch
        torch._C._set_fwd_grad_enabled(False)
        try:
            self.level = torch._C._enter_dual_level()
        except RuntimeError:  # a dual level is open already: forward AD is off by the flag alone
            self.level = None
        self.mode = _watch_class()(torch._C._current_autograd_node(), torch.is_grad_enabled())
        self.mode.__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        from torch.utils._python_dispatch import (
            _get_current_dispatch_mode,
            _get_current_dispatch_mode_stack,
            _pop_mode,
        )

        torch = self.torch
        if _get_current_dispatch_mode() is self.mode:
            self.mode.__exit__(None, None, None)
        else:  # the cell took the mode stack apart: unwind whatever it left, and count it as a
            # trip (code written by hand is refused by the count, not by ``tripped``)
            _GUARD.tripped = True
            _GUARD.trips += 1
            stack = _get_current_dispatch_mode_stack()
            if any(m is self.mode for m in stack):
                while _get_current_dispatch_mode() is not self.mode:
                    _pop_mode()
                self.mode.__exit__(None, None, None)
        if self.level is not None:
            with contextlib.suppress(RuntimeError):  # the cell may have closed it itself
                torch._C._exit_dual_level(self.level)
        if torch._C._is_fwd_grad_enabled() is not self.forward_was:
            torch._C._set_fwd_grad_enabled(self.forward_was)


@contextlib.contextmanager
def autograd_off(active: bool = True) -> Iterator[None]:
    """Switch autograd off for the ``with`` block (nothing when not ``active``): its entry points
    by name, and the engine at its source."""
    if not active:
        yield
        return
    guard = _GUARD
    if guard.depth == 0:
        guard.tripped = False
        targets = _targets()
        guard.saved = [(obj, name, getattr(obj, name)) for obj, name, _ in targets]
        for obj, name, stand_in in targets:
            setattr(obj, name, stand_in)
        guard.source = _SourceSwitch()
        guard.source.__enter__()
    guard.depth += 1
    try:
        yield
    except RuntimeError as e:
        if _NESTED_FORWARD in str(e) and not isinstance(e, ByHand):  # forward mode, by any name
            guard.tripped = True
            guard.trips += 1
            raise ByHand("forward-mode AD") from e
        raise
    finally:
        guard.depth -= 1
        if guard.depth == 0:
            source, guard.source = guard.source, None
            if source is not None:
                source.__exit__(None, None, None)
            for obj, name, original in guard.saved:
                setattr(obj, name, original)
            guard.saved = []


def tripped() -> bool:
    """Did anything inside the last ``autograd_off`` block ask autograd for a gradient?"""
    return _GUARD.tripped


def trips() -> int:
    """How many times a guard has refused something so far: compare before and after a call
    that enters many blocks (a class's methods, each guarded on its own)."""
    return _GUARD.trips


# --- torch refused altogether: an engine the student writes in plain Python ------------------------

@functools.cache
def _no_torch_classes() -> tuple[type, type]:
    """A function mode (every torch function, method and factory) and a dispatch mode (every
    operation, whatever name reached it) that refuse (built on first use, like ``_watch_class``)."""
    from torch.overrides import TorchFunctionMode
    from torch.utils._python_dispatch import TorchDispatchMode

    class NoTorchFunctions(TorchFunctionMode):
        def __torch_function__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
            _trip(f"torch ({getattr(func, '__name__', 'a torch function')})", NO_TORCH_MESSAGE)

    class NoTorchOperations(TorchDispatchMode):
        _should_skip_dynamo = _no_dynamo_wrapper

        def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
            _trip(f"torch ({func})", NO_TORCH_MESSAGE)

    return NoTorchFunctions, NoTorchOperations


@contextlib.contextmanager
def torch_off() -> Iterator[None]:
    """Torch refused for the ``with`` block: autograd off as ``autograd_off`` does, and every
    torch function and operation refused. Nested blocks (an engine's methods calling each
    other) enter the modes once."""
    with autograd_off():
        if _GUARD.no_torch:
            yield
            return
        functions, operations = (cls() for cls in _no_torch_classes())
        _GUARD.no_torch = True
        try:
            with functions, operations:
                yield
        finally:
            _GUARD.no_torch = False


def refusing(what: str) -> contextlib.AbstractContextManager:
    """The guard for ``what`` (``AUTOGRAD`` or ``TORCH``; nothing for "")."""
    if what == TORCH:
        return torch_off()
    return autograd_off(what == AUTOGRAD)


def guard_classes() -> tuple[type, ...]:
    """The guard's dispatch and function modes (built on first use): the grader's snapshot keeps
    their entries, so a cell that patches one of them before an answer is read changes nothing."""
    return (_watch_class(), *_no_torch_classes())


# --- the student's function or class, guarded wherever the grader calls it ------------------------

# libraries whose classes a student's class may inherit from: never patched
_LIBRARIES = ("torch", "abc", "typing", "enum", "collections", "numpy", "autograder")
_HEAP_TYPE = 1 << 9  # Py_TPFLAGS_HEAPTYPE: a class made by a class statement, not built into Python


def _guard_callable(fn: Callable[..., Any], what: str) -> Callable[..., Any]:
    @functools.wraps(fn)
    def guarded_call(*args: Any, **kwargs: Any) -> Any:
        with refusing(what):
            return fn(*args, **kwargs)

    return guarded_call


def _guard_attribute(value: Any, what: str) -> Any:
    """The class attribute ``value`` with its code guarded, or None when it holds no code."""
    if isinstance(value, staticmethod):
        return staticmethod(_guard_callable(value.__func__, what))
    if isinstance(value, classmethod):
        return classmethod(_guard_callable(value.__func__, what))
    if isinstance(value, property):
        parts = (None if f is None else _guard_callable(f, what) for f in (value.fget, value.fset, value.fdel))
        return property(*parts, value.__doc__)
    if inspect.isfunction(value):
        return _guard_callable(value, what)
    return None


def _student_classes(cls: type) -> list[type]:
    """The classes of ``cls``'s MRO that the student wrote (not torch's, not Python's; by the
    class, not by ``__module__``, which is "builtins" for a class made by exec)."""
    return [c for c in cls.__mro__ if c.__flags__ & _HEAP_TYPE
            and str(getattr(c, "__module__", "")).split(".")[0] not in _LIBRARIES]


@contextlib.contextmanager
def guarded(answer: Any, what: str) -> Iterator[Any]:
    """``answer`` (a function or a class the student wrote) with its code run under the guard
    for ``what``: a function is wrapped; a class has every function, static and class method
    and property of its own classes guarded in place for the block (the instances it makes of
    itself inside its methods are guarded too), then restored."""
    if not what or answer is Ellipsis or not callable(answer):
        yield answer
        return
    if not inspect.isclass(answer):
        yield _guard_callable(answer, what)
        return
    saved: list[tuple[type, str, Any]] = []
    try:
        for cls in _student_classes(answer):
            for name, value in list(vars(cls).items()):
                stand_in = _guard_attribute(value, what)
                if stand_in is not None:
                    saved.append((cls, name, value))
                    setattr(cls, name, stand_in)
        yield answer
    finally:
        for cls, name, value in reversed(saved):
            setattr(cls, name, value)


# --- in the kernel: the answer cell itself raises at once ------------------------------------------

ANSWER_CELL_SUFFIX = "-answer"  # nbgrader cell ids of answer cells: "<exercise id>-answer"


class KernelHook:
    """IPython events: a by-hand exercise's answer cell (known by its cell id) runs with autograd
    off, so the student sees the reason in that cell, not only in the check under it."""

    def __init__(self, by_hand: Callable[[str], bool]) -> None:
        self.by_hand = by_hand  # exercise id -> done by hand? (asked only for answer cells)
        self.block: contextlib.ExitStack | None = None

    def pre_run_cell(self, info: Any) -> None:
        cell_id = getattr(info, "cell_id", None) or ""
        if cell_id.endswith(ANSWER_CELL_SUFFIX) and self._by_hand(cell_id[: -len(ANSWER_CELL_SUFFIX)]):
            self.block = contextlib.ExitStack()
            self.block.enter_context(autograd_off())

    def _by_hand(self, exercise_id: str) -> bool:
        try:
            return self.by_hand(exercise_id) is True
        except Exception:  # an unknown id, or check data that cannot load: run the cell as it is
            return False

    def post_run_cell(self, result: Any) -> None:
        if self.block is not None:
            block, self.block = self.block, None
            block.close()


def install(shell: Any, by_hand: Callable[[str], bool]) -> KernelHook | None:
    """Register the hook once per kernel; returns it. ``by_hand`` is asked lazily, per answer
    cell, so that importing the self-check stays instant (no exercise is loaded here)."""
    if shell is None:
        return None
    for hook in getattr(shell, "_gradtutor_by_hand", ()):  # a re-import must not stack hooks
        return hook
    hook = KernelHook(by_hand)
    shell.events.register("pre_run_cell", hook.pre_run_cell)
    shell.events.register("post_run_cell", hook.post_run_cell)
    if hasattr(shell, "set_custom_exc") and not getattr(shell, "custom_exceptions", ()):
        shell.set_custom_exc((ByHand,), one_line)  # only where no other handler is set
    shell._gradtutor_by_hand = (hook,)
    return hook


def one_line(shell: Any, etype: type, value: BaseException, tb: Any, tb_offset: Any = None) -> list[str]:
    """IPython's handler for ``ByHand``: the refusal as one line, without the traceback through
    torch's internals that led to it (the cell still counts as raised)."""
    stb = [f"{etype.__name__}: {value}"]
    shell._showtraceback(etype, value, stb)
    return stb
