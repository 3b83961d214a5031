"""Every README heading the product's text sends a user to exists in README.md.

The service's ``--executor`` help and its error on a cluster it cannot join both said "README:
Running replicas on a Ray cluster", a heading README never had (it is "Replicas on a Ray
cluster"). A user who searches README for what an error names must find it: so every
``README: <heading>`` and ``README.md#<anchor>`` in the product's strings (the text it prints,
found through the syntax tree, so a message split over several literals is read whole) and
every link from docs/ into README must name a heading README has. Another engineer renaming a
heading then learns which messages still name the old one.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Final

ROOT: Final = Path(__file__).resolve().parents[2]
README: Final = ROOT / "README.md"
PRODUCT: Final = ("tui_app", "widgets", "themes")

CITED_HEADING: Final = re.compile(r"README: (?P<heading>[^);\n`]+?)\s*(?:[);\n]|\.(?:\s|$)|$)")
"""``(README: Replicas on a Ray cluster)``: the heading, up to the closing bracket, a
semicolon, a full stop that ends a sentence, or the end of the text."""
ANCHOR: Final = re.compile(r"README(?:\.md)?#(?P<anchor>[\w-]+)")
QUOTED_HEADING: Final = re.compile(r"README's \"(?P<heading>[^\"]+)\"")
"""``README's "Replicas on a Ray cluster" says ...`` in the docs."""


@cache
def headings() -> frozenset[str]:
    """README's headings, outside its code blocks (a ``# comment`` in one is none)."""
    found = set()
    fenced = False
    for line in README.read_text().splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and (m := re.match(r"#{1,6} (.+)", line)):
            found.add(m.group(1).strip())
    return frozenset(found)


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation but ``-`` and ``_`` dropped,
    spaces to hyphens."""
    kept = "".join(c for c in heading.lower() if c.isalnum() or c in " -_")
    return kept.replace(" ", "-")


def product_strings() -> Iterator[tuple[Path, str]]:
    """Each string literal of the product's modules (docstrings included), implicit
    concatenations whole; an f-string's literal parts joined."""
    seen: set[Path] = set()
    for top in PRODUCT:
        for path in sorted((ROOT / top).rglob("*.py")):
            if path.resolve() in seen:
                continue
            seen.add(path.resolve())
            for node in ast.walk(ast.parse(path.read_text(), str(path))):
                if isinstance(node, ast.Constant) and isinstance(node.value, str):
                    yield path, node.value
                elif isinstance(node, ast.JoinedStr):
                    parts = [v.value for v in node.values if isinstance(v, ast.Constant)]
                    yield path, "".join(str(p) for p in parts)


def cited() -> list[tuple[str, str, str]]:
    """(where, what kind, what) for every README heading or anchor cited."""
    out = []
    for path, text in product_strings():
        where = str(path.relative_to(ROOT))
        out += [(where, "heading", m["heading"]) for m in CITED_HEADING.finditer(text)]
        out += [(where, "anchor", m["anchor"]) for m in ANCHOR.finditer(text)]
    for doc in sorted((ROOT / "docs").glob("*.md")):
        text = doc.read_text()
        where = str(doc.relative_to(ROOT))
        out += [(where, "anchor", m["anchor"]) for m in ANCHOR.finditer(text)]
        out += [(where, "heading", m["heading"]) for m in QUOTED_HEADING.finditer(text)]
    return [(where, kind, " ".join(what.split())) for where, kind, what in out]  # wrapped lines


def test_every_readme_heading_the_product_and_docs_cite_exists() -> None:
    found = cited()
    # The references this test was written for: a scan that finds none checks nothing.
    # The service's --executor help is composed from the executors' registry.
    assert ("tui_app/config/executors.py", "heading", "Replicas on a Ray cluster") in found
    assert ("tui_app/local/execution/ray_executor.py", "heading", "Replicas on a Ray cluster") in (
        found
    )
    anchors = {slug(h) for h in headings()}
    wrong = [
        (where, kind, what)
        for where, kind, what in found
        if (what not in headings() if kind == "heading" else what not in anchors)
    ]
    assert wrong == [], f"README.md has no such heading or anchor: {wrong}"


def test_the_anchor_rule_matches_githubs() -> None:
    assert slug("Vertex AI: the cloud backend") == "vertex-ai-the-cloud-backend"
    assert slug("Ray's own ports are open to the network") == (
        "rays-own-ports-are-open-to-the-network"
    )
    cited = CITED_HEADING.search("(README: Replicas on a Ray cluster) or pass")
    assert cited is not None and cited["heading"] == "Replicas on a Ray cluster"
