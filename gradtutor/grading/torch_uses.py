"""Trusted side: which of torch's lazily loaded paths the chapters being graded take, read from
their code, so that the zygote walks those alone (``autograder.sandbox.walks``).

A chapter's code is what its children run besides the student's own lines: the lessons' code
cells (never a solution cell), and for each of its exercises the answer read's setups and call,
and the source of every student-runtime function or class these reach (``autograder.*``,
followed through the modules' own names: a harness that calls ``gradcheck`` takes its path).
Each name is resolved to the dotted path it stands for (``import torch.optim as optim``,
``from torch.autograd import gradcheck``, ``__import__('autograder.harness', ...).x``); a walk
is chosen when a path falls under a module it covers. Only walk names leave this module: no
line of a lesson or a unit reaches the zygote from here.
"""

from __future__ import annotations

import ast
import contextlib
import functools
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import autograder
from autograder.sandbox.walks import COVERS, GRAD_OUTPUTS
from gradtutor.course import grade_cells
from gradtutor.key import registry
from gradtutor.key.answer_key import spec
from gradtutor.nbcells import is_solution

RUNTIME = "autograder"
_MAGIC = re.compile(r"^\s*[%!].*$", re.MULTILINE)  # IPython's magics and shell lines: not Python


def walks_for(sources: dict[str, dict[str, Any]]) -> list[str]:
    """The walks the chapters of ``sources`` (assignment -> notebook -> source notebook) take,
    in ``autograder.sandbox.walks``' order; none when they take none."""
    return walks_for_paths(used_paths(chapter_code(sources)))


def walks_for_paths(paths: Iterable[str]) -> list[str]:
    paths = set(paths)
    return [name for name, covers in COVERS.items()
            if any(p == m or p.startswith(m + ".") for p in paths for m in covers)]


def chapter_code(sources: dict[str, dict[str, Any]]) -> list[str]:
    """The lessons' code cells (solution cells left out) and their exercises' setups and calls."""
    code: list[str] = []
    known = set(registry.ids())
    for notebooks in sources.values():
        for nb in notebooks.values():
            code += [c.source for c in nb.cells if c.cell_type == "code" and not is_solution(c)]
            for gid, _ in grade_cells(nb):
                if gid in known:
                    s = spec(registry.get(gid))
                    code += [*s.setups, *([s.call] if s.call else [])]
    return code


def used_paths(code: Iterable[str]) -> set[str]:
    """Every dotted path the code uses, runtime functions followed into their source."""
    aliases: dict[str, str] = {}  # one namespace, as a notebook's cells share one
    modules: set[str] = set()
    named: set[str] = set()
    used: set[str] = set()
    for text in code:
        n, u = _paths(_parse(text), aliases, modules)
        named |= n
        used |= u
    return used | _runtime_uses(named)


def _parse(text: str) -> ast.AST:
    try:
        return ast.parse(_MAGIC.sub("", text))
    except (SyntaxError, ValueError):
        return ast.Module([], [])


def _paths(tree: ast.AST, aliases: dict[str, str], modules: set[str]) -> tuple[set[str], set[str]]:
    """(the dotted paths ``tree`` names, those it uses), its imports first added to
    ``aliases`` (and the modules they bind to ``modules``). A path is used where it is called
    or handed to a call (``gradcheck`` given to a helper that calls it); a module handed on
    (e.g. ``hasattr(torch.func, name)``, to patch it) or imported loads nothing lazy."""
    named: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                aliases[a.asname or a.name.split(".")[0]] = a.name if a.asname else a.name.split(".")[0]
                parts = a.name.split(".")  # ``import torch.func`` binds torch and loads torch.func
                modules.update(".".join(parts[:i]) for i in range(1, len(parts) + 1))
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for a in node.names:
                named.add(f"{node.module}.{a.name}")
                aliases[a.asname or a.name] = f"{node.module}.{a.name}"
    used: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute | ast.Name):
            path = _dotted(node, aliases)
            if path:
                named.add(path)
        elif isinstance(node, ast.Call):
            path = _dotted(node.func, aliases)
            if path:
                used.add(path)
            if _passes_a_gradient(node, path):
                used.add(GRAD_OUTPUTS)
            for arg in [*node.args, *(k.value for k in node.keywords)]:
                path = _dotted(arg, aliases) if isinstance(arg, ast.Attribute | ast.Name) else None
                if path and path not in modules:
                    used.add(path)
    return named, used


