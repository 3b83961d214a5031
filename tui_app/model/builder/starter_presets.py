"""The builder's built-in presets: one per scale tier, a small CUSTOM cluster and a tuning job.

Every one is read from the tier table (``tiers.py``): a tier added there gets its starter, and
the CUSTOM cluster takes its machine types from a tier's groups rather than naming any. They
are the same mapping a saved preset holds (``tui_app.config.presets``: the job without its id,
a base name, a package folder), so the builder applies both one way; they hold no region, which
is the user's and stays as the form has it.

Each runs the sample trainer (examples/trainer) as given: a newcomer's first submit should
work, not stop at "packageUris is required". The module is here (``SAMPLE_TRAINER_MODULE``);
the package folder is a path this module cannot know, so the builder fills it in
(``config.presets.sample_trainer_dir``) and, where the install has none, shows ``CODE_NOTE``,
which says what to fill. A form that names its own package keeps its code. The tuning starter
minimises ``training/hptuning/metric``, which the sample trainer reports as its held-out mean
squared error: maximising a loss would rank the worst learning rate best.

Built-ins are read-only. A preset the user saved under the same name is listed instead of the
built-in (``preset_choices``): saving one is a deliberate choice, typically a starter with the
user's own bucket and module filled in, and two entries of one name would make "load BASIC"
and "delete BASIC" ambiguous. Deleting the user's brings the built-in back, so nothing is lost.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from tui_app.model.builder.tier_summary import summarize_cluster
from tui_app.model.jobs.job_spec import DEFAULT_METRIC_TAG
from tui_app.model.jobs.roles import ROLE_FIELDS
from tui_app.model.jobs.tiers import DEFAULT_SCALE_TIER, SCALE_TIERS, Role

CUSTOM_MACHINES_FROM = "STANDARD_1"
"""The tier whose machine type for each role the CUSTOM starter uses: its cluster, smaller."""
CUSTOM_COUNTS: dict[Role, int] = {Role.MASTER: 1, Role.WORKER: 2, Role.PARAMETER_SERVER: 1}
"""The CUSTOM starter's replicas by role: the smallest cluster that has every kind."""
SAMPLE_TRAINER_MODULE = "trainer.task"
"""The sample trainer's module (examples/trainer/trainer/task.py), which every starter runs."""
CODE_NOTE = (
    "Package dir: the folder holding your trainer's setup.py (tui-app's sample trainer is "
    "examples/trainer in a checkout of tui-app); Module: the module it runs (trainer.task "
    "for the sample trainer)"
)
"""What to fill when the builder cannot find the sample trainer (an incomplete install)."""
TUNING_GOAL = "MINIMIZE"
"""The sample trainer reports a loss (held-out MSE) as ``training/hptuning/metric``: lower is
better."""
TUNING_NAME = "tuning"
TUNING_TRIALS = 4
TUNING_PARALLEL = 2

_ROLE_NAMES: dict[str, tuple[str, str]] = {
    "master": ("master", "masters"),
    "workers": ("worker", "workers"),
    "param servers": ("parameter server", "parameter servers"),
    "evaluators": ("evaluator", "evaluators"),
    "TPU worker": ("Cloud TPU", "Cloud TPUs"),
}
"""The tier summary's row labels (``tier_summary.ROLE_LABELS``) as a starter's line says them."""


@dataclass(frozen=True)
class StarterPreset:
    """One built-in preset: its name, one line saying what it runs, and the preset itself."""

    name: str
    summary: str
    data: dict[str, Any]
    """``{"base_name": None, "package_path": None, "job": {...}}``, as a saved preset; no base
    name, so the form keeps its own; no package folder, which the builder fills in."""
    code_note: str = CODE_NOTE
    """What to fill in for the code when the sample trainer's folder is not found."""


def describe(training_input: dict[str, Any]) -> str:
    """``one machine: 4 vCPU, 15 GB`` or ``master + 4 workers + 3 parameter servers``: what a
    newcomer choosing a start needs; the tier panel names the machine types once it is loaded."""
    cluster = summarize_cluster(training_input)
    if len(cluster.rows) == 1 and cluster.replicas == 1:
        row = cluster.rows[0]
        parts = [f"{row.vcpus} vCPU", f"{row.memory_gb:g} GB"]
        if row.gpus:
            parts.append(f"{row.gpus} {row.accelerator} GPU{'s' if row.gpus > 1 else ''}")
        return "one machine: " + ", ".join(parts)
    groups = []
    for row in cluster.rows:
        one, many = _ROLE_NAMES.get(row.role, (row.role, row.role))
        groups.append(
            one if row.role == "master" else f"{row.count} {one if row.count == 1 else many}"
        )
    return " + ".join(groups)


def _preset(training_input: dict[str, Any]) -> dict[str, Any]:
    """The saved-preset mapping of a starter: ``training_input`` running the sample trainer."""
    ti = {**training_input, "pythonModule": SAMPLE_TRAINER_MODULE}
    return {"base_name": None, "package_path": None, "job": {"trainingInput": ti}}


def _custom() -> dict[str, Any]:
    machines = {g.role: g.machine_type for g in SCALE_TIERS[CUSTOM_MACHINES_FROM].groups}
    ti: dict[str, Any] = {"scaleTier": "CUSTOM"}
    for fields in ROLE_FIELDS:
        count = CUSTOM_COUNTS.get(fields.role, 0)
        if not count:
            continue
        ti[fields.type_field] = machines[fields.role]
        if fields.count_field:
            ti[fields.count_field] = str(count)  # int64 counts are strings on the wire
    return ti


def _tuning() -> dict[str, Any]:
    return {
        "scaleTier": DEFAULT_SCALE_TIER,
        "hyperparameters": {
            "goal": TUNING_GOAL,
            "hyperparameterMetricTag": DEFAULT_METRIC_TAG,
            "maxTrials": TUNING_TRIALS,
            "maxParallelTrials": TUNING_PARALLEL,
            "params": [
                {
                    "parameterName": "learning_rate",
                    "type": "DOUBLE",
                    "minValue": 0.0001,
                    "maxValue": 0.1,
                    "scaleType": "UNIT_LOG_SCALE",
                }
            ],
        },
    }


def _starters() -> dict[str, StarterPreset]:
    found: dict[str, StarterPreset] = {}
    for name in SCALE_TIERS:
        ti = _custom() if name == "CUSTOM" else {"scaleTier": name}
        found[name] = StarterPreset(name, describe(ti), _preset(ti))
    tuning = _tuning()
    found[TUNING_NAME] = StarterPreset(
        TUNING_NAME,
        f"one machine, {TUNING_TRIALS} trials tuning learning_rate",
        _preset(tuning),
    )
    return found


STARTER_PRESETS: dict[str, StarterPreset] = _starters()
"""The built-ins by name, in the tier table's order, then the tuning starter."""


def preset_choices(saved: Iterable[str]) -> list[tuple[str, StarterPreset | None]]:
    """What the presets dialog lists: the user's saved presets (None), then every built-in no
    saved preset of the same name replaces."""
    names = list(saved)
    taken = set(names)
    return [(n, None) for n in names] + [
        (n, s) for n, s in STARTER_PRESETS.items() if n not in taken
    ]
