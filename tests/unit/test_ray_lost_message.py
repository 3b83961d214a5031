"""docs/ray.md quotes the errorMessage of a job whose Ray replica was lost: the quotes must be
what the service writes (issue: the page quoted a message the app no longer printed).

The runner writes ``The replica <task> was lost: <reason>.``; the reason is
``ray_executor.lost_reason`` (an actor whose wait raised) or ``_Gone.lost`` (an actor a restarted
service no longer finds). tests/service/test_ray_executor.py checks a real node's death against
the same quotes.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Final

from tui_app.local.execution.ray_executor import _Gone, lost_reason

DOCS_RAY: Final = Path(__file__).resolve().parents[2] / "docs" / "ray.md"
DOC_TASK: Final = "worker-replica-0"
DOC_NODE: Final = {
    "address": "127.0.0.3",
    "id": "2ae69e1b5c0d44f1a8e3b7c9d0e1f2a3b4c5d6e7f8a9b0c1d2e3f4a5",
}
"""The replica and node the quotes name (Ray ids are 56 hex digits; messages show 12)."""


def doc_lost_quotes() -> list[str]:
    """The messages of a lost replica that docs/ray.md quotes (in backticks), in its order.
    A quote wrapped over two lines of the page is not one: keep each on one line."""
    return re.findall(r"`(The replica \S+ was lost: [^`\n]+)`", DOCS_RAY.read_text())


def runner_message(reason: str) -> str:
    """The runner's errorMessage for a lost replica (``runner._watch``)."""
    return f"The replica {DOC_TASK} was lost: {reason}."


def what_the_code_says() -> list[str]:
    """Every lost-replica message for the quotes' node: each branch of ``lost_reason``, then
    the restarted service's."""
    node = dict(DOC_NODE)
    other = "ffffffffffff" + DOC_NODE["id"][12:]
    return [
        runner_message(lost_reason(node, {other, node["id"]}, "ActorUnavailableError")),
        runner_message(lost_reason(node, {other}, "ActorDiedError")),
        runner_message(lost_reason(node, {other, node["id"]}, "ActorDiedError")),
        runner_message(str(_Gone(f"svc/p/job/-/{DOC_TASK}", node).lost)),
    ]


def test_the_docs_quote_every_lost_replica_message_as_the_service_writes_it() -> None:
    quotes = doc_lost_quotes()
    assert quotes, "docs/ray.md quotes no lost replica's message"
    assert quotes == what_the_code_says()


def test_a_node_that_stopped_answering_or_left_is_named_with_its_address_and_id() -> None:
    node = dict(DOC_NODE)
    answering = lost_reason(node, {node["id"]}, "ActorUnavailableError")
    assert answering == "its node 127.0.0.3 (Ray node 2ae69e1b5c0d) stopped answering"
    # Declared dead: whatever the actor raised, the node left.
    assert lost_reason(node, set(), "ActorUnavailableError").endswith("left the Ray cluster")
