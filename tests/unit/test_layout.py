"""The package's shape: subpackages by concern, imports only downward (errors ← dp ← estimators, attacks, inference ←
analysis ← simulation ← run, jobs; data beside them; run.record, stdlib only, read before the config), no import
circle, no module over ~400 lines, no private name imported across modules."""

import ast
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


@pytest.mark.parametrize("path", FILES, ids=lambda p: _module(p))
def test_modules_stay_small(path):
    assert len(path.read_text().splitlines()) <= 420, _module(path)


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
