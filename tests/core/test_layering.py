"""The library's layers: core <- domain packages <- config, workflow and cli; no cycles.

Imports are read with ``ast`` from every module under ``src/xlalign``, at module level and
inside functions alike (``import xlalign.x``, ``from xlalign.x import y``, ``from xlalign
import x`` and relative imports), and folded into a graph of packages (the first name
after ``xlalign.``).
"""

from __future__ import annotations

import ast
import itertools
import json
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "src" / "xlalign"

CORE = "core"
#: The application layer: it may import every package, none of the others imports it.
APPLICATION = ("config", "workflow", "cli")
#: What config may import besides xlalign.core: plain data on the standard library alone.
CONFIG_DATA = (
    "xlalign.mapping.recipes",
    "xlalign.resources.catalog",
    "xlalign.evaluation.tasks.registry",
    "xlalign.evaluation.tasks.base",
    "xlalign.pretrain.recipes",
)
#: Package __init__ modules that hold more than their docstring, and why.
INIT_WITH_CODE = {
    "xlalign": "__version__",
    "xlalign.config": "re-exports the validated config's API",
    "xlalign.cli": "assembles the parser and main (the console script xlalign.cli:main)",
}
HEAVY = ("torch", "transformers", "numpy", "pandas", "tqdm")

Edges = dict[str, dict[str, list[str]]]


