"""The config corpus (``examples/configs``) and ``valid_jobs``, the strategy for "any valid job".

Shared by the round-trip, gcloud-command, service and real-gcloud tests, so each draws the same
jobs and reads the corpus the same way.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from tui_app.model.jobs.job_config import from_config_yaml
from tui_app.model.jobs.job_spec import RUNTIME_PYTHON
from tui_app.model.jobs.tiers import ACCELERATORS, MACHINE_TYPES, SCALE_TIERS

CONFIGS = Path(__file__).resolve().parents[2] / "examples" / "configs"
VALID = sorted((CONFIGS / "valid").glob("*.yaml"))
INVALID = sorted((CONFIGS / "invalid").glob("*.yaml"))
EXPECT = re.compile(r"^# expect: (\S+)\n")
CORPUS_JOB_ID = "corpus_job"
"""The id a corpus file without ``jobId`` is loaded under, as gcloud's JOB argument gives it."""

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def load_corpus_file(path: Path, job_id: str | None = None) -> dict[str, Any]:
    """A corpus config as ``from_config_yaml`` reads it; files without ``jobId`` get one."""
    text = path.read_text()
    if job_id is None and "jobId" not in (yaml.safe_load(text) or {}):
        job_id = CORPUS_JOB_ID
    return from_config_yaml(text, job_id=job_id)


def expected_field(path: Path) -> str:
    """The field path an invalid corpus file's first line says the loader must report."""
    m = EXPECT.match(path.read_text())
    assert m, f"{path.name} must start with '# expect: <field path>'"
    return m.group(1)


# -- strategies: valid jobs --------------------------------------------------------------------

LEGACY = [m for m in MACHINE_TYPES.values() if m.legacy and not m.is_tpu]
COMPUTE_ENGINE = [m for m in MACHINE_TYPES.values() if not m.legacy]
GPUS = [a for a in ACCELERATORS.values() if not a.is_tpu]
TPUS = [a.name for a in ACCELERATORS.values() if a.is_tpu]
# Any text an argv can carry: everything but NUL (which jobs.create refuses).
_NO_NUL = st.characters(exclude_characters="\x00")
ARG_TEXT = st.text(_NO_NUL, max_size=12)
ARG_TEXT_8 = st.text(_NO_NUL, max_size=8)
ARG_TEXT_6 = st.text(_NO_NUL, max_size=6)
REGIONS = ["us-central1", "us-east1", "europe-west4", "asia-east1"]

names = st.from_regex(r"[a-z][a-z0-9_]{0,10}", fullmatch=True)
buckets = st.from_regex(r"[a-z0-9][a-z0-9_-]{1,8}[a-z0-9]", fullmatch=True)
gcs_paths = st.builds(lambda b, n: f"gs://{b}/{n}", buckets, names)
# Counts travel as int64 strings but people write numbers: both must load the same.
int64 = st.integers(min_value=0, max_value=50).flatmap(lambda n: st.sampled_from([n, str(n)]))
finite = st.floats(allow_nan=False, allow_infinity=False, min_value=-1e12, max_value=1e12)
positive = st.floats(allow_nan=False, allow_infinity=False, min_value=1e-9, max_value=1e12)


@st.composite
def accelerators(draw: st.DrawFn, machine: str) -> dict[str, Any]:
    """An acceleratorConfig the machine takes: GPUs on N1, its own A100s on A2, TPUs on TPU."""
    m = MACHINE_TYPES[machine]
    if m.is_tpu:
        return {"type": draw(st.sampled_from(TPUS)), "count": 8}
    if m.gpu_type:
        return {"type": m.gpu_type, "count": m.gpus}
    kind = draw(st.sampled_from([a.name for a in GPUS if m.accepts_accelerator(a.name)]))
    return {"type": kind, "count": draw(st.sampled_from([1, 2, 4, "8"]))}


