"""Architecture rules of the package, checked on its source with ``ast`` (no import, no sampling).

* the packages form a DAG in one direction: each row of ARCHITECTURE.md's package table
  imports only rows below it (imports inside functions included, those under
  ``if TYPE_CHECKING:`` not); every package has a row, an ``__init__`` docstring and an
  ``__all__``;
* no import cycle between modules (the root ``__init__``'s re-exports allowed, but a module
  that imports the root while the root imports it is a cycle);
* no private name (``_x``, not ``__x__``) or private module imported from another package, and
  no ``module._x`` on a module of another package (a ``_helper`` may be shared inside its
  package);
* ``bayeslaw.posterior`` and ``bayeslaw.plots`` import without pymc, pytensor, nutpie, numba
  or dask (the light path, as arviz-stats' ``test_minimal.py`` checks its own);
* no module over 600 lines (one concept may grow past 400; two concepts split), no function
  over 60 lines outside the plotting package;
* no block of six or more code lines of the same shape repeated inside ``bayeslaw/``;
* the README, the docs and the notebooks use only names the package exports at the top.

The checkers take a folder, so that the tests below can also run them on small packages
written to ``tmp_path`` and show that each one can fail.
"""

from __future__ import annotations

import ast
import io
import json
import keyword
import re
import tokenize
from collections import defaultdict
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PKG = ROOT / "bayeslaw"

MAX_MODULE_LINES = 600
MAX_FUNCTION_LINES = 60
DUPLICATE_LINES = 6
#: a shape standing in more places than this is an idiom, not a copy (as the ``duplicates`` tool)
DUPLICATE_MAX_PLACES = 8


# ---------------------------------------------------------------------------------------------
# Reading the package


@dataclass(frozen=True)
class Module:
    """One ``.py`` file of a package: its dotted name, path and syntax tree."""

    name: str
    path: Path
    rel: str  # the path from the package's parent folder: bayeslaw/data.py
    is_package: bool
    tree: ast.Module

    def where(self, node: ast.AST) -> str:
        """``file:line`` of a node."""
        return f"{self.rel}:{node.lineno}"