def module_name(path: Path) -> str:
    parts = ("xlalign", *path.relative_to(SRC).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def package_of(module: str) -> str:
    """``xlalign.a.b`` -> ``a``; ``xlalign`` itself -> ``""``."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def imported_modules(path: Path) -> list[tuple[str, int]]:
    """Every name ``path`` imports (absolute: ``a.b`` for ``from a import b``), with the
    line of the import."""
    module = module_name(path)
    is_package = path.name == "__init__.py"
    out: list[tuple[str, int]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            out += [(alias.name, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = module.split(".")
                base = parts if is_package else parts[:-1]
                base = base[: len(base) - (node.level - 1)]
                name = ".".join(base + ([node.module] if node.module else []))
            else:
                name = node.module or ""
            # `from package import module` names a module as well as attributes.
            out.append((name, node.lineno))
            out += [(f"{name}.{alias.name}", node.lineno) for alias in node.names]
    return out


def imported_xlalign_modules(path: Path, modules: dict[str, Path]) -> list[tuple[str, int]]:
    """The xlalign modules ``path`` imports, each once per line (``from xlalign.x import
    y`` names ``xlalign.x.y`` when that is a module, else ``xlalign.x``)."""
    out: dict[tuple[str, int], None] = {}
    for name, line in imported_modules(path):
        if not name.startswith("xlalign."):
            continue
        if name not in modules and name.rsplit(".", 1)[0] in modules:
            name = name.rsplit(".", 1)[0]
        out[name, line] = None
    return list(out)


def xlalign_modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(SRC.rglob("*.py"))}


def package_graph() -> Edges:
    """package -> imported package -> ["module:line imports name", ...]."""
    modules = xlalign_modules()
    edges: Edges = defaultdict(lambda: defaultdict(list))
    for module, path in modules.items():
        for name, line in imported_xlalign_modules(path, modules):
            src, dst = package_of(module), package_of(name)
            if src and dst and src != dst:
                edges[src][dst].append(f"{module}:{line} imports {name}")
    return edges


def find_cycle(edges: Edges) -> list[str] | None:
    """A cycle of packages (first package repeated at the end), or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(edges.get(node, {})):
            if state.get(nxt) == 1:
                return [*path[path.index(nxt) :], nxt]
            if nxt not in state and (cycle := visit(nxt)):
                return cycle
        path.pop()
        state[node] = 2
        return None

    for node in sorted(edges):
        if node not in state and (cycle := visit(node)):
            return cycle
    return None


@pytest.fixture(scope="module")
def graph() -> Edges:
    return package_graph()


def _why(edges: Edges, src: str, dsts: list[str]) -> str:
    return "; ".join(f"{src} -> {d}: {', '.join(edges[src][d][:3])}" for d in dsts)


def test_the_walk_sees_every_kind_of_import(graph: Edges) -> None:
    # Guards against a walk that silently finds nothing: known edges of this layout.
    assert "static" in graph["cli"]  # function-level: from xlalign.static.x2static import ...
    assert "core" in graph["static"] and "core" in graph["config"]  # module level


def test_no_cycle_between_packages(graph: Edges) -> None:
    cycle = find_cycle(graph)
    if cycle:
        steps = [f"{a} -> {b} ({graph[a][b][0]})" for a, b in itertools.pairwise(cycle)]
        pytest.fail("import cycle between packages: " + " | ".join(steps))


def test_find_cycle_reports_the_path() -> None:
    edges: Edges = {"a": {"b": ["x"]}, "b": {"c": ["y"]}, "c": {"a": ["z"]}}
    assert find_cycle(edges) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b": ["x"]}, "b": {}}) is None


def test_core_imports_no_other_package(graph: Edges) -> None:
    others = sorted(graph.get(CORE, {}))
    assert not others, _why(graph, CORE, others)


def test_domain_packages_import_no_application_package(graph: Edges) -> None:
    bad = {
        src: sorted(d for d in dsts if d in APPLICATION)
        for src, dsts in graph.items()
        if src not in APPLICATION
    }
    bad = {src: dsts for src, dsts in bad.items() if dsts}
    assert not bad, "; ".join(_why(graph, src, dsts) for src, dsts in bad.items())


def test_config_imports_only_core_and_plain_data() -> None:
    modules = xlalign_modules()
    bad = [
        f"{module}:{line} imports {name}"
        for module, path in modules.items()
        if package_of(module) == "config"
        for name, line in imported_xlalign_modules(path, modules)
        if package_of(name) not in ("config", CORE) and name not in CONFIG_DATA
    ]
    assert not bad, bad


@pytest.mark.parametrize("data_module", CONFIG_DATA)
def test_config_data_modules_use_the_standard_library_only(data_module: str) -> None:
    path = xlalign_modules()[data_module]
    allowed = set(sys.stdlib_module_names) | {"__future__"}
    bad = [
        f"{data_module}:{line} imports {name}"
        for name, line in imported_modules(path)
        if name.split(".")[0] not in allowed
        and not name.startswith("xlalign.core.errors")
        and name != "xlalign.core"
    ]
    assert not bad, bad


def test_package_inits_hold_only_their_docstring() -> None:
    for path in sorted(SRC.rglob("__init__.py")):
        module = module_name(path)
        body = ast.parse(path.read_text(encoding="utf-8")).body
        docstring_only = (
            len(body) == 1
            and isinstance(body[0], ast.Expr)
            and isinstance(body[0].value, ast.Constant)
            and isinstance(body[0].value.value, str)
        )
        assert docstring_only or module in INIT_WITH_CODE, f"{path}: more than a docstring"


def test_loading_the_configs_imports_nothing_heavy() -> None:
    code = f"""
import json, sys
import xlalign.config
for path in ("config/config.yaml", "config/paper.yaml"):
    xlalign.config.load(path)
print(json.dumps({{
    "heavy": [m for m in {HEAVY!r} if m in sys.modules],
    "xlalign": sorted(m for m in sys.modules if m.startswith("xlalign")),
}}))
"""
    r = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert r.returncode == 0, r.stderr
    loaded = json.loads(r.stdout.strip().splitlines()[-1])
    assert loaded["heavy"] == []
    packages = {m.rsplit(".", 1)[0] for m in CONFIG_DATA}
    packages |= {p.rsplit(".", 1)[0] for p in packages if p.count(".") > 1}
    allowed = {"xlalign", *packages, *CONFIG_DATA}
    extra = [
        m for m in loaded["xlalign"] if m not in allowed and package_of(m) not in ("config", CORE)
    ]
    assert not extra, f"loading a config imported {extra}"
