"""The package's shape: subpackages by concern, imports only downward (errors, progress ← dp ← estimators, attacks,
inference ← analysis ← simulation ← run, jobs; data beside them; run.record, stdlib only, read before the config), no
import circle, no function or method over 80 lines, no private name imported across modules, and the size of each
subpackage as docs/development.md states it."""

import ast
import re
from pathlib import Path

import pytest

from support import REPO

SRC = REPO / "src" / "dpcost"
# what each layer may import (besides itself and dpcost.errors / dpcost.__init__)
ALLOWED = {
    "dp": set(),
    "data": set(),
    "estimators": {"dp"},
    "attacks": {"dp"},
    "inference": {"dp", "estimators"},
    "analysis": {"dp", "estimators", "data", "attacks", "inference"},
    "simulation": {"dp", "estimators", "data", "attacks", "analysis", "inference"},
    "jobs": {"dp", "estimators", "data", "attacks", "analysis", "simulation", "inference"},
    # the run: its configuration, start-up checks, job arguments, targets, work estimate and closing lines
    "run": {"dp", "estimators", "data", "attacks", "analysis", "simulation", "inference"},
}


def _module(path: Path) -> str:
    return ".".join(path.relative_to(SRC.parent).with_suffix("").parts).removesuffix(".__init__")


def _imports(path: Path) -> list[tuple[str, list[str]]]:
    """(imported module, names) for every dpcost import in the file, relative ones resolved."""
    mod = _module(path)
    package = mod if path.name == "__init__.py" else mod.rsplit(".", 1)[0]
    out = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.startswith("dpcost"):
                out.append((target, [a.name for a in node.names]))
        elif isinstance(node, ast.Import):
            out += [(a.name, []) for a in node.names if a.name.startswith("dpcost")]
    return out


FILES = sorted(SRC.rglob("*.py"))


def _layer(mod: str) -> str | None:
    parts = mod.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in ALLOWED else None


@pytest.mark.parametrize("path", FILES, ids=lambda p: _module(p))
def test_imports_go_down_only(path):
    here = _layer(_module(path))
    for target, names in _imports(path):
        there = _layer(target)
        if here is None or there is None or there == here:
            continue
        assert there in ALLOWED[here], f"{_module(path)} imports {target}"
        for name in names:  # a module's private helpers stay private
            assert not name.startswith("_") or name == "__version__", f"{_module(path)} imports {target}.{name}"


def test_no_import_circle():
    graph = {}
    for path in FILES:
        mod = _module(path)
        deps = set()
        for target, names in _imports(path):
            # "from .x import y" may import a submodule y
            deps |= {t for t in [target, *(f"{target}.{n}" for n in names)] if t in {_module(f) for f in FILES}}
        graph[mod] = deps - {mod}
    seen, stack = set(), []

    def visit(node):
        if node in stack:
            pytest.fail("import circle: " + " -> ".join([*stack[stack.index(node) :], node]))
        if node in seen:
            return
        stack.append(node)
        for nxt in graph.get(node, ()):
            if not nxt.startswith(node + ".") and not (node.startswith(nxt + ".") and nxt in graph):
                visit(nxt)
        stack.pop()
        seen.add(node)

    for mod in graph:
        visit(mod)


MAX_FUNCTION_LINES = 80


def long_functions(source: str, limit: int = MAX_FUNCTION_LINES) -> list[tuple[str, int, int]]:
    """(name, first line, length) of every function or method in ``source`` longer than ``limit`` lines, counted
    from its ``def`` line to its last line (end_lineno − lineno + 1): its decorators are not counted, its docstring,
    comments and blank lines are. A nested function counts inside its parent and on its own."""
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            length = node.end_lineno - node.lineno + 1
            if length > limit:
                out.append((node.name, node.lineno, length))
    return out


@pytest.mark.parametrize("path", FILES, ids=lambda p: _module(p))
def test_functions_stay_short(path):
    """No function or method in src/dpcost is longer than 80 lines (:func:`long_functions`): a step that needs more
    is several named steps. A module may be as long as its subject needs; the size of each subpackage is reported
    in docs/development.md instead (:func:`test_the_package_sizes_in_the_docs_are_current`)."""
    found = long_functions(path.read_text())
    assert not found, (
        f"{_module(path)}: (function, line, length) {found} over {MAX_FUNCTION_LINES}: split into named steps"
    )