def _passes_a_gradient(call: ast.Call, path: str | None) -> bool:
    """A backward pass given its outputs' gradient: ``y.backward(v)`` (on anything: only
    tensors have it), ``torch.autograd.backward(ys, vs)``, ``torch.autograd.grad(ys, xs, vs)``."""
    keywords = {k.arg for k in call.keywords}
    method = isinstance(call.func, ast.Attribute) and call.func.attr == "backward"
    if method and path != "torch.autograd.backward":
        return bool(call.args) or "gradient" in keywords
    if path == "torch.autograd.backward":
        return len(call.args) >= 2 or "grad_tensors" in keywords
    if path == "torch.autograd.grad":
        return len(call.args) >= 3 or "grad_outputs" in keywords
    return False


def _dotted(node: ast.AST, aliases: dict[str, str]) -> str | None:
    attrs: list[str] = []
    while isinstance(node, ast.Attribute):
        attrs.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        root = aliases.get(node.id, node.id)
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "__import__" \
            and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
        root = node.args[0].value  # __import__('autograder.harness', fromlist=[...]).report
    else:
        return None
    return ".".join([root, *reversed(attrs)])


def _runtime_uses(named: set[str]) -> set[str]:
    """The paths used by the source of every runtime function or class ``named`` reaches,
    and by those they name in turn, each resolved through its own module's names. Read from
    the runtime's files, never imported (the parent has no use for its drawing modules)."""
    seen: set[str] = set()
    todo = [p for p in named if _in_runtime(p)]
    used: set[str] = set()
    while todo:
        path = todo.pop()
        if path in seen:
            continue
        seen.add(path)
        found = _definition(path)
        if found is None:
            continue
        module, node = found
        if isinstance(node, str):  # a name the module imports: where it comes from
            todo.append(node)
            continue
        if _headless_skipped(node, module):
            continue  # a drawing or widget: it does nothing in a grading child
        n, u = _paths(node, dict(module.aliases), set(module.modules))
        used |= u
        todo += [p for p in n | u if _in_runtime(p)]
    return used


HEADLESS = "autograder.visual.headless.skipped_when_headless"


def _headless_skipped(node: ast.AST, module: _Module) -> bool:
    """A runtime function marked to return at once where nobody sees it (a grading child)."""
    return any(_dotted(d, module.aliases) == HEADLESS for d in getattr(node, "decorator_list", ()))


def _in_runtime(path: str) -> bool:
    return path == RUNTIME or path.startswith(RUNTIME + ".")


@dataclass(frozen=True)
class _Module:
    aliases: dict[str, str]  # top-level name -> dotted path (imports, its own defs, lazy exports)
    modules: set[str]  # the paths its ``import`` statements bind: modules
    defs: dict[str, ast.AST]  # top-level function or class -> its tree


def _definition(path: str) -> tuple[_Module, ast.AST | str] | None:
    """(module, the tree of the top-level function or class at ``path``, or the path a name
    the module imports stands for); None for a module itself or a name not found."""
    parts = path.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        module = _module(".".join(parts[:cut]))
        if module is None:
            continue
        name = parts[cut]
        if name in module.defs:
            return module, module.defs[name]
        target = module.aliases.get(name)
        if target is not None and target != path:
            return module, ".".join([target, *parts[cut + 1:]])
        return None
    return None


@functools.cache
def _module(name: str) -> _Module | None:
    """A runtime module's names, from its file."""
    if not _in_runtime(name):
        return None
    base = Path(autograder.__file__).parent.joinpath(*name.split(".")[1:])
    file = base / "__init__.py" if base.is_dir() else base.with_suffix(".py")
    try:
        tree = ast.parse(file.read_text())
    except (OSError, SyntaxError, ValueError):
        return None
    package = name if file.name == "__init__.py" else name.rpartition(".")[0]
    aliases: dict[str, str] = {}
    modules: set[str] = set()
    defs: dict[str, ast.AST] = {}
    for node in tree.body:
        if isinstance(node, ast.Import | ast.ImportFrom):
            if isinstance(node, ast.ImportFrom) and node.level:  # relative: from the package
                up = package.split(".")[:len(package.split(".")) - node.level + 1]
                node = ast.ImportFrom(".".join([*up, *([node.module] if node.module else [])]), node.names, 0)
            _paths(node, aliases, modules)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            defs[node.name] = node
            aliases[node.name] = f"{name}.{node.name}"
        elif isinstance(node, ast.Assign) and [getattr(t, "id", None) for t in node.targets] == ["_EXPORTS"]:
            # the package's lazily loaded names (``autograder.__getattr__``): name -> module
            with contextlib.suppress(ValueError):
                exports = ast.literal_eval(node.value)
                aliases.update({k: f"{v}.{k}" for k, v in exports.items()})
    return _Module(aliases, modules, defs)
