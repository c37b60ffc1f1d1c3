"""The import contract (#23): the wall between the two sides is the package boundary.

Read from the source (every ``import``, also inside functions, and every ``import_module`` /
``__import__`` / CLI ``_lazy`` of a literal module name), not from what happens to be loaded:

- the student runtime (``autograder``) never imports the trusted side (``gradtutor``,
  ``exercises``);
- no module of the three packages is in an import circle;
- the trusted side's parts keep their direction: the key under everything, the records under
  grading and reports, the author's tools apart from grading, records and reports;
- a function-local import of the project's own modules says why on its line or the line above;
- no module takes another's private name;
- every module's first docstring line says which side it stands on.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PACKAGES = ("autograder", "gradtutor", "exercises")
LAZY_CALLS = ("import_module", "__import__", "_lazy")  # a literal module name: an import too


@dataclass(frozen=True)
class Import:
    source: str  # the importing module
    target: str  # the imported module (a project module)
    names: tuple[str, ...]
    line: int
    local: bool  # inside a function or class body, not at module level
    said_why: bool  # a comment on its line or the line above


@cache
def modules() -> dict[str, Path]:
    found = {}
    for package in PACKAGES:
        for path in sorted((REPO / package).rglob("*.py")):
            rel = path.relative_to(REPO)
            if any(part in ("build", "__pycache__") for part in rel.parts):
                continue
            name = ".".join(rel.with_suffix("").parts)
            found[name.removesuffix(".__init__")] = path
    return found


def _resolve(base: str, names: tuple[str, ...]) -> list[tuple[str, tuple[str, ...]]]:
    """``from base import a, b``: an edge to base.a where that is a module, else to base."""
    known = modules()
    out, rest = [], []
    for n in names:
        (out.append((f"{base}.{n}", (n,))) if f"{base}.{n}" in known else rest.append(n))
    if rest and base in known:
        out.append((base, tuple(rest)))
    return out


def _said_why(lines: list[str], line: int) -> bool:
    return "#" in lines[line - 1] or lines[line - 2].strip().startswith("#")


@cache
def imports() -> tuple[Import, ...]:
    known = modules()
    found: list[Import] = []
    for module, path in known.items():
        text = path.read_text()
        lines = text.splitlines()
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        tree = ast.parse(text)
        top = {id(n) for n in tree.body} | {id(n) for s in tree.body if isinstance(s, ast.If | ast.Try)
                                             for n in ast.walk(s)}
        for node in ast.walk(tree):
            edges: list[tuple[str, tuple[str, ...]]] = []
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    parts = package.split(".")[:len(package.split(".")) - node.level + 1]
                    base = ".".join(parts + ([node.module] if node.module else []))
                else:
                    base = node.module or ""
                edges = _resolve(base, tuple(a.name for a in node.names))
            elif isinstance(node, ast.Import):
                edges = [(a.name, ()) for a in node.names if a.name in known]
            elif (isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant)
                  and isinstance(node.args[0].value, str)
                  and getattr(node.func, "id", getattr(node.func, "attr", None)) in LAZY_CALLS):
                name = node.args[0].value.partition(":")[0]
                edges = [(name, ())] if name in known else []
            for target, names in edges:
                if target.split(".")[0] in PACKAGES and target != module:
                    found.append(Import(module, target, names, node.lineno, id(node) not in top,
                                        _said_why(lines, node.lineno)))
    return tuple(found)


def _side(module: str) -> str:
    return "student" if module.split(".")[0] == "autograder" else "trusted"


def test_the_graph_is_read() -> None:
    """The contract reads what it claims to: a known import of each kind is among the edges."""
    edges = {(i.source, i.target, i.local) for i in imports()}
    assert ("gradtutor.key.answer_key", "autograder.checkdata", False) in edges  # from-import
    assert any(s == "gradtutor.cli" and t.startswith("gradtutor.grading") for s, t, _ in edges)  # _lazy
    assert len(modules()) > 150  # the units too


def test_the_runtime_never_imports_the_trusted_side() -> None:
    bad = [i for i in imports() if _side(i.source) == "student" and _side(i.target) == "trusted"]
    assert bad == [], "\n".join(f"{i.source}:{i.line} imports {i.target}" for i in bad)


def _circles() -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    graph: dict[str, set[str]] = {m: set() for m in modules()}
    for i in imports():
        graph[i.source].add(i.target)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in graph:
        if v not in index:
            visit(v)
    return out


def test_no_import_circles_counting_function_local_imports() -> None:
    circles = _circles()
    assert circles == [], "\n".join(" <-> ".join(c) for c in circles)


# what each part of the trusted side may never import (prefixes)
NEVER = {
    "gradtutor.key": ("gradtutor.grading", "gradtutor.records", "gradtutor.reports", "gradtutor.authoring",
                      "gradtutor.cli", "gradtutor.course"),
    "gradtutor.records": ("gradtutor.grading", "gradtutor.reports", "gradtutor.authoring", "gradtutor.cli"),
    "gradtutor.grading": ("gradtutor.authoring", "gradtutor.cli"),
    # the scorer judges data; it never starts or talks to a process
    "gradtutor.grading.scoring": ("gradtutor.grading.forkserver", "gradtutor.grading.batch"),
    "gradtutor.reports": ("gradtutor.grading", "gradtutor.authoring", "gradtutor.cli"),
    "gradtutor.authoring": ("gradtutor.grading", "gradtutor.records", "gradtutor.reports", "gradtutor.cli"),
    "exercises": ("gradtutor.grading", "gradtutor.records", "gradtutor.reports", "gradtutor.authoring",
                  "gradtutor.cli", "gradtutor.course"),
}


@pytest.mark.parametrize("part", sorted(NEVER))
def test_each_part_of_the_trusted_side_keeps_its_direction(part: str) -> None:
    bad = [i for i in imports() if (i.source == part or i.source.startswith(part + "."))
           and any(i.target == p or i.target.startswith(p + ".") for p in NEVER[part])]
    assert bad == [], "\n".join(f"{i.source}:{i.line} imports {i.target}" for i in bad)


def test_function_local_imports_of_the_project_say_why() -> None:
    """Kept only where a start-up cost justifies them, with a comment that says so."""
    bad = [i for i in imports() if i.local and not i.said_why]
    assert bad == [], "\n".join(f"{i.source}:{i.line} imports {i.target} inside a function, "
                                "without a comment saying why" for i in bad)


def test_no_module_takes_anothers_private_names() -> None:
    bad = [i for i in imports() for n in i.names if n.startswith("_") and not n.startswith("__")]
    assert bad == [], "\n".join(f"{i.source}:{i.line} takes {i.names} from {i.target}" for i in bad)


def test_every_module_says_which_side_it_stands_on() -> None:
    """The first line of each module's docstring in the two packages names its side."""
    bad = []
    for module, path in modules().items():
        if module.split(".")[0] == "exercises":
            continue  # exercise units: the folder says it (exercises/README.md), the line is the unit's title
        doc = ast.get_docstring(ast.parse(path.read_text())) or ""
        side = "Student side" if _side(module) == "student" else "Trusted side"
        if side not in doc.partition("\n")[0]:
            bad.append(f"{module}: {doc.partition(chr(10))[0]!r}")
    assert bad == [], "\n".join(bad)