def test_the_function_rule_sees_a_long_function():
    body = "\n".join(f"    x{i} = {i}" for i in range(MAX_FUNCTION_LINES))
    long = f"@decorator\ndef f():\n{body}\n\n\nclass C:\n    def g(self):\n        return 1\n"
    assert long_functions(long) == [("f", 2, MAX_FUNCTION_LINES + 1)]  # the decorator's line is not counted
    method = "class C:\n    def g(self):\n" + "\n".join(f"        x{i} = {i}" for i in range(MAX_FUNCTION_LINES))
    assert long_functions(method) == [("g", 2, MAX_FUNCTION_LINES + 1)]
    assert long_functions(long.replace(f"    x{MAX_FUNCTION_LINES - 1} = {MAX_FUNCTION_LINES - 1}\n", "")) == []


DEVELOPMENT = REPO / "docs" / "development.md"
TOP_LEVEL = "top-level modules"


def package_sizes() -> dict[str, int]:
    """Lines (every line of every .py file, as ``wc -l`` counts them) per subpackage of src/dpcost (``dp/``, …, its
    subpackages included) and of the top-level modules together."""
    sizes = {f"{d.name}/": 0 for d in sorted(SRC.iterdir()) if (d / "__init__.py").exists()}
    sizes[TOP_LEVEL] = 0
    for path in FILES:
        parts = path.relative_to(SRC).parts
        sizes[f"{parts[0]}/" if len(parts) > 1 else TOP_LEVEL] += len(path.read_text().splitlines())
    return sizes


def documented_sizes(text: str) -> dict[str, int]:
    """The table under "### Size" in docs/development.md: its first column (`` `dp/` ``, …, "top-level modules …")
    and its lines, the total row left out."""
    section = text.split("### Size", 1)[1].split("\n#", 1)[0]
    out = {}
    for name, lines in re.findall(r"^\| (.+?) \| ([\d,]+) \|$", section, flags=re.M):
        key = TOP_LEVEL if name.startswith(TOP_LEVEL) else name.strip("`")
        if key != "total":
            out[key] = int(lines.replace(",", ""))
    return out


def test_the_package_sizes_in_the_docs_are_current():
    """docs/development.md's size table names every subpackage and states each one's lines within 15 % or 40 lines
    (whichever is larger) of the count. A tolerance, not an exact count: the table is for a reader judging where the
    code is, and an exact number would have to be rewritten by every commit that touches src/; a package that grew
    or shrank by more — or a new one — fails here, and the table's numbers are :func:`package_sizes`'s."""
    real, doc = package_sizes(), documented_sizes(DEVELOPMENT.read_text())
    assert set(doc) == set(real), f"the table's rows should be {list(real)}"
    stale = {k: (doc[k], n) for k, n in real.items() if abs(doc[k] - n) > max(40, 0.15 * n)}
    assert not stale, f"docs/development.md sizes (documented, counted) out of date: {stale}"


def test_the_compute_jobs_do_not_import_matplotlib():
    """Every job starts a Python that imports its job module; matplotlib adds about 0.45 s to each (the 89 simulate
    jobs of the default study paid it until the figure module was imported only where a figure is drawn). The jobs
    that draw import it in their own function."""
    import subprocess
    import sys

    jobs = "dpcost.jobs." + ", dpcost.jobs.".join(("tune", "estimate", "attack", "privacy_map", "simulation", "libsvm",
                                                   "benchmark", "download", "preprocess", "aggregate"))  # fmt: skip
    code = f"import sys, {jobs}; print([m for m in sys.modules if 'matplotlib' in m])"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "[]", out


def test_no_table_keyed_by_method_names_outside_the_registry():
    """Every fact about a method (its interval routes and their constants, its cost, its truncation constant, whether
    it is a reference, what a paper published for it) lives in its registry entry: no dict literal outside
    estimators/registry.py has two or more registry method names as keys (a view computed from the registry is not a
    literal)."""
    from dpcost.estimators.registry import METHODS

    found = []
    for path in FILES:
        rel = path.relative_to(SRC).as_posix()
        if rel == "estimators/registry.py":
            continue
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.Dict):
                keys = [k.value for k in node.keys if isinstance(k, ast.Constant) and k.value in METHODS]
                if len(keys) >= 2:
                    found.append(f"{rel}:{node.lineno} {keys[:4]}")
    assert not found, f"tables keyed by method names outside the registry: {found}"