def read_package(folder: Path) -> dict[str, Module]:
    """Every module of the package in ``folder``, keyed by dotted name (``bayeslaw.data.table``)."""
    modules = {}
    for path in sorted(folder.rglob("*.py")):
        rel = path.relative_to(folder.parent)
        parts = list(rel.with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        if is_package:
            parts = parts[:-1]
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        modules[".".join(parts)] = Module(".".join(parts), path, rel.as_posix(), is_package,
                                          tree)
    return modules


def _is_type_checking(test: ast.expr) -> bool:
    return ((isinstance(test, ast.Name) and test.id == "TYPE_CHECKING")
            or (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"))


def _imports(tree: ast.AST, *, type_checking: bool) -> list[ast.Import | ast.ImportFrom]:
    """Every import statement, at any depth; under ``if TYPE_CHECKING:`` only if asked."""
    found: list[ast.Import | ast.ImportFrom] = []

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.Import | ast.ImportFrom):
            found.append(node)
        if isinstance(node, ast.If) and _is_type_checking(node.test) and not type_checking:
            for child in node.orelse:
                visit(child)
            return
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return found


def _base(module: Module, node: ast.ImportFrom) -> str:
    """The dotted module a ``from ... import`` names, relative imports resolved."""
    if not node.level:
        return node.module or ""
    parts = module.name.split(".")
    if not module.is_package:
        parts = parts[:-1]
    parts = parts[: len(parts) - (node.level - 1)]
    return ".".join(parts + ([node.module] if node.module else []))


@dataclass(frozen=True)
class Edge:
    """``source`` imports ``target`` (both package modules) at ``where``; ``names`` imported."""

    source: str
    target: str
    where: str
    names: tuple[str, ...]


def import_edges(modules: dict[str, Module], *, type_checking: bool = False) -> list[Edge]:
    """Every import of one package module by another (``from .x import y`` -> ``x``, or
    ``x.y`` when that is a module; ``from . import __version__`` -> the root)."""
    edges = []
    for module in modules.values():
        for node in _imports(module.tree, type_checking=type_checking):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name in modules:
                        edges.append(Edge(module.name, alias.name, module.where(node),
                                          (alias.name,)))
                continue
            base = _base(module, node)
            for alias in node.names:
                target = f"{base}.{alias.name}"
                if target not in modules:
                    target = base
                if target in modules:
                    edges.append(Edge(module.name, target, module.where(node),
                                      (alias.name,)))
    return edges


# ---------------------------------------------------------------------------------------------
# a. import cycles


def find_cycles(folder: Path) -> list[str]:
    """Each import cycle of the package in ``folder``, as ``a -> b -> a`` with where each
    import stands.  Edges from the root ``__init__`` (its re-exports) are left out, except that a
    module importing the root closes a cycle when the root's imports reach that module."""
    modules = read_package(folder)
    root = folder.name
    edges = import_edges(modules)
    graph: dict[str, dict[str, Edge]] = defaultdict(dict)
    for e in edges:
        if e.source != root:
            graph[e.source].setdefault(e.target, e)
    cycles = []
    for component in _strongly_connected(graph):
        if len(component) > 1 or component[0] in graph[component[0]]:
            cycle = _cycle_in(graph, set(component))
            more = (f"; the cycles tie together {', '.join(component)}"
                    if len(component) > len(cycle) - 1 else "")
            cycles.append(_describe(cycle, graph) + more)
    # a module importing the root: a cycle when the root (re-exports included) imports it back
    full: dict[str, set[str]] = defaultdict(set)
    for e in edges:
        full[e.source].add(e.target)
    reached = _reachable(full, root)
    for e in edges:
        if e.target == root and e.source != root and e.source in reached:
            cycles.append(f"{e.source} -> {root} (the root re-exports it) -> ... -> {e.source}: "
                          f"{e.where} imports the package root ({', '.join(e.names)}); import "
                          "from the module that defines the name instead")
    return cycles


def _reachable(graph: dict[str, set[str]], start: str) -> set[str]:
    seen, stack = set(), [start]
    while stack:
        for nxt in graph[stack.pop()]:
            if nxt not in seen:
                seen.add(nxt)
                stack.append(nxt)
    return seen


def _strongly_connected(graph: dict[str, dict[str, Edge]]) -> list[list[str]]:
    """Tarjan's strongly connected components (iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    components = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            for child in children:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    components.append(sorted(component))
    return components


def _cycle_in(graph: dict[str, dict[str, Edge]], component: set[str]) -> list[str]:
    """One shortest cycle through the component's first module (breadth-first)."""
    start = min(component)
    paths = {start: [start]}
    frontier = [start]
    while frontier:
        nxt = []
        for node in frontier:
            for child in sorted(graph[node]):
                if child == start:
                    return paths[node] + [start]
                if child in component and child not in paths:
                    paths[child] = paths[node] + [child]
                    nxt.append(child)
        frontier = nxt
    raise AssertionError(f"no cycle through {start}")  # pragma: no cover


def _describe(cycle: list[str], graph: dict[str, dict[str, Edge]]) -> str:
    steps = "; ".join(f"{graph[a][b].where} imports {b}" for a, b in pairwise(cycle))
    return f"{' -> '.join(cycle)} ({steps})"


def test_no_import_cycle():
    cycles = find_cycles(PKG)
    assert not cycles, (
        f"{len(cycles)} import cycle(s) in bayeslaw/ (imports inside functions count; a module "
        "imports only modules below it):\n" + "\n".join(cycles))


def _write(folder: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return folder


def test_cycle_checker_finds_cycles(tmp_path):
    pkg = _write(tmp_path / "pkg", {
        "__init__.py": "from . import a, b, c\nfrom .a import thing\n",
        "a.py": "def thing():\n    from . import b\n    return b\n",  # inside a function
        "b.py": "from .a import thing\n",
        "c.py": ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from . import d\n"
                 "from .sub.e import f\n"),
        "d.py": "from .c import x\n",  # c -> d only for type checking: no cycle
        "sub/__init__.py": "",
        "sub/e.py": "from .. import __version__\nf = 1\n",  # the root re-exports c -> sub.e
    })
    cycles = find_cycles(pkg)
    assert len(cycles) == 2, cycles
    assert cycles[0].startswith("pkg.a -> pkg.b -> pkg.a (pkg/a.py:2 imports pkg.b; "
                                "pkg/b.py:1 imports pkg.a)"), cycles
    assert cycles[1].startswith("pkg.sub.e -> pkg (the root re-exports it)"), cycles
    assert "pkg/sub/e.py:1" in cycles[1]
    (pkg / "sub" / "e.py").write_text("f = 1\n")
    (pkg / "a.py").write_text("def thing():\n    return 1\n")
    assert find_cycles(pkg) == []


# ---------------------------------------------------------------------------------------------
# b. private names across modules


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def package_of(name: str) -> str:
    """The package a module belongs to: ``bayeslaw.posterior.draws`` -> ``bayeslaw.posterior``;
    a top-level module (``bayeslaw.errors``) is its own package, the root is the root."""
    parts = name.split(".")
    return ".".join(parts[:2])


def private_uses(folder: Path) -> list[str]:
    """Each import of a private name or private module from another package, and each
    ``module._name`` on an imported module of another package, as ``file:line: what`` (a
    ``_helper`` may be shared by the modules of one package)."""
    modules = read_package(folder)
    found = []
    for module in modules.values():
        home = package_of(module.name)
        bound: dict[str, str] = {}  # local name -> package module it is bound to
        for node in _imports(module.tree, type_checking=True):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name in modules or alias.name.split(".")[0] in modules:
                        if any(_private(p) for p in alias.name.split(".")):
                            found.append(f"{module.where(node)}: imports the private module "
                                         f"{alias.name}")
                        if alias.asname:
                            bound[alias.asname] = alias.name
                continue
            base = _base(module, node)
            if base not in modules and not any(m.startswith(base + ".") for m in modules):
                continue  # not the package
            if package_of(base) == home and base != folder.name:
                continue  # inside one package: its helpers are shared
            if any(_private(p) for p in base.split(".")):
                found.append(f"{module.where(node)}: imports from the private module {base}")
            for alias in node.names:
                target = f"{base}.{alias.name}"
                if _private(alias.name):
                    what = "private module" if target in modules else "private name"
                    found.append(f"{module.where(node)}: imports the {what} {alias.name} "
                                 f"from {base}")
                if target in modules:
                    bound[alias.asname or alias.name] = target
        for node in ast.walk(module.tree):
            if (isinstance(node, ast.Attribute) and _private(node.attr)
                    and isinstance(node.value, ast.Name) and node.value.id in bound
                    and package_of(bound[node.value.id]) != home):
                found.append(f"{module.where(node)}: uses {node.value.id}.{node.attr}, a private "
                             f"name of {bound[node.value.id]}")
    return sorted(set(found))


def test_no_private_name_across_modules():
    found = private_uses(PKG)
    assert not found, (
        f"{len(found)} use(s) of another module's private name in bayeslaw/ (make the name "
        "public, with a docstring, or keep its use inside its module):\n" + "\n".join(found))


def test_private_checker_finds_uses(tmp_path):
    pkg = _write(tmp_path / "pkg", {
        "__init__.py": "",
        "_hidden.py": "x = 1\n",
        "a.py": "_secret = 1\n__dunder__ = 2\ndef _helper():\n    return _secret\n",
        "b.py": ("from .a import _secret, __dunder__\nfrom . import a\nfrom . import _hidden\n"
                 "def f():\n    from .a import _helper\n    return a._helper, a.__dunder__\n"),
        "sub/__init__.py": "",
        "sub/one.py": "def _shared():\n    return 1\n",
        "sub/two.py": ("from .one import _shared\nfrom . import one\nfrom ..a import _secret\n"
                       "x = one._shared, _shared\n"),  # inside sub: allowed; from a: not
    })
    assert private_uses(pkg) == [
        "pkg/b.py:1: imports the private name _secret from pkg.a",
        "pkg/b.py:3: imports the private module _hidden from pkg",
        "pkg/b.py:5: imports the private name _helper from pkg.a",
        "pkg/b.py:6: uses a._helper, a private name of pkg.a",
        "pkg/sub/two.py:3: imports the private name _secret from pkg.a",
    ]


# ---------------------------------------------------------------------------------------------
# c. sizes


#: The plotting package, whose figure functions may run longer than 60 lines (a figure is one
#: long sequence of axis calls; splitting it hides more than it shows).
PLOTTING = frozenset({"plots"})


def long_modules(folder: Path, limit: int = MAX_MODULE_LINES) -> list[str]:
    """Each module over ``limit`` lines, as ``file: N lines``."""
    return [f"{m.rel}: {n} lines"
            for m in read_package(folder).values()
            if (n := len(m.path.read_text(encoding="utf-8").splitlines())) > limit]


def long_functions(folder: Path, limit: int = MAX_FUNCTION_LINES) -> list[str]:
    """Each function or method over ``limit`` lines (``def`` line to its last line) outside
    the plotting package (:data:`PLOTTING`), as ``file:line name: N lines``."""
    found = []
    for module in read_package(folder).values():
        if len(module.name.split(".")) > 1 and module.name.split(".")[1] in PLOTTING:
            continue
        for node in ast.walk(module.tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                n = node.end_lineno - node.lineno + 1
                if n > limit:
                    found.append(f"{module.where(node)} {node.name}: {n} lines")
    return sorted(found)


def test_module_sizes():
    found = long_modules(PKG)
    assert not found, (f"{len(found)} module(s) over {MAX_MODULE_LINES} lines (move a coherent "
                       "part to a new module):\n" + "\n".join(found))


def test_function_sizes():
    found = long_functions(PKG)
    assert not found, (f"{len(found)} function(s) over {MAX_FUNCTION_LINES} lines outside the "
                       "plotting modules (extract named helpers):\n" + "\n".join(found))


def test_size_checkers_find_offenders(tmp_path):
    body = "".join(f"    x{i} = {i}\n" for i in range(60))
    pkg = _write(tmp_path / "pkg", {
        "__init__.py": "",
        "a.py": f"def long():\n{body}\n\nclass K:\n    def ok(self):\n        return 1\n",
        "plots/__init__.py": "",
        "plots/grid.py": f"def figure():\n{body}",
    })
    assert long_functions(pkg) == ["pkg/a.py:1 long: 61 lines"]
    assert long_modules(pkg, limit=60) == ["pkg/a.py: 66 lines", "pkg/plots/grid.py: 61 lines"]


# ---------------------------------------------------------------------------------------------
# d. repeated blocks


_PUNCTUATION = set("()[]{},:;.")
#: a line of these only (names, literals, separators: a field, a list item) is thin
_THIN = {"N", "S", "0", ",", ":", ".", "[", "]", "{", "}", ")"}
_KEEP = {"True", "False", "None"}


@dataclass(frozen=True)
class CodeLine:
    """One code line: its number, its shape (names, strings, numbers as placeholders) and
    its text with white space folded."""

    line: int
    shape: str
    text: str

    @property
    def thin(self) -> bool:
        """A line of names, literals and separators only (no call, operator or keyword)."""
        return set(self.shape.split()) <= _THIN


def _docstring_and_import_lines(tree: ast.Module) -> set[int]:
    skip: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            skip.update(range(node.lineno, node.end_lineno + 1))
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            first = node.body[0] if node.body else None
            if (isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
                    and isinstance(first.value.value, str)):
                skip.update(range(first.lineno, first.end_lineno + 1))
    return skip


def _shape(tok: tokenize.TokenInfo) -> str | None:
    if tok.type == tokenize.NAME:
        return tok.string if keyword.iskeyword(tok.string) or tok.string in _KEEP else "N"
    return {tokenize.STRING: "S", tokenize.NUMBER: "0"}.get(
        tok.type, tok.string if tok.type == tokenize.OP else None)


def code_lines(path: Path) -> list[CodeLine]:
    """The file's code lines: names -> ``N``, strings -> ``S``, numbers -> ``0`` in the shape,
    keywords and operators kept, white space folded.  Blank lines, comments, docstrings,
    import statements and lines of lone punctuation are left out."""
    text = path.read_text(encoding="utf-8")
    skip = _docstring_and_import_lines(ast.parse(text))
    shapes: dict[int, list[str]] = defaultdict(list)
    texts: dict[int, list[str]] = defaultdict(list)
    fstring = getattr(tokenize, "FSTRING_START", -1), getattr(tokenize, "FSTRING_END", -1)
    depth = 0  # inside an f-string (Python 3.12 tokenizes its parts): one string
    for tok in tokenize.generate_tokens(io.StringIO(text).readline):
        line = tok.start[0]
        if line in skip:
            continue
        if tok.type in fstring:
            depth += 1 if tok.type == fstring[0] else -1
            if tok.type == fstring[0] and depth == 1:
                shapes[line].append("S")
            texts[line].append(tok.string)
            continue
        shape = None if depth else _shape(tok)
        if shape is not None:
            shapes[line].append(shape)
        if tok.type not in (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT,
                            tokenize.DEDENT, tokenize.ENDMARKER):
            texts[line].append(tok.string)
    return [CodeLine(line, " ".join(toks), " ".join(texts[line]))
            for line, toks in sorted(shapes.items()) if not set(toks) <= _PUNCTUATION]


def repeated_blocks(folder: Path, size: int = DUPLICATE_LINES,
                    max_places: int = DUPLICATE_MAX_PLACES) -> list[str]:
    """Each pair of places in the package that share ``size`` or more consecutive code lines
    of the same shape (:func:`code_lines`), as ``a.py:10-24 ~ b.py:40-54 (N lines)``.

    As the workplace tool ``duplicates``: identical lines count, and so do lines alike only in
    shape unless most of them are thin (fields of a dataclass, the items of a list of
    strings); a run standing in more than ``max_places`` places is an idiom and left out."""
    files = {m.rel: code_lines(m.path) for m in read_package(folder).values()}
    by_shape: dict[tuple[str, ...], list[tuple[str, int]]] = defaultdict(list)
    by_text: dict[tuple[str, ...], list[tuple[str, int]]] = defaultdict(list)
    for name, lines in files.items():
        for i in range(len(lines) - size + 1):
            window = lines[i:i + size]
            by_text[tuple(c.text for c in window)].append((name, i))
            if sum(not c.thin for c in window) * 2 > size:
                by_shape[tuple(c.shape for c in window)].append((name, i))
    runs: dict[tuple[str, str, int], set[int]] = defaultdict(set)  # pair, offset -> starts
    for where in [*by_shape.values(), *by_text.values()]:
        if not 2 <= len(where) <= max_places:
            continue
        for k, (fa, ia) in enumerate(where):
            for fb, ib in where[k + 1:]:
                if not (fa == fb and abs(ib - ia) < size):  # not a window overlapping itself
                    runs[(fa, fb, ib - ia)].add(ia)
    found = []
    for (fa, fb, offset), starts in runs.items():
        a, b = files[fa], files[fb]
        starts = sorted(starts)
        begin = starts[0]
        for prev, nxt in zip(starts, [*starts[1:], None], strict=True):
            if nxt == prev + 1:
                continue
            end = prev + size - 1
            found.append((end - begin + 1, f"{fa}:{a[begin].line}-{a[end].line} ~ "
                          f"{fb}:{b[begin + offset].line}-{b[end + offset].line}"))
            begin = nxt
    return [f"{where} ({n} code lines)" for n, where in sorted(found, key=lambda x: (-x[0], x[1]))]


def test_no_repeated_blocks():
    found = repeated_blocks(PKG)
    assert not found, (
        f"{len(found)} block(s) of {DUPLICATE_LINES} or more code lines of the same shape "
        "(names, strings and numbers aside) stand twice in bayeslaw/; write each once:\n"
        + "\n".join(found))


def test_repeat_checker_finds_blocks(tmp_path):
    block = ("def {f}(x, y):\n    '''Doc.'''\n    # comment\n    z = x + {n}\n"
             "    if z > y:\n        z = y * 2\n\n    w = [z, x]\n    return sum(w) / {n}\n")
    pkg = _write(tmp_path / "pkg", {
        "__init__.py": "",
        "a.py": "import os\n" + block.format(f="one", n=1),
        "b.py": "x = 1\n" + block.format(f="two", n=7),
        "c.py": block.format(f="three", n=3)[: -len("    return sum(w) / 3\n")],  # five lines
    })
    assert repeated_blocks(pkg) == ["pkg/a.py:2-10 ~ pkg/b.py:2-10 (6 code lines)"]


# ---------------------------------------------------------------------------------------------
# the README and the notebooks use only the names at the top of the package


def _doc_code() -> list[tuple[str, str]]:
    """The Python of the README (fenced ``python`` blocks and indented blocks that use ``bl.``),
    of the documentation's pages (fenced ``python`` blocks) and of the notebooks, as
    ``(where, source)``."""
    code = []
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for m in re.finditer(r"```python\n(.*?)```", readme, re.S):
        code.append((f"README.md:{readme[:m.start()].count(chr(10)) + 2}", m.group(1)))
    for m in re.finditer(r"(?:^    \S.*\n)+", readme, re.M):
        block = "\n".join(line[4:] for line in m.group(0).splitlines())
        if "bl." in block and "import" in block:
            code.append((f"README.md:{readme[:m.start()].count(chr(10)) + 1}", block))
    for path in sorted((ROOT / "docs").rglob("*.md")):  # the user guide and benchmark pages
        if "_build" not in path.parts:
            where = path.relative_to(ROOT).as_posix()
            text = path.read_text(encoding="utf-8")
            code += [(f"{where}:{text[:m.start()].count(chr(10)) + 2}", m.group(1))
                     for m in re.finditer(r"```python\n(.*?)```", text, re.S)]
    for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        code += [(f"notebooks/{path.name} cell {i}", "".join(c["source"]))
                 for i, c in enumerate(cells) if c["cell_type"] == "code"]
    for path in sorted((ROOT / "notebooks").glob("*.py")):
        if path.name != "conftest.py":
            code.append((f"notebooks/{path.name}", path.read_text(encoding="utf-8")))
    return code


def test_docs_use_only_top_level_names():
    exported = set(ast.literal_eval(next(
        node.value for node in read_package(PKG)["bayeslaw"].tree.body
        if isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "__all__"
                                                for t in node.targets))))
    allowed_modules = {"bayeslaw", "bayeslaw.testing"}
    found = []
    for where, source in _doc_code():
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.Import):
                found += [f"{where}: import {a.name}" for a in node.names
                          if a.name.startswith("bayeslaw") and a.name not in allowed_modules]
            elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("bayeslaw"):
                names = {a.name for a in node.names}
                if node.module not in allowed_modules or (
                        node.module == "bayeslaw" and names - {"testing"}):
                    found.append(f"{where}: from {node.module} import {', '.join(sorted(names))}")
            elif (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                  and node.value.id == "bl" and node.attr not in exported):
                found.append(f"{where}: bl.{node.attr} is not in bayeslaw.__all__")
    assert not found, ("the README, the docs and the notebooks import only `bayeslaw` (as bl) and "
                       "`bayeslaw.testing`, and use only names the package exports:\n"
                       + "\n".join(sorted(set(found))))


# ---------------------------------------------------------------------------------------------
# e. packages: one direction, each with its docstring and API; the light path


def package_ranks(doc: str) -> dict[str, int]:
    """The package table of an ARCHITECTURE.md: ``| rank | `pkg/x/`, `pkg/y.py` | ... |`` ->
    ``{"pkg.x": rank, "pkg.y": rank}`` (a row may name several packages: siblings)."""
    ranks = {}
    for m in re.finditer(r"^\| (\d+) \| ([^|]+) \|", doc, re.M):
        for name in re.findall(r"`([\w/]+?)(?:/|\.py)`", m.group(2)):
            ranks[name.replace("/", ".")] = int(m.group(1))
    return ranks


def packages(folder: Path) -> set[str]:
    """The packages of the package in ``folder``: its subpackages and top-level modules."""
    return {package_of(name) for name in read_package(folder) if name != folder.name}


def dag_violations(folder: Path, ranks: dict[str, int]) -> list[str]:
    """Each import of a package by one of the same or a higher rank (siblings of one row do not
    import each other), and each package without a rank, as ``file:line: what``."""
    found = [f"{name} has no row in the package table" for name in sorted(packages(folder))
             if name not in ranks]
    for e in import_edges(read_package(folder)):
        a, b = package_of(e.source), package_of(e.target)
        if folder.name in (a, b) or a == b or a not in ranks or b not in ranks:
            continue  # the root's re-exports (and imports of the root: a cycle, checked above)
        if ranks[b] >= ranks[a]:
            found.append(f"{e.where}: {a} (row {ranks[a]}) imports {b} (row {ranks[b]})")
    return sorted(set(found))


def test_packages_follow_the_table():
    ranks = package_ranks((ROOT / "ARCHITECTURE.md").read_text(encoding="utf-8"))
    found = dag_violations(PKG, ranks)
    assert not found, ("ARCHITECTURE.md's package table is the import direction: a package "
                       "imports only rows below its own:\n" + "\n".join(found))
    stale = sorted(set(ranks) - packages(PKG))
    assert not stale, f"ARCHITECTURE.md names packages that do not exist: {stale}"


def test_dag_checker_finds_violations(tmp_path):
    pkg = _write(tmp_path / "pkg", {
        "__init__.py": "from .top import run\n",
        "core.py": "X = 1\n",
        "low/__init__.py": "",
        "low/a.py": "from ..core import X\n",
        "high/__init__.py": "",
        "high/b.py": "from ..low.a import X\ndef f():\n    from ..side import y\n",
        "side.py": "y = 1\n",  # a sibling of high
        "top.py": "from .high.b import f as run\n",
        "extra/__init__.py": "",
    })
    ranks = package_ranks("| 0 | `pkg/core.py` | x |\n| 1 | `pkg/low/` | x |\n"
                          "| 2 | `pkg/high/`, `pkg/side.py` | x |\n| 3 | `pkg/top.py` | x |\n")
    assert ranks == {"pkg.core": 0, "pkg.low": 1, "pkg.high": 2, "pkg.side": 2, "pkg.top": 3}
    assert dag_violations(pkg, ranks) == [
        "pkg.extra has no row in the package table",
        "pkg/high/b.py:3: pkg.high (row 2) imports pkg.side (row 2)",
    ]
    (pkg / "low" / "a.py").write_text("from ..core import X\nfrom ..top import run\n")
    assert "pkg/low/a.py:2: pkg.low (row 1) imports pkg.top (row 3)" in dag_violations(pkg, ranks)


def package_doc_problems(folder: Path) -> list[str]:
    """Each subpackage whose ``__init__`` lacks a docstring or an ``__all__`` (its API)."""
    found = []
    for module in read_package(folder).values():
        if not module.is_package or module.name == folder.name:
            continue
        if not ast.get_docstring(module.tree):
            found.append(f"{module.rel}: no docstring saying what the package owns")
        if not any(isinstance(node, ast.Assign)
                   and any(getattr(t, "id", "") == "__all__" for t in node.targets)
                   for node in module.tree.body):
            found.append(f"{module.rel}: no __all__ (the package's API)")
    return found


def test_every_package_says_what_it_owns():
    found = package_doc_problems(PKG)
    assert not found, "\n".join(found)


def test_package_doc_checker_finds_gaps(tmp_path):
    pkg = _write(tmp_path / "pkg", {
        "__init__.py": "",
        "ok/__init__.py": '"""Owns x."""\n__all__ = ["x"]\nx = 1\n',
        "bare/__init__.py": "x = 1\n",
    })
    assert package_doc_problems(pkg) == [
        "pkg/bare/__init__.py: no docstring saying what the package owns",
        "pkg/bare/__init__.py: no __all__ (the package's API)",
    ]


#: What the light path never loads: the sampler's stack
HEAVY = ("pymc", "pytensor", "nutpie", "numba", "dask")


def heavy_loaded(parent: Path, imports: list[str], heavy: tuple[str, ...] = HEAVY) -> list[str]:
    """The modules of ``heavy`` that importing ``imports`` (from ``parent``) loads, in a fresh
    interpreter."""
    import subprocess
    import sys

    code = (f"import json, sys; sys.path.insert(0, {str(parent)!r}); "
            f"import {', '.join(imports)}; "
            f"print(json.dumps(sorted(m for m in {list(heavy)!r} if m in sys.modules)))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True, cwd=parent)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_posterior_and_plots_import_without_the_sampler():
    assert heavy_loaded(ROOT, ["bayeslaw.posterior", "bayeslaw.plots"]) == [], (
        "bayeslaw.posterior and bayeslaw.plots must import without the sampler's stack")


def test_heavy_checker_finds_a_heavy_import(tmp_path):
    _write(tmp_path, {
        "heavylib/__init__.py": "",
        "pkg/__init__.py": "",
        "pkg/light.py": "import json\n",
        "pkg/leaky.py": "def f():\n    pass\nimport heavylib\n",
    })
    assert heavy_loaded(tmp_path, ["pkg.light"], ("heavylib",)) == []
    assert heavy_loaded(tmp_path, ["pkg.leaky"], ("heavylib",)) == ["heavylib"]