@st.composite
def replica_config(draw: st.DrawFn, machine: str | None, image: str | None) -> dict[str, Any]:
    config: dict[str, Any] = {}
    if machine and MACHINE_TYPES[machine].accepts_accelerators and draw(st.booleans()):
        config["acceleratorConfig"] = draw(accelerators(machine))
    if image:
        config["imageUri"] = image
    if draw(st.booleans()):
        disk: dict[str, Any] = {"bootDiskSizeGb": draw(st.integers(10, 64000))}
        if draw(st.booleans()):
            disk["bootDiskType"] = draw(st.sampled_from(["pd-ssd", "pd-standard"]))
        config["diskConfig"] = disk
    return config


@st.composite
def custom_cluster(draw: st.DrawFn, container: bool) -> dict[str, Any]:
    """CUSTOM: one machine family for every role (a TPU worker may join either)."""
    family = draw(st.sampled_from([LEGACY, COMPUTE_ENGINE]))
    pick = st.sampled_from([m.name for m in family])
    ti: dict[str, Any] = {"scaleTier": "CUSTOM", "masterType": draw(pick)}
    roles = (
        ("workerType", "workerCount", "workerConfig"),
        ("parameterServerType", "parameterServerCount", "parameterServerConfig"),
        ("evaluatorType", "evaluatorCount", "evaluatorConfig"),
    )
    for type_field, count_field, config_field in roles:
        if not draw(st.booleans()):
            continue
        tpu_ok = type_field == "workerType"
        ti[type_field] = draw(
            st.sampled_from(["cloud_tpu"]) if tpu_ok and draw(st.booleans()) else pick
        )
        ti[count_field] = draw(int64)
        image = draw(st.sampled_from([None, "gcr.io/p/role:2"])) if container else None
        config = draw(replica_config(ti[type_field], image))
        if config:
            ti[config_field] = config
    master = draw(replica_config(ti["masterType"], None))
    if master:
        ti["masterConfig"] = master
    return ti


@st.composite
def parameter(draw: st.DrawFn, name: str, grid: bool) -> dict[str, Any]:
    kinds = ["INTEGER", "CATEGORICAL", "DISCRETE"] + ([] if grid else ["DOUBLE"])
    kind = draw(st.sampled_from(kinds))
    spec: dict[str, Any] = {"parameterName": name, "type": kind}
    log = draw(st.sampled_from([None, "UNIT_LOG_SCALE", "UNIT_REVERSE_LOG_SCALE"]))
    linear = draw(st.sampled_from([None, "NONE", "UNIT_LINEAR_SCALE"]))
    if kind == "CATEGORICAL":
        spec["categoricalValues"] = draw(st.lists(ARG_TEXT_8, min_size=1, max_size=4, unique=True))
    elif kind == "DISCRETE":
        values = sorted(
            draw(st.lists(positive if log else finite, min_size=1, max_size=5, unique=True))
        )
        spec["discreteValues"] = values
        spec["scaleType"] = log or linear
    else:
        if kind == "INTEGER":
            low = draw(st.integers(1 if log else -1000, 1000))
            bounds = [float(low), float(draw(st.integers(low, 2000)))]
        else:
            bounds = sorted(draw(st.lists(positive if log else finite, min_size=2, max_size=2)))
        spec["minValue"], spec["maxValue"] = bounds
        spec["scaleType"] = log or linear
    return {k: v for k, v in spec.items() if v is not None}


@st.composite
def hyperparameters(draw: st.DrawFn) -> dict[str, Any]:
    algorithm = draw(
        st.sampled_from([None, "ALGORITHM_UNSPECIFIED", "GRID_SEARCH", "RANDOM_SEARCH"])
    )
    param_names = draw(st.lists(names, min_size=1, max_size=4, unique=True))
    hp: dict[str, Any] = {
        "goal": draw(st.sampled_from([None, "MAXIMIZE", "MINIMIZE"])),
        "algorithm": algorithm,
        "hyperparameterMetricTag": draw(st.sampled_from([None, "accuracy", "loss/val"])),
        "maxTrials": draw(st.sampled_from([None, 1, 10, 200])),
        "maxParallelTrials": draw(st.sampled_from([None, 1, 5])),
        "maxFailedTrials": draw(st.sampled_from([None, 0, 3])),
        "enableTrialEarlyStopping": draw(st.sampled_from([None, True, False])),
        "resumePreviousJobId": draw(st.sampled_from([None, "old_study_20240101_000000"])),
        "params": [draw(parameter(n, algorithm == "GRID_SEARCH")) for n in param_names],
    }
    return {k: v for k, v in hp.items() if v is not None}


