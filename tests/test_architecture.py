"""The layout rules of docs/architecture.md, checked on the source tree itself."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "citeaudit"


def _modules() -> dict[str, tuple[Path, list[str]]]:
    """Dotted module name -> (file, the package its relative imports start from)."""
    out = {}
    for f in PACKAGE.rglob("*.py"):
        if "node_modules" in f.parts:
            continue
        parts = list(f.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
            package = parts
        else:
            package = parts[:-1]
        out[".".join(parts)] = (f, package)
    return out


def _ancestors(name: str) -> list[str]:
    """`a.b.c` -> ["a", "a.b"]: the packages whose `__init__` runs before `a.b.c` is imported."""
    parts = name.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts))]


def import_graph() -> dict[str, set[str]]:
    """Every import between citeaudit modules, at module level or inside a function (a lazy import is
    still a dependency). `from pkg import mod` depends on the module, `from pkg import name` on pkg.
    Importing `a.b.c` runs `a/__init__` and `a/b/__init__` first, so it depends on them too, except on
    the importer's own packages, which are already being imported when it runs."""
    modules = _modules()
    graph: dict[str, set[str]] = {}
    for name, (file, package) in modules.items():
        deps: set[str] = set()
        for node in ast.walk(ast.parse(file.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                base = (".".join(package[: len(package) - node.level + 1] + ([node.module] if node.module else []))
                        if node.level else node.module or "")
                for alias in node.names:
                    target = f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base
                    deps.add(target)
            elif isinstance(node, ast.Import):
                deps.update(a.name for a in node.names)
        deps |= {a for d in deps for a in _ancestors(d)}
        own = {name, *_ancestors(name)}
        graph[name] = {d for d in deps if d in modules and d not in own}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_the_cycle_finder_finds_a_cycle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_the_graph_sees_module_level_and_lazy_imports():
    graph = import_graph()
    assert "citeaudit.records" in graph["citeaudit.files.loading"]  # module level
    assert "citeaudit.desk" in graph["citeaudit.cli.desk"]  # inside a function


def test_importing_a_submodule_runs_its_packages_init():
    graph = import_graph()
    assert "citeaudit.metrics" in graph["citeaudit.report.exports"]  # `from .metrics import names` runs metrics/__init__
    assert "citeaudit.judges" in graph["citeaudit.metrics.scoring"]  # `from ..judges.base import` too
    assert "citeaudit.metrics" not in graph["citeaudit.metrics.scoring"]  # its own package is already importing


def test_no_import_cycle_among_citeaudit_modules():
    graph = import_graph()
    found = cycles(graph)
    detail = "\n".join(
        " <-> ".join(c) + "\n" + "\n".join(f"    {m} imports {sorted(graph[m] & set(c))}" for m in c) for c in found)
    assert not found, f"import cycles:\n{detail}"


BOTTOM = ("citeaudit.errors", "citeaudit.text", "citeaudit.iteration", "citeaudit.jsonio", "citeaudit.records",
          "citeaudit.stats", "citeaudit._version", "citeaudit.extras", "citeaudit.budget", "citeaudit.options",
          "citeaudit.llm", "citeaudit.recordstore", "citeaudit.quantities")


def _reaches(graph: dict[str, set[str]], start: str) -> set[str]:
    """Every module `start` imports, directly or through others."""
    seen: set[str] = set()
    todo = [start]
    while todo:
        for d in graph[todo.pop()] - seen:
            seen.add(d)
            todo.append(d)
    return seen


def test_the_bottom_layer_imports_only_the_bottom_layer():
    graph = import_graph()
    for module in BOTTOM:
        above = sorted(d for d in graph[module] if d not in BOTTOM)
        assert not above, f"{module} (bottom layer) imports {above}"


def test_parsing_imports_nothing_of_the_judges():
    """Raw answers are parsed before anything is judged: the claim splitter's HTTP client and its
    recorded splits live below both (llm.py, recordstore.py)."""
    graph = import_graph()
    parse = [m for m in graph if m == "citeaudit.parse" or m.startswith("citeaudit.parse.")]
    assert "citeaudit.parse.lm_decompose" in parse
    for module in parse:
        judges = sorted(d for d in _reaches(graph, module) if d == "citeaudit.judges" or d.startswith("citeaudit.judges."))
        assert not judges, f"{module} imports {judges}"


# The flow, in import order: a package imports the ground (citeaudit's top-level modules) and the packages
# before it, never one after it. `files/` comes after `parse/`: reading a case file resolves it.
FLOW = ("parse", "files", "judges", "metrics", "run", "report", "training", "examples", "desk", "testing", "integrations", "cli")


def _place(module: str) -> int | None:
    """A module's place in the flow: -1 for the ground, None for the package root (the public API) and
    `citeaudit.__main__` (`python -m citeaudit`, the command line's entry point)."""
    parts = module.split(".")
    if len(parts) == 1 or parts[1] == "__main__":
        return None
    return FLOW.index(parts[1]) if parts[1] in FLOW else -1


def against_the_flow(graph: dict[str, set[str]]) -> list[tuple[str, str]]:
    return sorted((a, b) for a, deps in graph.items() for b in deps
                  if _place(a) is not None and _place(b) is not None and _place(b) > _place(a))


def test_every_package_is_in_the_flow():
    assert {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").exists()} == set(FLOW)


def test_the_flow_check_finds_an_import_against_it():
    graph = {"citeaudit.run.log": {"citeaudit.report.render", "citeaudit.metrics", "citeaudit.records", "citeaudit"},
             "citeaudit": {"citeaudit.cli"}}
    assert against_the_flow(graph) == [("citeaudit.run.log", "citeaudit.report.render")]


def test_a_package_imports_only_the_ground_and_the_packages_before_it():
    against = against_the_flow(import_graph())
    assert not against, "imports against the flow:\n" + "\n".join(f"    {a} imports {b}" for a, b in against)


def test_the_reach_finder_follows_imports_through_other_modules():
    assert _reaches({"a": {"b"}, "b": {"c"}, "c": set()}, "a") == {"b", "c"}


def _exception_classes() -> list[tuple[str, str]]:
    out = []
    for name, (file, _) in _modules().items():
        for node in ast.walk(ast.parse(file.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef):
                bases = {b.id if isinstance(b, ast.Name) else getattr(b, "attr", "") for b in node.bases}
                if any(b.endswith(("Error", "Exception")) or b in {"UnlabelledPair", "MissingJudgment"} for b in bases):
                    out.append((name, node.name))
    return out


def test_every_exception_class_lives_in_errors_py():
    outside = [(m, c) for m, c in _exception_classes() if m != "citeaudit.errors"]
    assert not outside, f"exception classes outside citeaudit/errors.py: {outside}"


def test_every_user_error_derives_from_the_tree():
    import citeaudit.errors as errors

    classes = [getattr(errors, c) for m, c in _exception_classes() if m == "citeaudit.errors"]
    assert len(classes) >= 10
    for cls in classes:
        assert issubclass(cls, errors.CiteauditError), cls
        assert cls is errors.CiteauditError or cls.exit_code in (2, 3), cls


def _error_aliases(source: str, error_names: set[str]) -> list[str]:
    """Names bound to an error class by assignment (`X = SomeError`, `X = errors.SomeError`) or by an
    import under another name (`from citeaudit.errors import SomeError as X`)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
            value = node.value
            name = value.id if isinstance(value, ast.Name) else value.attr if isinstance(value, ast.Attribute) else None
            if name in error_names:
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                found += [f"{ast.unparse(t)} = {name}" for t in targets]
        elif isinstance(node, ast.ImportFrom):
            found += [f"{a.name} as {a.asname}" for a in node.names
                      if a.name in error_names and a.asname and a.asname != a.name]
    return found


def test_no_error_class_aliases():
    """One name for each error class: an alias lets two names drift apart in messages and `except`s."""
    error_names = {c for m, c in _exception_classes() if m == "citeaudit.errors"}
    assert {"CiteauditError", "MissingExtra"} <= error_names
    aliases = {str(file): found for file, _ in _modules().values()
               if (found := _error_aliases(file.read_text(encoding="utf-8"), error_names))}
    assert not aliases, f"aliases of error classes: {aliases}"


def test_the_alias_check_sees_each_way_of_making_one():
    names = {"MissingExtra", "TrainingError"}
    source = ("from citeaudit.errors import MissingExtra as NeedsExtra\n"
              "import citeaudit.errors as errors\n"
              "ModelSetupError = errors.TrainingError\n"
              "Other: type = MissingExtra\n"
              "from citeaudit.errors import TrainingError\n")
    assert _error_aliases(source, names) == ["MissingExtra as NeedsExtra", "ModelSetupError = TrainingError",
                                             "Other = MissingExtra"]
