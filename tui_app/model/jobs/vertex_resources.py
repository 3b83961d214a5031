"""Names every layer uses for Vertex AI jobs shown as ml v1 jobs.

They sit with the job, apart from ``model.vertex.translate``, so that readers of the block
``from_vertex`` adds (describe, the log stream) name it from one place without loading the
translation or reaching up into the vertex room.
"""

from __future__ import annotations

from typing import Final

CUSTOM_JOBS: Final = "customJobs"
TUNING_JOBS: Final = "hyperparameterTuningJobs"
VERTEX_FIELD: Final = "vertexJob"
"""The key ``from_vertex`` adds to the ml v1 Job: the Vertex AI resource's name, id and state."""
