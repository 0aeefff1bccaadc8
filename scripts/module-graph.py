#!/usr/bin/env python3
"""Draws the dependency graph of a crate's top-level modules (SRC/*.rs and
SRC/*/, SRC the crate's source folder, crates/gcsim/src by default) as
Graphviz DOT on stdout, from the `crate::module` paths in their code
(comments left out), and lists any circle on stderr; exits 1 if there is one.

    scripts/module-graph.py [SRC] > modules.dot && dot -Tsvg modules.dot > modules.svg
"""
import collections
import os
import re
import sys

here = os.path.dirname(os.path.abspath(__file__))
root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "..", "crates", "gcsim", "src")
modules = set()
for name in os.listdir(root):
    path = os.path.join(root, name)
    if name.endswith(".rs") and name not in ("lib.rs", "main.rs"):
        modules.add(name[:-3])
    elif os.path.isdir(path):
        modules.add(name)

graph = collections.defaultdict(set)
for directory, _, files in os.walk(root):
    for name in files:
        if not name.endswith(".rs"):
            continue
        path = os.path.join(directory, name)
        top = os.path.relpath(path, root).split(os.sep)[0].removesuffix(".rs")
        if top not in modules:
            continue
        code = "\n".join(line.split("//")[0] for line in open(path, encoding="utf-8"))
        for used in re.findall(r"crate::(\w+)", code):
            if used in modules and used != top:
                graph[top].add(used)

index, low, stack, on_stack, circles = {}, {}, [], set(), []


def visit(v):
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
            circles.append(sorted(component))


for v in sorted(modules):
    if v not in index:
        visit(v)

print("digraph modules {")
for v in sorted(modules):
    for w in sorted(graph[v]):
        print(f'  "{v}" -> "{w}";')
print("}")
for c in circles:
    print("circle: " + " <-> ".join(c), file=sys.stderr)
sys.exit(1 if circles else 0)