@st.composite
def scheduling(draw: st.DrawFn) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if draw(st.booleans()):
        fraction = draw(st.sampled_from(["", ".5", ".000000001"]))
        out["maxRunningTime"] = f"{draw(st.integers(1, 10**7))}{fraction}s"
    if draw(st.booleans()):
        out["maxWaitTime"] = f"{draw(st.integers(1800, 10**7))}s"
    if draw(st.booleans()):
        out["priority"] = draw(st.integers(0, 1000))
    return out


@st.composite
def valid_jobs(draw: st.DrawFn) -> dict[str, Any]:
    """Any valid jobs.create body, in wire form: tiers, CUSTOM clusters with accelerators,
    Python packages or custom containers, tuning specs, scheduling, labels and the rest."""
    container = draw(st.booleans())
    tier = draw(st.sampled_from([None, *SCALE_TIERS]))
    ti: dict[str, Any] = {"region": draw(st.sampled_from(REGIONS))}
    if tier == "CUSTOM":
        ti.update(draw(custom_cluster(container)))
    elif tier is not None:
        ti["scaleTier"] = tier
    if container:
        master = ti.setdefault("masterConfig", {})
        master["imageUri"] = "gcr.io/my-project/trainer:1"
        if draw(st.booleans()):
            master["containerCommand"] = draw(st.lists(ARG_TEXT_6, max_size=3))
            master["containerArgs"] = draw(st.lists(ARG_TEXT_6, max_size=3))
        ti["useChiefInTfConfig"] = draw(st.booleans())
    else:
        ti["packageUris"] = draw(
            st.lists(
                st.one_of(
                    st.builds(lambda p: f"{p}.tar.gz", gcs_paths),
                    st.builds(lambda n: f"/opt/pkgs/{n}.whl", names),
                    st.builds(lambda n: f"file:///opt/pkgs/{n}.tar.gz", names),
                ),
                min_size=1,
                max_size=3,
            )
        )
        ti["pythonModule"] = draw(st.sampled_from(["trainer.task", "task", "a.b_c.d2"]))
        runtime = draw(st.sampled_from([None, *RUNTIME_PYTHON]))
        if runtime is not None:
            ti["runtimeVersion"] = runtime
            python = draw(st.sampled_from([None, *RUNTIME_PYTHON[runtime]]))
            if python is not None:
                ti["pythonVersion"] = python
    if "containerCommand" not in ti.get("masterConfig", {}):
        ti["args"] = draw(st.lists(ARG_TEXT, max_size=5))
    optional: dict[str, st.SearchStrategy[Any]] = {
        "jobDir": st.one_of(gcs_paths, st.just("/tmp/out"), st.just("gs://my-bucket/out/")),
        "scheduling": scheduling(),
        "hyperparameters": hyperparameters(),
        "serviceAccount": st.just("trainer@my-project.iam.gserviceaccount.com"),
        "network": st.just("projects/123456/global/networks/vpc"),
        "enableWebAccess": st.booleans(),
        "encryptionConfig": st.just(
            {"kmsKeyName": "projects/p/locations/us-central1/keyRings/r/cryptoKeys/k"}
        ),
    }
    for field in draw(st.lists(st.sampled_from(sorted(optional)), unique=True, max_size=4)):
        ti[field] = draw(optional[field])
    job: dict[str, Any] = {
        "jobId": draw(st.from_regex(r"[A-Za-z][A-Za-z0-9_]{0,30}", fullmatch=True)),
        "trainingInput": ti,
    }
    labels = draw(
        st.dictionaries(
            st.from_regex(r"[a-z][a-z0-9_-]{0,12}", fullmatch=True),
            st.from_regex(r"[a-z0-9_-]{0,12}", fullmatch=True),
            max_size=4,
        )
    )
    if labels:
        job["labels"] = labels
    return job


# -- properties --------------------------------------------------------------------------------
