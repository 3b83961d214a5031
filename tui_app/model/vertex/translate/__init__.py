"""ml v1 training jobs as Vertex AI custom jobs, and Vertex AI jobs as ml v1 jobs (no I/O).

A ``vertex`` profile runs the configs people already have (ml v1 ``Job`` with ``trainingInput``)
on Vertex AI, and shows what Vertex AI returns in the views built for ml v1 jobs. So the
translation goes both ways, one module each: ``ml_to_vertex`` (``to_vertex``, ``vertex_notes``,
``executor_image``) and ``vertex_to_ml`` (``from_vertex``, ``ml_state``, ``resource_id``). A job
that went out comes back as a config that translates to the same request (resubmit,
edit-and-resubmit), so the second undoes every choice the first makes.

Callers import from here; the split is this package's business.
"""

from tui_app.model.jobs.vertex_resources import CUSTOM_JOBS, TUNING_JOBS, VERTEX_FIELD
from tui_app.model.vertex.translate.ml_to_vertex import (
    TranslationError,
    VertexRequest,
    executor_image,
    to_vertex,
    vertex_notes,
)
from tui_app.model.vertex.translate.vertex_to_ml import from_vertex, ml_state, resource_id

__all__ = [
    "CUSTOM_JOBS",
    "TUNING_JOBS",
    "VERTEX_FIELD",
    "TranslationError",
    "VertexRequest",
    "executor_image",
    "from_vertex",
    "ml_state",
    "resource_id",
    "to_vertex",
    "vertex_notes",
]
