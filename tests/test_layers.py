"""The import graph of src/: layers only import downwards, there is no cycle, and agents reach a
concrete backend only through the factory. The graph comes from an ast walk (no import runs)."""

from __future__ import annotations

import ast
from functools import lru_cache
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"
PKG = "speechannotator"

# Low to high. A module may import its own layer and the layers below it. Entries are module
# names or package prefixes below "speechannotator"; "" is the package itself (the public API).
LAYERS: list[tuple[str, ...]] = [
    # data types, vocabularies, thresholds; what is printed; the one atomic file write; giving
    # freed heap pages back to the system between stages; torch's thread count around a forward pass
    ("records", "schema", "calibration", "terminal", "atomic", "heap", "torch_threads"),
    ("config", "audio", "assets", "timelines"),  # settings; stage 1 (load); shipped model files; timeline files
    ("state", "llm_client", "corrections", "locks"),  # the shared state; the one chat client;
    # human corrections in force; one writer per recording
    ("stages",),  # stage names and the context a stage function receives
    ("enhance",),  # stage 2
    ("frontend", "priors"),  # stages 3-6; stage 7
    ("servers",),  # local OpenAI-compatible model servers (llama.cpp, Whisper) the agents may start
    ("agents",),  # stages 8-10 and their backends
    ("output",),  # stages 11-12
    ("pipeline", "corpus"),  # the stage table and driver; corpus input
    # corpus engines (local, Ray) over the driver; exports of an annotated corpus; the corpus report;
    # the corpus voice registry and its corrections, a corpus step over the annotated outputs
    ("engine", "export", "report", "corpus.speakers", "corpus.voice_edits", "corpus.voices_cli"),
    ("",),  # the public API (speechannotator/__init__.py)
    ("evaluation", "viewer"),  # SA-Eval and the bench runner, which drives the public API; the review page
    ("cli",),
]
# Agents receive a backend; only the factory (speechannotator.agents) names a concrete one.
BACKENDS = ("agents.rules", "agents.openai")
BACKEND_FACTORY = "agents"


def _modules() -> dict[str, Path]:
    out = {}
    for p in (SRC / PKG).rglob("*.py"):
        parts = list(p.relative_to(SRC / PKG).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = p
    return out


def _type_checking_nodes(tree: ast.AST) -> set[int]:
    """Imports under ``if TYPE_CHECKING:`` are annotations only: no runtime dependency."""
    skip: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skip.update(id(n) for n in ast.walk(node))
    return skip


def _targets(name: str, node: ast.Import | ast.ImportFrom, is_package: bool, modules: dict[str, Path]) -> list[str]:
    """Module names (relative to the package, "" for the package itself) an import statement loads."""
    if isinstance(node, ast.Import):
        wanted = [a.name for a in node.names]
    else:
        if node.level:
            here = name.split(".") if name else []
            base = here if is_package else here[:-1]
            base = base[: len(base) - (node.level - 1)]
            prefix = ".".join(base + ([node.module] if node.module else []))
            prefix = f"{PKG}.{prefix}" if prefix else PKG
        else:
            prefix = node.module or ""
        subs = [f"{prefix}.{a.name}" for a in node.names]
        # `from pkg import submodule` loads the submodule; `from pkg import attribute` the package.
        wanted = [s for s in subs if s.removeprefix(f"{PKG}.") in modules]
        if len(wanted) < len(subs):
            wanted.append(prefix)
    out = []
    for w in wanted:
        if w != PKG and not w.startswith(PKG + "."):
            continue  # a third-party or standard-library module
        rel = w.removeprefix(PKG).removeprefix(".")
        while rel and rel not in modules:
            rel = rel.rpartition(".")[0]
        out.append(rel)
    return out


@lru_cache(maxsize=1)
def _graph() -> dict[str, set[str]]:
    modules = _modules()
    graph: dict[str, set[str]] = {m: set() for m in modules}
    for name, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        skip = _type_checking_nodes(tree)
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)) and id(node) not in skip:
                graph[name].update(t for t in _targets(name, node, path.name == "__init__.py", modules) if t != name)
    return graph


def _layer(module: str) -> int:
    best = None
    for i, entries in enumerate(LAYERS):
        for e in entries:
            inside = module == e or (e and module.startswith(e + "."))
            if inside and (best is None or len(e) > best[1]):
                best = (i, len(e))
    assert best is not None, f"speechannotator.{module} is in no layer: add it to LAYERS"
    return best[0]


def test_no_module_imports_a_higher_layer():
    upward = [f"{a or PKG} -> {b or PKG}" for a, targets in _graph().items() for b in targets if _layer(b) > _layer(a)]
    assert upward == []


def test_annotation_only_imports_do_not_point_up_either():
    # An import under TYPE_CHECKING runs nowhere, but a type named from a higher layer is still a
    # dependency running up the house: a lower layer states what it needs as a protocol.
    modules, upward = _modules(), []
    for name, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        guarded = [n for n in ast.walk(tree) if isinstance(n, ast.If) and "TYPE_CHECKING" in ast.unparse(n.test)]
        for node in (n for g in guarded for n in ast.walk(g) if isinstance(n, (ast.Import, ast.ImportFrom))):
            targets = _targets(name, node, path.name == "__init__.py", modules)
            upward += [f"{name or PKG} -> {t or PKG}" for t in targets if t != name and _layer(t) > _layer(name)]
    assert upward == []


def test_the_import_graph_has_no_cycle():
    graph, state, cycles = _graph(), {}, []

    def visit(node: str, path: list[str]) -> None:
        state[node] = "open"
        for nxt in sorted(graph[node]):
            if state.get(nxt) == "open":
                cycles.append(" -> ".join(path[path.index(nxt) :] + [nxt]))
            elif nxt not in state:
                visit(nxt, path + [nxt])
        state[node] = "done"

    for start in sorted(graph):
        if start not in state:
            visit(start, [start])
    assert cycles == []


def test_only_the_factory_names_a_concrete_backend():
    def inside(module: str, pkg: str) -> bool:
        return module == pkg or module.startswith(pkg + ".")

    crossing = [
        f"{a} -> {b}"
        for a, targets in _graph().items()
        for b in targets
        for pkg in BACKENDS
        if inside(b, pkg) and not inside(a, pkg) and a != BACKEND_FACTORY
    ]
    assert crossing == []


def test_the_walk_sees_real_edges():
    # Guards the tests above against passing on an empty or misread graph.
    graph = _graph()
    assert "state" in graph["pipeline"] and "agents.backend" in graph["agents.labeling"]
    assert "agents.rules" in graph["agents"] and "llm_client" in graph["frontend.refine_llm"]
    assert _layer("agents.rules.label") == _layer("agents") > _layer("state")
