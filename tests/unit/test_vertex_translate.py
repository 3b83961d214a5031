"""ml v1 <-> Vertex AI translation: tables for every tier, machine, accelerator and refusal, and
the round trip (Vertex job -> ml v1 job -> the same Vertex request) over the corpus and any job.

Expected values are written out here rather than derived from ``tiers.py``, so a wrong row in the
table fails a test instead of flowing into both sides. Enum-driven tests read the aiplatform v1
discovery document, so a state or algorithm Vertex AI adds fails until it is mapped.
"""

from __future__ import annotations

import copy
import re
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.support.config_corpus import SETTINGS, VALID, load_corpus_file, valid_jobs
from tests.support.discovery_schema import discovery_document, violations
from tui_app.model.jobs.job_spec import JobSpecError, parse_job
from tui_app.model.jobs.tiers import LEGACY_MACHINE_TYPES, SCALE_TIERS
from tui_app.model.vertex.translate import (
    CUSTOM_JOBS,
    TUNING_JOBS,
    VERTEX_FIELD,
    TranslationError,
    VertexRequest,
    executor_image,
    from_vertex,
    ml_state,
    resource_id,
    to_vertex,
    vertex_notes,
)
from tui_app.model.vertex.vertex_images import (
    LIST_READ,
    TF_IMAGES,
    image_of_uri,
    runtime_of_image,
    runtimes_with_images,
    tf_image,
)
from tui_app.model.views.describe import render_text, summarize
from tui_app.model.views.trials import trial_rows

REGION = "us-central1"
PKG = "gs://bucket/packages/trainer-0.1.tar.gz"
CPU_211 = "us-docker.pkg.dev/vertex-ai/training/tf-cpu.2-11.py310:latest"
GPU_211 = "us-docker.pkg.dev/vertex-ai/training/tf-gpu.2-11.py310:latest"
CPU_211_PY37 = "us-docker.pkg.dev/vertex-ai/training/tf-cpu.2-11:latest"
TPU_212 = "us-docker.pkg.dev/vertex-ai/training/tf-tpu.2-12:latest"
PYTORCH = "europe-docker.pkg.dev/vertex-ai/training/pytorch-gpu.2-1.py310:latest"
SCHEMAS = discovery_document("aiplatform", "v1")["schemas"]
SCHEMA_OF = {
    CUSTOM_JOBS: "GoogleCloudAiplatformV1CustomJob",
    TUNING_JOBS: "GoogleCloudAiplatformV1HyperparameterTuningJob",
}


def job(**ti: Any) -> dict[str, Any]:
    """A plain Python-package job on ``REGION``; keyword fields override (None removes)."""
    base: dict[str, Any] = {
        "scaleTier": "BASIC",
        "region": REGION,
        "packageUris": [PKG],
        "pythonModule": "trainer.task",
        "runtimeVersion": "2.11",
    }
    base.update(ti)
    return {"jobId": "job_1", "trainingInput": {k: v for k, v in base.items() if v is not None}}


def custom(**ti: Any) -> dict[str, Any]:
    return job(scaleTier="CUSTOM", **ti)


def tpu_job(**ti: Any) -> dict[str, Any]:
    """A job for a TPU VM: no ml v1 runtime has a TPU image, so it runs on the profile's
    executor_image (``TPU_212``) and names no runtime."""
    return job(runtimeVersion=None, **ti)


def pools(req: VertexRequest) -> list[dict[str, Any]]:
    spec = req.body["trialJobSpec" if req.collection == TUNING_JOBS else "jobSpec"]
    out: list[dict[str, Any]] = spec["workerPoolSpecs"]
    return out


def machines(req: VertexRequest) -> list[tuple[dict[str, Any], str] | None]:
    """Each pool's machineSpec and replicaCount, None for a skipped pool."""
    return [(p["machineSpec"], p["replicaCount"]) if p else None for p in pools(req)]


def refusals(body: dict[str, Any], **kw: Any) -> dict[str, str]:
    kw.setdefault("region", REGION)
    with pytest.raises(TranslationError) as err:
        to_vertex(body, **kw)
    return {v.field: v.description for v in err.value.violations}


def note_fields(req: VertexRequest) -> list[str]:
    return [n.field for n in req.notes]


def server_copy(req: VertexRequest, region: str, **extra: Any) -> dict[str, Any]:
    """What Vertex AI answers for a created job: the body plus name, state and times."""
    out = copy.deepcopy(req.body)
    out.update(
        name=f"projects/123456/locations/{region}/{req.collection}/8765432109876543210",
        state="JOB_STATE_PENDING",
        createTime="2026-01-02T03:04:05.123456Z",
        updateTime="2026-01-02T03:04:06Z",
    )
    out.update(extra)
    return out


def round_trip(body: dict[str, Any], region: str, image: str | None = None) -> dict[str, Any]:
    """to_vertex -> server response -> from_vertex -> to_vertex gives the same request, using
    only what from_vertex kept (the executor image when no runtime explains it)."""
    first = to_vertex(body, region=region, executor_image=image)
    resource = server_copy(first, region)
    assert violations("aiplatform", "v1", SCHEMA_OF[first.collection], resource) == []
    back = from_vertex(resource, first.collection)
    again = to_vertex(
        back, region=region, executor_image=back[VERTEX_FIELD].get("executorImageUri")
    )
    assert again.collection == first.collection
    assert again.body == first.body
    return back


# -- scale tiers and machine types --------------------------------------------------------------

TPU_V2 = {"machineType": "cloud-tpu", "acceleratorType": "TPU_V2", "acceleratorCount": 8}
TIER_POOLS: dict[str, list[tuple[dict[str, Any], str] | None]] = {
    "BASIC": [({"machineType": "n1-standard-4"}, "1")],
    "STANDARD_1": [
        ({"machineType": "n1-highcpu-8"}, "1"),
        ({"machineType": "n1-highcpu-8"}, "4"),
        ({"machineType": "n1-standard-4"}, "3"),
    ],
    "PREMIUM_1": [
        ({"machineType": "n1-highcpu-16"}, "1"),
        ({"machineType": "n1-highcpu-16"}, "19"),
        ({"machineType": "n1-highmem-8"}, "11"),
    ],
    "BASIC_GPU": [
        (
            {
                "machineType": "n1-standard-8",
                "acceleratorType": "NVIDIA_TESLA_T4",
                "acceleratorCount": 1,
            },
            "1",
        )
    ],
    "BASIC_TPU": [(TPU_V2, "1")],
}
TIER_NOTES = {"BASIC_GPU": ["trainingInput.scaleTier"], "BASIC_TPU": ["trainingInput.scaleTier"]}


def test_every_tier_is_in_the_table() -> None:
    assert set(TIER_POOLS) | {"CUSTOM"} == set(SCALE_TIERS)


@pytest.mark.parametrize("tier", sorted(TIER_POOLS))
def test_scale_tiers_become_fixed_pools(tier: str) -> None:
    body, image = (
        (tpu_job(scaleTier=tier), TPU_212) if tier == "BASIC_TPU" else (job(scaleTier=tier), None)
    )
    req = to_vertex(body, region=REGION, executor_image=image)
    assert req.collection == CUSTOM_JOBS
    assert machines(req) == TIER_POOLS[tier]
    assert note_fields(req) == TIER_NOTES.get(tier, [])
    round_trip(body, REGION, image)


def test_no_scale_tier_means_basic() -> None:
    req = to_vertex(job(scaleTier=None), region=REGION)
    assert machines(req) == TIER_POOLS["BASIC"]


def test_basic_gpu_note_says_what_replaced_the_k80() -> None:
    (note,) = to_vertex(job(scaleTier="BASIC_GPU"), region=REGION).notes
    assert "BASIC_GPU" in note.description and "NVIDIA_TESLA_K80" in note.description
    assert "NVIDIA_TESLA_T4" in note.description and "n1-standard-8" in note.description


def test_basic_tpu_runs_on_a_tpu_vm_with_a_listed_tpu_image() -> None:
    """No ml v1 runtime has a TPU image on Google's list, so the refusal names the ones that
    exist; a runtime that has one, or the profile's image, runs on the TPU VM."""
    found = refusals(job(scaleTier="BASIC_TPU", runtimeVersion="2.8"))
    why = found["trainingInput.runtimeVersion"]
    assert "TensorFlow 2.8 image for TPU machines" in why
    assert "2.12 (Python 3.8); 2.15 (Python 3.10)" in why and "executor_image" in why
    req = to_vertex(job(scaleTier="BASIC_TPU", runtimeVersion="2.12"), region=REGION)
    assert pools(req)[0]["pythonPackageSpec"]["executorImageUri"] == TPU_212
    req = to_vertex(tpu_job(scaleTier="BASIC_TPU"), region=REGION, executor_image=TPU_212)
    assert pools(req)[0]["pythonPackageSpec"]["executorImageUri"] == TPU_212
    (note,) = req.notes
    assert "TPU VM" in note.description and "TPU Node" in note.description


def test_basic_tpu_takes_the_tpu_type_of_an_accelerator_config() -> None:
    body = tpu_job(
        scaleTier="BASIC_TPU", masterConfig={"acceleratorConfig": {"type": "TPU_V3", "count": 8}}
    )
    assert machines(to_vertex(body, region=REGION, executor_image=TPU_212)) == [
        ({**TPU_V2, "acceleratorType": "TPU_V3"}, "1")
    ]


def t4(n: int) -> dict[str, Any]:
    return {"acceleratorType": "NVIDIA_TESLA_T4", "acceleratorCount": n}


def gpu(kind: str, n: int) -> dict[str, Any]:
    return {"acceleratorType": f"NVIDIA_TESLA_{kind}", "acceleratorCount": n}


# (machineSpec, note on masterType?) for each legacy type as the master of a CUSTOM job.
LEGACY: dict[str, tuple[dict[str, Any], bool]] = {
    "standard": ({"machineType": "n1-standard-4"}, False),
    "large_model": ({"machineType": "n1-highmem-8"}, False),
    "complex_model_s": ({"machineType": "n1-highcpu-8"}, False),
    "complex_model_m": ({"machineType": "n1-highcpu-16"}, False),
    "complex_model_l": ({"machineType": "n1-highcpu-32"}, False),
    "standard_gpu": ({"machineType": "n1-standard-8", **t4(1)}, True),
    "complex_model_m_gpu": ({"machineType": "n1-standard-16", **t4(4)}, True),
    # Eight K80s: a T4 attaches at most four per VM.
    "complex_model_l_gpu": ({"machineType": "n1-standard-32", **t4(4)}, True),
    "standard_p100": ({"machineType": "n1-standard-8", **gpu("P100", 1)}, False),
    "complex_model_m_p100": ({"machineType": "n1-standard-16", **gpu("P100", 4)}, False),
    "standard_v100": ({"machineType": "n1-standard-8", **gpu("V100", 1)}, False),
    "large_model_v100": ({"machineType": "n1-highmem-8", **gpu("V100", 1)}, False),
    "complex_model_m_v100": ({"machineType": "n1-standard-16", **gpu("V100", 4)}, False),
    "complex_model_l_v100": ({"machineType": "n1-standard-32", **gpu("V100", 8)}, False),
    "cloud_tpu": (TPU_V2, False),
}


def test_every_legacy_machine_type_is_in_the_table() -> None:
    assert set(LEGACY) == set(LEGACY_MACHINE_TYPES)


@pytest.mark.parametrize("name", sorted(LEGACY))
def test_legacy_machine_types_become_compute_engine_machines(name: str) -> None:
    spec, noted = LEGACY[name]
    tpu = name == "cloud_tpu"
    body = custom(masterType=name, runtimeVersion=None if tpu else "2.11")
    req = to_vertex(body, region=REGION, executor_image=TPU_212 if tpu else None)
    assert machines(req) == [(spec, "1")]
    assert note_fields(req) == (["trainingInput.masterType"] if noted else [])
    image = pools(req)[0]["pythonPackageSpec"]["executorImageUri"]
    assert image == (TPU_212 if tpu else GPU_211 if "acceleratorType" in spec else CPU_211)
    back = round_trip(body, REGION, TPU_212 if tpu else None)
    assert parse_job({k: back[k] for k in ("jobId", "trainingInput")})


def test_legacy_workers_keep_their_pools_and_counts() -> None:
    body = custom(
        masterType="complex_model_m",
        workerType="complex_model_m_gpu",
        workerCount="3",
        parameterServerType="large_model",
        parameterServerCount=2,
    )
    req = to_vertex(body, region=REGION)
    assert machines(req) == [
        ({"machineType": "n1-highcpu-16"}, "1"),
        ({"machineType": "n1-standard-16", **t4(4)}, "3"),
        ({"machineType": "n1-highmem-8"}, "2"),
    ]
    assert note_fields(req) == ["trainingInput.workerType"]
    assert "complex_model_m_gpu" in req.notes[0].description


@pytest.mark.parametrize(
    ("machine", "accelerator", "expected"),
    [
        ("n1-standard-8", {"type": "NVIDIA_TESLA_T4", "count": "2"}, t4(2)),
        ("n1-standard-16", {"type": "NVIDIA_TESLA_V100", "count": 4}, gpu("V100", 4)),
        ("n1-highmem-8", {"type": "NVIDIA_TESLA_P100", "count": "1"}, gpu("P100", 1)),
        ("n1-standard-4", {"type": "NVIDIA_TESLA_P4", "count": "1"}, gpu("P4", 1)),
        ("a2-highgpu-2g", {"type": "NVIDIA_TESLA_A100", "count": "2"}, gpu("A100", 2)),
        ("a2-highgpu-8g", None, gpu("A100", 8)),  # built in: named even when the config is not
        ("n1-standard-8", None, {}),
    ],
)
def test_custom_accelerators(
    machine: str, accelerator: dict[str, Any] | None, expected: dict[str, Any]
) -> None:
    config = {"acceleratorConfig": accelerator} if accelerator else None
    body = custom(masterType=machine, masterConfig=config)
    req = to_vertex(body, region=REGION)
    assert machines(req) == [({"machineType": machine, **expected}, "1")]
    assert isinstance(pools(req)[0]["machineSpec"].get("acceleratorCount", 0), int)
    image = pools(req)[0]["pythonPackageSpec"]["executorImageUri"]
    assert image == (GPU_211 if expected else CPU_211)
    assert req.notes == ()
    round_trip(body, REGION)


def test_disk_config_becomes_disk_spec() -> None:
    body = custom(
        masterType="n1-standard-8",
        masterConfig={"diskConfig": {"bootDiskType": "pd-standard", "bootDiskSizeGb": "250"}},
        workerType="n1-standard-8",
        workerCount=1,
        workerConfig={"diskConfig": {"bootDiskSizeGb": 50}},
    )
    req = to_vertex(body, region=REGION)
    assert pools(req)[0]["diskSpec"] == {"bootDiskType": "pd-standard", "bootDiskSizeGb": 250}
    assert pools(req)[1]["diskSpec"] == {"bootDiskSizeGb": 50}
    round_trip(body, REGION)


def test_a_cloud_tpu_worker_becomes_the_primary_tpu_vm() -> None:
    body = custom(
        masterType="n1-highcpu-16",
        workerType="cloud_tpu",
        workerCount=1,
        workerConfig={"acceleratorConfig": {"type": "TPU_V3", "count": "8"}},
        evaluatorType="n1-standard-4",
        evaluatorCount=1,
        runtimeVersion=None,
    )
    req = to_vertex(body, region=REGION, executor_image=TPU_212)
    assert machines(req) == [
        ({**TPU_V2, "acceleratorType": "TPU_V3"}, "1"),
        None,
        None,
        ({"machineType": "n1-standard-4"}, "1"),
    ]
    assert pools(req)[0]["pythonPackageSpec"]["executorImageUri"] == TPU_212
    assert note_fields(req) == ["trainingInput.workerType"]
    assert "n1-highcpu-16" in req.notes[0].description
    back = round_trip(body, REGION, TPU_212)
    assert back["trainingInput"]["masterType"] == "cloud_tpu"


# -- pool layout, code, containers ---------------------------------------------------------------


M = ("n1-standard-4", "1")


@pytest.mark.parametrize(
    ("roles", "layout"),
    [
        ({}, [M]),
        ({"worker": 2}, [M, ("n1-highmem-2", "2")]),
        ({"parameterServer": 1}, [M, {}, ("n1-highmem-4", "1")]),
        ({"evaluator": 1}, [M, {}, {}, ("n1-highmem-8", "1")]),
        ({"worker": 2, "evaluator": 3}, [M, ("n1-highmem-2", "2"), {}, ("n1-highmem-8", "3")]),
        (
            {"worker": 2, "parameterServer": 3, "evaluator": 1},
            [M, ("n1-highmem-2", "2"), ("n1-highmem-4", "3"), ("n1-highmem-8", "1")],
        ),
        ({"worker": 0, "evaluator": 0}, [M]),  # a count of 0 runs nothing
    ],
)
def test_pools_keep_fixed_positions(
    roles: dict[str, int], layout: list[tuple[str, str] | dict[str, Any]]
) -> None:
    """Master, workers, parameter servers, evaluators at 0..3; {} for a gap; no trailing {}."""
    machine = {
        "worker": "n1-highmem-2",
        "parameterServer": "n1-highmem-4",
        "evaluator": "n1-highmem-8",
    }
    fields: dict[str, Any] = {"masterType": "n1-standard-4"}
    for role, count in roles.items():
        fields[f"{role}Type"] = machine[role]
        fields[f"{role}Count"] = str(count)
    req = to_vertex(custom(**fields), region=REGION)
    got = [(p["machineSpec"]["machineType"], p["replicaCount"]) if p else p for p in pools(req)]
    assert got == layout
    for pool in pools(req):
        assert not pool or pool["pythonPackageSpec"]["packageUris"] == [PKG]
    round_trip(custom(**fields), REGION)


def test_python_package_runs_in_every_pool_with_args_and_job_dir_last() -> None:
    body = custom(
        masterType="n1-standard-8",
        masterConfig={"acceleratorConfig": {"type": "NVIDIA_TESLA_T4", "count": "1"}},
        workerType="n1-standard-8",
        workerCount=2,
        args=["--epochs", "5"],
        jobDir="gs://bucket/jobs/job_1",
    )
    req = to_vertex(body, region=REGION)
    for pool, image in zip(pools(req), (GPU_211, CPU_211), strict=True):
        assert pool["pythonPackageSpec"] == {
            "executorImageUri": image,
            "packageUris": [PKG],
            "pythonModule": "trainer.task",
            "args": ["--epochs", "5", "--job-dir=gs://bucket/jobs/job_1"],
        }
    spec = req.body["jobSpec"]
    assert spec["baseOutputDirectory"] == {"outputUriPrefix": "gs://bucket/jobs/job_1"}
    back = round_trip(body, REGION)
    assert back["trainingInput"]["args"] == ["--epochs", "5"]
    assert back["trainingInput"]["jobDir"] == "gs://bucket/jobs/job_1"
    assert back["trainingInput"]["runtimeVersion"] == "2.11"


def test_job_dir_is_passed_to_containers_too() -> None:
    body = job(
        packageUris=None,
        pythonModule=None,
        runtimeVersion=None,
        masterConfig={"imageUri": "gcr.io/p/t:1"},
        jobDir="gs://bucket/out/",
    )
    req = to_vertex(body, region=REGION)
    assert pools(req)[0]["containerSpec"] == {
        "imageUri": "gcr.io/p/t:1",
        "args": ["--job-dir=gs://bucket/out/"],
    }
    back = round_trip(body, REGION)
    assert "args" not in back["trainingInput"]


def test_the_masters_image_is_repeated_for_roles_without_one() -> None:
    body = custom(
        packageUris=None,
        pythonModule=None,
        runtimeVersion=None,
        masterType="n1-standard-8",
        masterConfig={
            "imageUri": "gcr.io/p/trainer:2",
            "containerCommand": ["python", "-m", "trainer.task"],
            "containerArgs": ["--epochs", "5"],
        },
        workerType="n1-standard-8",
        workerCount=2,
        parameterServerType="n1-highmem-4",
        parameterServerCount=1,
        parameterServerConfig={"imageUri": "gcr.io/p/ps:2"},
        evaluatorType="n1-standard-4",
        evaluatorCount=1,
        evaluatorConfig={"containerArgs": ["--eval"]},
    )
    req = to_vertex(body, region=REGION)
    assert [p["containerSpec"] for p in pools(req)] == [
        {
            "imageUri": "gcr.io/p/trainer:2",
            "command": ["python", "-m", "trainer.task"],
            "args": ["--epochs", "5"],
        },
        {"imageUri": "gcr.io/p/trainer:2"},
        {"imageUri": "gcr.io/p/ps:2"},
        {"imageUri": "gcr.io/p/trainer:2", "args": ["--eval"]},
    ]
    assert all("pythonPackageSpec" not in p for p in pools(req))
    back = round_trip(body, REGION)
    ti = back["trainingInput"]
    assert "imageUri" not in ti.get("workerConfig", {})  # inherited, as ml v1 wrote it
    assert ti["parameterServerConfig"]["imageUri"] == "gcr.io/p/ps:2"
    assert ti["masterConfig"]["containerCommand"] == ["python", "-m", "trainer.task"]


def test_training_input_args_go_to_every_container() -> None:
    body = custom(
        packageUris=None,
        pythonModule=None,
        runtimeVersion=None,
        masterType="n1-standard-4",
        masterConfig={"imageUri": "gcr.io/p/t:1"},
        workerType="n1-standard-4",
        workerCount=1,
        args=["--lr", "0.1"],
    )
    req = to_vertex(body, region=REGION)
    assert [p["containerSpec"]["args"] for p in pools(req)] == [["--lr", "0.1"]] * 2
    assert round_trip(body, REGION)["trainingInput"]["args"] == ["--lr", "0.1"]


def test_executor_image_setting_wins_over_runtime_version() -> None:
    req = to_vertex(job(), region=REGION, executor_image=PYTORCH)
    assert pools(req)[0]["pythonPackageSpec"]["executorImageUri"] == PYTORCH
    assert note_fields(req) == ["trainingInput.runtimeVersion"]
    assert PYTORCH in req.notes[0].description
    back = round_trip(job(runtimeVersion=None), REGION, PYTORCH)
    assert back[VERTEX_FIELD]["executorImageUri"] == PYTORCH
    assert "runtimeVersion" not in back["trainingInput"]


@pytest.mark.parametrize(
    ("region", "host"),
    [
        ("us-central1", "us"),
        ("us-east4", "us"),
        ("northamerica-northeast1", "us"),
        ("europe-west4", "europe"),
        ("asia-east1", "asia"),
        ("australia-southeast1", "asia"),
    ],
)
def test_images_come_from_the_nearest_registry(region: str, host: str) -> None:
    req = to_vertex(job(region=region), region=region)
    image = pools(req)[0]["pythonPackageSpec"]["executorImageUri"]
    assert image == f"{host}-docker.pkg.dev/vertex-ai/training/tf-cpu.2-11.py310:latest"
    round_trip(job(region=region), region)


# Google's list of prebuilt training containers, TensorFlow section, as read on LIST_READ
# (https://cloud.google.com/vertex-ai/docs/training/pre-built-containers): every image name, with
# its Python and end of availability, written out here so a wrong row in vertex_images fails.
LISTED_TF_IMAGES = {
    # tag: (Python, end of availability)
    "tf-cpu.2-17.py310": ("3.10", "2026-07-11"),
    "tf-gpu.2-17.py310": ("3.10", "2026-07-11"),
    "tf-cpu.2-16.py310": ("3.10", "2026-06-28"),
    "tf-gpu.2-16.py310": ("3.10", "2026-06-28"),
    "tf-cpu.2-15.py310": ("3.10", "2025-11-14"),
    "tf-gpu.2-15.py310": ("3.10", "2025-11-14"),
    "tf-tpu.2-15.cp310": ("3.10", "2025-10-23"),
    "tf-cpu.2-14.py310": ("3.10", "2025-09-26"),
    "tf-gpu.2-14.py310": ("3.10", "2025-09-26"),
    "tf-cpu.2-13.py310": ("3.10", "2025-07-05"),
    "tf-gpu.2-13.py310": ("3.10", "2025-07-05"),
    "tf-cpu.2-12.py310": ("3.10", "2025-06-30"),
    "tf-gpu.2-12.py310": ("3.10", "2025-06-30"),
    "tf-tpu.2-12": ("3.8", "2025-06-30"),
    "tf-cpu.2-11.py310": ("3.10", "2024-11-15"),
    "tf-gpu.2-11.py310": ("3.10", "2024-11-15"),
    "tf-cpu.2-11": ("3.7", "2024-11-15"),
    "tf-gpu.2-11": ("3.7", "2024-11-15"),
    "tf-cpu.2-9.py310": ("3.10", "2024-11-15"),
    "tf-gpu.2-9.py310": ("3.10", "2024-11-15"),
    "tf-cpu.2-9": ("3.7", "2024-11-15"),
    "tf-gpu.2-9": ("3.7", "2024-11-15"),
    "tf-cpu.2-8.py310": ("3.10", "2024-11-15"),
    "tf-gpu.2-8.py310": ("3.10", "2024-11-15"),
    "tf-cpu.2-8": ("3.7", "2024-11-15"),
    "tf-gpu.2-8": ("3.7", "2024-11-15"),
    **{f"tf-{k}.2-{n}": ("3.7", "2024-09-01") for n in range(1, 8) for k in ("cpu", "gpu")},
    "tf-cpu.1-15": ("3.7", "2024-09-01"),
    "tf-gpu.1-15": ("3.7", "2024-09-01"),
}


def test_the_image_table_is_googles_list() -> None:
    assert {
        i.tag: (i.python, i.end_of_availability.isoformat()) for i in TF_IMAGES
    } == LISTED_TF_IMAGES
    assert len(TF_IMAGES) == len(LISTED_TF_IMAGES), "one row per image"
    for image in TF_IMAGES:
        assert image.tag.startswith(f"tf-{image.kind}.{image.tensorflow.replace('.', '-')}")
        for host, region in (
            ("us", "us-west1"),
            ("europe", "europe-west4"),
            ("asia", "asia-east1"),
        ):
            uri = image.uri(region)
            assert uri == f"{host}-docker.pkg.dev/vertex-ai/training/{image.tag}:latest"
            assert image_of_uri(uri) == image
    # On the day the table was read, Google's list had no TensorFlow image still available.
    assert all(i.end_of_availability < LIST_READ for i in TF_IMAGES)


@pytest.mark.parametrize(
    ("runtime", "python", "gpu", "tpu", "tag"),
    [
        ("1.15", None, False, False, "tf-cpu.1-15"),
        ("1.15", "3.7", True, False, "tf-gpu.1-15"),
        ("2.1", None, False, False, "tf-cpu.2-1"),
        ("2.5", "3.7", True, False, "tf-gpu.2-5"),
        # Without pythonVersion, the newest Python the list has for that TensorFlow.
        ("2.8", None, False, False, "tf-cpu.2-8.py310"),
        ("2.8", "3.7", False, False, "tf-cpu.2-8"),
        ("2.9", None, True, False, "tf-gpu.2-9.py310"),
        ("2.11", None, False, False, "tf-cpu.2-11.py310"),
        ("2.11", None, True, False, "tf-gpu.2-11.py310"),
        ("2.11", "3.7", False, False, "tf-cpu.2-11"),
        ("2.11", "3.7", True, False, "tf-gpu.2-11"),
        ("2.12", None, True, True, "tf-tpu.2-12"),  # a TPU VM has no GPUs: tpu wins
        ("2.15", None, False, True, "tf-tpu.2-15.cp310"),
        ("2.15", None, True, False, "tf-gpu.2-15.py310"),
        ("2.17", None, False, False, "tf-cpu.2-17.py310"),
    ],
)
def test_executor_image_for_runtime(
    runtime: str, python: str | None, gpu: bool, tpu: bool, tag: str
) -> None:
    image = executor_image(runtime, gpu=gpu, tpu=tpu, region=REGION, python_version=python)
    assert image == f"us-docker.pkg.dev/vertex-ai/training/{tag}:latest"
    assert runtime_of_image(image) == runtime


@pytest.mark.parametrize(
    "runtime", [None, "", "1.14", "1.0", "2.10", "2.18", "3.0", "2.x", "2.01", "latest"]
)
def test_no_image_for_other_runtimes(runtime: str | None) -> None:
    with pytest.raises(TranslationError) as err:
        executor_image(runtime, gpu=False, tpu=False, region=REGION)
    (v,) = err.value.violations
    assert v.field == "trainingInput.runtimeVersion"
    assert "executor_image" in v.description
    # It says what exists instead, from the table.
    assert runtimes_with_images("cpu") in v.description
    assert runtimes_with_images("cpu") == (
        "1.15, 2.1-2.9, 2.11 (Python 3.7); 2.8, 2.9, 2.11-2.17 (Python 3.10)"
    )


@pytest.mark.parametrize(
    ("runtime", "python", "kind", "field", "hint"),
    [
        ("2.11", None, "tpu", "runtimeVersion", "2.12 (Python 3.8); 2.15 (Python 3.10)"),
        ("2.5", "3.7", "tpu", "runtimeVersion", "TensorFlow 2.5 image for TPU machines"),
        ("1.15", "2.7", "cpu", "pythonVersion", "Python 3.7 only, not 2.7"),
        ("2.17", "3.7", "gpu", "pythonVersion", "set pythonVersion to 3.10 or remove it"),
    ],
)
def test_a_runtime_without_that_image_says_what_exists(
    runtime: str, python: str | None, kind: str, field: str, hint: str
) -> None:
    with pytest.raises(TranslationError) as err:
        executor_image(
            runtime, gpu=kind == "gpu", tpu=kind == "tpu", region=REGION, python_version=python
        )
    (v,) = err.value.violations
    assert v.field == f"trainingInput.{field}"
    assert hint in v.description and v.description.endswith(".")


def test_runtime_of_image_ignores_other_images() -> None:
    unlisted = (
        PYTORCH,
        "gcr.io/p/tf-cpu.2-11:latest",
        "us-docker.pkg.dev/vertex-ai/training/tf-cpu.2-10:latest",  # no 2.10 on the list
        "us-docker.pkg.dev/vertex-ai/training/tf-tpu.2-11:latest",  # nor a 2.11 TPU image
        "us-docker.pkg.dev/vertex-ai/training/tf-cpu.2-11.py310:2.11",  # only :latest works
        "",
        None,
    )
    for uri in unlisted:
        assert runtime_of_image(uri) is None, uri
    assert tf_image("1.14", gpu=False, tpu=False, region=REGION) is None
    assert tf_image("2.11", gpu=False, tpu=True, region=REGION) is None


def test_python_version_picks_the_image_and_reads_back() -> None:
    body = job(pythonVersion="3.7")
    req = to_vertex(body, region=REGION)
    assert pools(req)[0]["pythonPackageSpec"]["executorImageUri"] == CPU_211_PY37
    assert req.notes == ()
    back = round_trip(body, REGION)
    assert (back["trainingInput"]["runtimeVersion"], back["trainingInput"]["pythonVersion"]) == (
        "2.11",
        "3.7",
    )
    assert "executorImageUri" not in back[VERTEX_FIELD]
    # Without pythonVersion the Python 3.10 image runs it, and reads back without one.
    back = round_trip(job(), REGION)
    assert "pythonVersion" not in back["trainingInput"]


def test_python_version_is_noted_where_it_decides_nothing() -> None:
    req = to_vertex(job(pythonVersion="3.7"), region=REGION, executor_image=PYTORCH)
    assert note_fields(req) == ["trainingInput.runtimeVersion", "trainingInput.pythonVersion"]
    body = job(
        pythonVersion="3.7",
        packageUris=None,
        pythonModule=None,
        masterConfig={"imageUri": "gcr.io/p/t:1"},
    )
    req = to_vertex(body, region=REGION)
    assert note_fields(req) == ["trainingInput.runtimeVersion", "trainingInput.pythonVersion"]
    assert "own Python" in req.notes[1].description


@pytest.mark.parametrize(
    ("today", "noted"),
    [(None, False), (date(2024, 11, 15), False), (date(2024, 11, 16), True), (LIST_READ, True)],
)
def test_an_image_past_its_end_of_availability_is_noted_when_the_date_is_known(
    today: date | None, noted: bool
) -> None:
    req = to_vertex(job(), region=REGION, today=today)
    assert note_fields(req) == (["trainingInput.runtimeVersion"] if noted else [])
    assert vertex_notes(job()["trainingInput"], region=REGION, today=today) == list(req.notes)
    if noted:
        why = req.notes[0].description
        assert "tf-cpu.2-11.py310" in why and "2024-11-15" in why
        assert "executor_image" in why and "pre-built-containers" in why
    # The profile's own image is the profile's business.
    assert (
        to_vertex(
            job(runtimeVersion=None), region=REGION, executor_image=PYTORCH, today=today
        ).notes
        == ()
    )


# -- other fields -------------------------------------------------------------------------------


def test_job_fields_scheduling_identity_network_and_encryption() -> None:
    kms = "projects/p/locations/us-central1/keyRings/r/cryptoKeys/k"
    body = job(
        scheduling={"maxRunningTime": "7200s", "maxWaitTime": "3600s", "priority": 500},
        serviceAccount="trainer@p.iam.gserviceaccount.com",
        network="projects/123/global/networks/vpc",
        enableWebAccess=True,
        encryptionConfig={"kmsKeyName": kms},
    )
    body["labels"] = {"team": "vision", "env": "dev"}
    req = to_vertex(body, region=REGION)
    assert req.body["displayName"] == "job_1"
    assert req.body["labels"] == {"team": "vision", "env": "dev"}
    assert req.body["encryptionSpec"] == {"kmsKeyName": kms}
    spec = req.body["jobSpec"]
    assert spec["scheduling"] == {"timeout": "7200s"}
    assert spec["serviceAccount"] == "trainer@p.iam.gserviceaccount.com"
    assert spec["network"] == "projects/123/global/networks/vpc"
    assert spec["enableWebAccess"] is True
    assert note_fields(req) == [
        "trainingInput.scheduling.maxWaitTime",
        "trainingInput.scheduling.priority",
    ]
    back = round_trip(body, REGION)
    assert back["labels"] == body["labels"]
    assert back["trainingInput"]["encryptionConfig"] == {"kmsKeyName": kms}
    assert back["trainingInput"]["scheduling"] == {"maxRunningTime": "7200s"}


@pytest.mark.parametrize(
    ("fields", "noted"),
    [
        ({"useChiefInTfConfig": True}, "trainingInput.useChiefInTfConfig"),
        (
            {
                "masterType": "cloud_tpu",
                "masterConfig": {"tpuTfVersion": "2.11"},
                "runtimeVersion": None,
            },
            "trainingInput.masterConfig.tpuTfVersion",
        ),
        ({"masterType": "n1-standard-4"}, None),
        ({"pythonVersion": "3.7"}, None),  # it picks the image (see above)
    ],
)
def test_ignored_fields_are_noted(fields: dict[str, Any], noted: str | None) -> None:
    body = custom(**{"masterType": "n1-standard-4", **fields})
    image = TPU_212 if fields.get("masterType") == "cloud_tpu" else None
    req = to_vertex(body, region=REGION, executor_image=image)
    assert note_fields(req) == ([noted] if noted else [])
    assert all(n.description.startswith("Ignored: ") for n in req.notes)
    notes = vertex_notes(body["trainingInput"], region=REGION, executor_image=image)
    assert notes == list(req.notes)


def test_machine_types_outside_custom_are_noted() -> None:
    req = to_vertex(job(scaleTier="STANDARD_1", workerType="n1-standard-8"), region=REGION)
    assert note_fields(req) == ["trainingInput.workerType"]
    assert machines(req) == TIER_POOLS["STANDARD_1"]


def test_a_plain_config_has_no_notes() -> None:
    assert vertex_notes(job()["trainingInput"]) == []
    assert vertex_notes(job()["trainingInput"], region=REGION, executor_image=None) == []


# -- hyperparameter tuning -------------------------------------------------------------------


HP: dict[str, Any] = {
    "goal": "MINIMIZE",
    "hyperparameterMetricTag": "val/loss",
    "maxTrials": 12,
    "maxParallelTrials": 3,
    "maxFailedTrials": 2,
    "algorithm": "RANDOM_SEARCH",
    "params": [
        {
            "parameterName": "lr",
            "type": "DOUBLE",
            "minValue": 0.0001,
            "maxValue": 0.1,
            "scaleType": "UNIT_LOG_SCALE",
        },
        {
            "parameterName": "layers",
            "type": "INTEGER",
            "minValue": 1.0,
            "maxValue": 5,
            "scaleType": "UNIT_LINEAR_SCALE",
        },
        {"parameterName": "opt", "type": "CATEGORICAL", "categoricalValues": ["adam", "sgd"]},
        {
            "parameterName": "bs",
            "type": "DISCRETE",
            "discreteValues": [32, 64, 128],
            "scaleType": "UNIT_REVERSE_LOG_SCALE",
        },
        {
            "parameterName": "l2",
            "type": "DOUBLE",
            "minValue": 0,
            "maxValue": 1,
            "scaleType": "NONE",
        },
    ],
}


def test_hyperparameters_make_a_tuning_job() -> None:
    body = job(hyperparameters=HP, jobDir="gs://bucket/hp")
    body["labels"] = {"kind": "hp"}
    req = to_vertex(body, region=REGION)
    assert req.collection == TUNING_JOBS
    assert "jobSpec" not in req.body
    assert {k: v for k, v in req.body.items() if k != "trialJobSpec"} == {
        "displayName": "job_1",
        "labels": {"kind": "hp"},
        "maxTrialCount": 12,
        "parallelTrialCount": 3,
        "maxFailedTrialCount": 2,
        "studySpec": {
            "metrics": [{"metricId": "val/loss", "goal": "MINIMIZE"}],
            "parameters": [
                {
                    "parameterId": "lr",
                    "doubleValueSpec": {"minValue": 0.0001, "maxValue": 0.1},
                    "scaleType": "UNIT_LOG_SCALE",
                },
                {
                    "parameterId": "layers",
                    "integerValueSpec": {"minValue": "1", "maxValue": "5"},
                    "scaleType": "UNIT_LINEAR_SCALE",
                },
                {"parameterId": "opt", "categoricalValueSpec": {"values": ["adam", "sgd"]}},
                {
                    "parameterId": "bs",
                    "discreteValueSpec": {"values": [32.0, 64.0, 128.0]},
                    "scaleType": "UNIT_REVERSE_LOG_SCALE",
                },
                {"parameterId": "l2", "doubleValueSpec": {"minValue": 0.0, "maxValue": 1.0}},
            ],
            "algorithm": "RANDOM_SEARCH",
        },
    }
    assert (
        req.body["trialJobSpec"]
        == to_vertex(job(jobDir="gs://bucket/hp"), region=REGION).body["jobSpec"]
    )
    back = round_trip(body, REGION)
    hp = back["trainingInput"]["hyperparameters"]
    assert hp["params"][1] == {
        "parameterName": "layers",
        "type": "INTEGER",
        "minValue": 1,
        "maxValue": 5,
        "scaleType": "UNIT_LINEAR_SCALE",
    }
    assert hp["maxTrials"] == 12 and hp["maxFailedTrials"] == 2
    assert parse_job({k: back[k] for k in ("jobId", "trainingInput")})


def _study(hp: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = to_vertex(job(hyperparameters=hp), region=REGION).body["studySpec"]
    return out


def _one_param(**p: Any) -> dict[str, Any]:
    return {"params": [{"parameterName": "x", "type": "DOUBLE", "minValue": 1, "maxValue": 2, **p}]}


@pytest.mark.parametrize(
    ("goal", "expected"),
    [
        (None, "MAXIMIZE"),
        ("GOAL_TYPE_UNSPECIFIED", "MAXIMIZE"),
        ("MAXIMIZE", "MAXIMIZE"),
        ("MINIMIZE", "MINIMIZE"),
    ],
)
def test_goals(goal: str | None, expected: str) -> None:
    hp = _one_param()
    if goal:
        hp["goal"] = goal
    assert _study(hp)["metrics"] == [{"metricId": "training/hptuning/metric", "goal": expected}]


ALGORITHMS = SCHEMAS["GoogleCloudAiplatformV1StudySpec"]["properties"]["algorithm"]["enum"]


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_every_vertex_algorithm_is_an_ml_v1_algorithm(algorithm: str) -> None:
    hp = {
        "algorithm": algorithm,
        "params": [{"parameterName": "x", "type": "INTEGER", "minValue": 1, "maxValue": 3}],
    }
    assert _study(hp)["algorithm"] == algorithm
    round_trip(job(hyperparameters=hp), REGION)


def test_no_algorithm_is_left_to_vertex() -> None:
    assert "algorithm" not in _study(_one_param())


SCALES = SCHEMAS["GoogleCloudAiplatformV1StudySpecParameterSpec"]["properties"]["scaleType"]["enum"]


@pytest.mark.parametrize(
    ("scale", "expected"),
    [
        (None, None),
        ("NONE", None),
        ("UNIT_LINEAR_SCALE", "UNIT_LINEAR_SCALE"),
        ("UNIT_LOG_SCALE", "UNIT_LOG_SCALE"),
        ("UNIT_REVERSE_LOG_SCALE", "UNIT_REVERSE_LOG_SCALE"),
    ],
)
def test_scale_types(scale: str | None, expected: str | None) -> None:
    hp = _one_param(scaleType=scale) if scale else _one_param()
    assert _study(hp)["parameters"][0].get("scaleType") == expected
    assert expected is None or expected in SCALES


def test_tuning_defaults_follow_gcloud() -> None:
    req = to_vertex(job(hyperparameters=_one_param()), region=REGION)
    assert req.body["maxTrialCount"] == 1 and req.body["parallelTrialCount"] == 1
    assert "maxFailedTrialCount" not in req.body


def test_single_replica_trials_are_told_where_they_write() -> None:
    """Vertex AI sets no TF_CONFIG on a one-replica trial, so the ml v1 idiom finds no trial
    id: the note says so, where each trial does write, and what to change."""
    body = job(hyperparameters=_one_param(), jobDir="gs://bucket/hp/")
    req = to_vertex(body, region=REGION)
    (note,) = req.notes
    assert note.field == "trainingInput.hyperparameters"
    for fact in (
        "TF_CONFIG only when a job has more than one",
        "--job-dir=gs://bucket/hp.",
        "AIP_MODEL_DIR=gs://bucket/hp/<trial id>/model/",
        "AIP_CHECKPOINT_DIR .../checkpoints/",
        "AIP_TENSORBOARD_LOG_DIR .../logs/",
        "CLUSTER_SPEC, set on every replica, has the trial id in task.trial",
        "read CLUSTER_SPEC where it read TF_CONFIG",
        "gs://bucket/hp/<trial id> as on ml v1",
    ):
        assert fact in note.description, fact
    assert vertex_notes(body["trainingInput"], region=REGION) == [note]
    # The directories the note names are those Vertex AI derives from what is sent.
    assert req.body["trialJobSpec"]["baseOutputDirectory"] == {"outputUriPrefix": "gs://bucket/hp/"}
    (no_dir,) = to_vertex(job(hyperparameters=_one_param()), region=REGION).notes
    assert "Set jobDir" in no_dir.description and "CLUSTER_SPEC" in no_dir.description


@pytest.mark.parametrize(
    "fields",
    [
        {"scaleTier": "STANDARD_1"},
        {
            "scaleTier": "CUSTOM",
            "masterType": "n1-standard-4",
            "workerType": "n1-standard-4",
            "workerCount": 1,
        },
        {
            "scaleTier": "CUSTOM",
            "masterType": "n1-standard-4",
            "evaluatorType": "n1-standard-4",
            "evaluatorCount": 1,
        },
    ],
)
def test_distributed_trials_keep_the_ml_v1_idiom(fields: dict[str, Any]) -> None:
    """Trials of more than one replica get TF_CONFIG with task.trial: nothing to say."""
    req = to_vertex(
        job(hyperparameters=_one_param(), jobDir="gs://bucket/hp", **fields), region=REGION
    )
    assert req.notes == ()


def test_a_tuning_jobs_detail_shows_the_trial_directory_note() -> None:
    body = job(hyperparameters=_one_param(), jobDir="gs://bucket/hp")
    resource = server_copy(to_vertex(body, region=REGION), REGION, state="JOB_STATE_RUNNING")
    out = from_vertex(resource, TUNING_JOBS)
    (note,) = out[VERTEX_FIELD]["notes"]
    assert note["field"] == "trainingInput.hyperparameters"
    assert "AIP_MODEL_DIR=gs://bucket/hp/<trial id>/model/" in note["description"]
    text = render_text(summarize(out, datetime(2026, 1, 2, 4, tzinfo=UTC)))
    vertex_section = text.split("\nVertex AI\n", 1)[1]
    assert "Notes:" in vertex_section
    assert "hyperparameters: Each trial runs on one machine" in vertex_section
    # A custom job, or a tuning job of several replicas, has nothing to note.
    custom_job = from_vertex(server_copy(to_vertex(job(), region=REGION), REGION), CUSTOM_JOBS)
    assert "notes" not in custom_job[VERTEX_FIELD]
    assert "Notes:" not in render_text(summarize(custom_job, datetime(2026, 1, 2, tzinfo=UTC)))


MEDIAN = SCHEMAS["GoogleCloudAiplatformV1StudySpecMedianAutomatedStoppingSpec"]


def test_early_stopping_is_the_median_rule_by_step() -> None:
    """The discovery document's median rule, compared by step as the local service does."""
    assert MEDIAN["properties"] == {
        "useElapsedDuration": {
            "description": MEDIAN["properties"]["useElapsedDuration"]["description"],
            "type": "boolean",
        }
    }
    assert "median" in MEDIAN["description"]
    study_properties = SCHEMAS["GoogleCloudAiplatformV1StudySpec"]["properties"]
    assert study_properties["medianAutomatedStoppingSpec"]["$ref"] == MEDIAN["id"]
    hp = {**_one_param(), "enableTrialEarlyStopping": True}
    body = job(hyperparameters=hp, jobDir="gs://bucket/hp")
    req = to_vertex(body, region=REGION)
    assert req.body["studySpec"]["medianAutomatedStoppingSpec"] == {"useElapsedDuration": False}
    assert not [f for f in note_fields(req) if "EarlyStopping" in f]
    back = round_trip(body, REGION)
    assert back["trainingInput"]["hyperparameters"]["enableTrialEarlyStopping"] is True
    for off in (False, None):
        hp["enableTrialEarlyStopping"] = off
        study = to_vertex(job(hyperparameters=hp), region=REGION).body["studySpec"]
        assert not [k for k in study if k.endswith("StoppingSpec")]
        back = round_trip(job(hyperparameters=hp), REGION)
        assert "enableTrialEarlyStopping" not in back["trainingInput"]["hyperparameters"]


def _read_back_study(**study: Any) -> dict[str, Any]:
    req = to_vertex(job(hyperparameters=_one_param(), jobDir="gs://bucket/hp"), region=REGION)
    resource = server_copy(req, REGION)
    resource["studySpec"].update(study)
    assert violations("aiplatform", "v1", SCHEMA_OF[TUNING_JOBS], resource) == []
    return from_vertex(resource, TUNING_JOBS)


@pytest.mark.parametrize(
    ("study", "note"),
    [
        # The server leaves a false boolean out, so the median rule may come back empty.
        ({"medianAutomatedStoppingSpec": {}}, None),
        ({"medianAutomatedStoppingSpec": {"useElapsedDuration": True}}, "elapsed time"),
        ({"decayCurveStoppingSpec": {}}, "decay-curve rule"),
        ({"convexAutomatedStoppingSpec": {"minStepCount": "10"}}, "convex rule"),
    ],
)
def test_any_stopping_rule_reads_back_as_early_stopping(
    study: dict[str, Any], note: str | None
) -> None:
    back = _read_back_study(**study)
    assert back["trainingInput"]["hyperparameters"]["enableTrialEarlyStopping"] is True
    stopping = [
        n
        for n in back[VERTEX_FIELD]["notes"]
        if n["field"] == "trainingInput.hyperparameters.enableTrialEarlyStopping"
    ]
    assert [note in n["description"] for n in stopping] == ([True] if note else [])


# -- refusals -----------------------------------------------------------------------------------

A = "trainingInput.masterConfig.acceleratorConfig"
REFUSALS = [
    pytest.param(
        custom(
            masterType="n1-standard-8",
            masterConfig={"acceleratorConfig": {"type": "NVIDIA_TESLA_K80", "count": "1"}},
        ),
        f"{A}.type",
        "NVIDIA_TESLA_T4",
        id="explicit-k80",
    ),
    *(
        pytest.param(
            custom(
                masterType="cloud_tpu",
                masterConfig={"acceleratorConfig": {"type": pod, "count": "32"}},
            ),
            f"{A}.type",
            "TPU VM",
            id=pod,
        )
        for pod in ("TPU_V2_POD", "TPU_V3_POD", "TPU_V4_POD")
    ),
    pytest.param(
        custom(
            masterType="cloud_tpu",
            masterConfig={"acceleratorConfig": {"type": "TPU_V3", "count": 4}},
        ),
        f"{A}.count",
        "count 8",
        id="tpu-cores",
    ),
    pytest.param(
        custom(
            masterType="cloud_tpu",
            masterConfig={"acceleratorConfig": {"type": "NVIDIA_TESLA_T4", "count": 8}},
        ),
        f"{A}.type",
        "TPU_V2",
        id="gpu-on-tpu",
    ),
    pytest.param(
        custom(
            masterType="n1-standard-8",
            masterConfig={"acceleratorConfig": {"type": "TPU_V2", "count": 1}},
        ),
        f"{A}.type",
        "NVIDIA_TESLA_T4",
        id="tpu-on-n1",
    ),
    pytest.param(
        custom(
            masterType="n1-standard-8",
            masterConfig={"acceleratorConfig": {"type": "NVIDIA_TESLA_T4", "count": "0"}},
        ),
        f"{A}.count",
        "1 or more",
        id="zero-gpus",
    ),
    pytest.param(
        custom(
            masterType="standard_gpu",
            masterConfig={"acceleratorConfig": {"type": "NVIDIA_TESLA_T4", "count": 1}},
        ),
        A,
        "n1-standard-8",
        id="accelerator-on-legacy",
    ),
    pytest.param(
        job(packageUris=["/opt/pkgs/trainer.tar.gz"]),
        "trainingInput.packageUris[0]",
        "gs://",
        id="local-pkg",
    ),
    pytest.param(
        job(packageUris=[PKG, "file:///opt/pkgs/dep.whl"]),
        "trainingInput.packageUris[1]",
        "gs://",
        id="file-pkg",
    ),
    pytest.param(
        job(packageUris=["gs://B/x.tgz"]), "trainingInput.packageUris[0]", "bucket", id="bad-bucket"
    ),
    pytest.param(job(packageUris=None), "trainingInput.packageUris", "imageUri", id="no-package"),
    pytest.param(job(pythonModule=None), "trainingInput.pythonModule", "imageUri", id="no-module"),
    pytest.param(job(jobDir="/tmp/out"), "trainingInput.jobDir", "gs://", id="local-job-dir"),
    pytest.param(
        job(runtimeVersion="1.14"), "trainingInput.runtimeVersion", "executor_image", id="tf1"
    ),
    pytest.param(
        job(runtimeVersion="2.10"), "trainingInput.runtimeVersion", "2.11-2.17", id="tf-2.10"
    ),
    pytest.param(
        job(runtimeVersion="1.15", pythonVersion="2.7"),
        "trainingInput.pythonVersion",
        "Python 3.7 only",
        id="python-2.7",
    ),
    pytest.param(
        job(scaleTier="BASIC_TPU"),
        "trainingInput.runtimeVersion",
        "TPU images for TensorFlow 2.12",
        id="no-tpu-image",
    ),
    pytest.param(
        job(scaleTier="BASIC_TPU", runtimeVersion="2.12", hyperparameters=_one_param()),
        "trainingInput.hyperparameters",
        "GPUs",
        id="tuning-on-tpu",
    ),
    pytest.param(
        job(runtimeVersion=None), "trainingInput.runtimeVersion", "executor_image", id="no-runtime"
    ),
    pytest.param(job(region="europe-west4"), "trainingInput.region", REGION, id="other-region"),
    pytest.param(
        job(hyperparameters={**_one_param(), "resumePreviousJobId": "old_1"}),
        "trainingInput.hyperparameters.resumePreviousJobId",
        "new one",
        id="resume-study",
    ),
    pytest.param(
        job(hyperparameters={**_one_param(), "hyperparameterMetricTag": "val loss"}),
        "trainingInput.hyperparameters.hyperparameterMetricTag",
        "whitespace",
        id="metric-space",
    ),
    pytest.param(
        job(
            hyperparameters={
                "params": [
                    {"parameterName": "x", "type": "INTEGER", "minValue": 0.5, "maxValue": 2}
                ]
            }
        ),
        "trainingInput.hyperparameters.params[0].minValue",
        "whole",
        id="fractional-integer",
    ),
    pytest.param(
        job(hyperparameters={"goal": "MAXIMIZE"}),
        "trainingInput.hyperparameters.params",
        "parameter",
        id="no-params",
    ),
    pytest.param(
        job(masterTyp="n1-standard-4"), "trainingInput.masterTyp", "Unknown field", id="typo"
    ),
    pytest.param(
        job(scheduling={"maxRunTime": "10s"}),
        "trainingInput.scheduling.maxRunTime",
        "Unknown field",
        id="nested-typo",
    ),
    pytest.param(
        custom(masterType="n1-standard-4", evaluatorType="cloud_tpu", evaluatorCount=1),
        "trainingInput.evaluatorType",
        "Cloud TPU",
        id="tpu-evaluator",
    ),
    pytest.param(
        custom(masterType="n1-standard-4", workerType="cloud_tpu", workerCount=2),
        "trainingInput.workerCount",
        "workerCount 1",
        id="two-tpus",
    ),
    pytest.param(
        custom(masterType="huge_model"),
        "trainingInput.masterType",
        "Unknown machine type",
        id="unknown-machine",
    ),
    pytest.param(custom(masterType=None), "trainingInput.masterType", "required", id="no-master"),
    pytest.param(
        custom(masterType="n1-standard-4", workerType="n1-standard-4", workerCount="two"),
        "trainingInput.workerCount",
        "whole number",
        id="bad-count",
    ),
    pytest.param(job(scaleTier="MEGA"), "trainingInput.scaleTier", "BASIC", id="unknown-tier"),
    pytest.param(
        job(scheduling={"maxRunningTime": "2h"}),
        "trainingInput.scheduling.maxRunningTime",
        "7200s",
        id="bad-timeout",
    ),
    pytest.param(
        job(
            packageUris=None,
            pythonModule=None,
            runtimeVersion=None,
            args=["--x"],
            masterConfig={"imageUri": "gcr.io/p/t", "containerArgs": ["--y"]},
        ),
        "trainingInput.args",
        "not both",
        id="args-and-container-args",
    ),
    pytest.param({**job(), "jobId": "x" * 129}, "jobId", "128", id="long-id"),
    pytest.param({"trainingInput": job()["trainingInput"]}, "jobId", "display name", id="no-id"),
    pytest.param({**job(), "labels": {"Team": "a"}}, "labels.Team", "lowercase", id="bad-label"),
    pytest.param(
        {**job(), "predictionInput": {"dataFormat": "JSON"}},
        "predictionInput",
        "trainingInput",
        id="prediction",
    ),
    pytest.param({"jobId": "j"}, "trainingInput", "trainingInput", id="no-training-input"),
]


@pytest.mark.parametrize(("body", "field", "hint"), REFUSALS)
def test_untranslatable_fields_are_refused_by_name(
    body: dict[str, Any], field: str, hint: str
) -> None:
    found = refusals(body)
    assert field in found, found
    assert hint in found[field]
    assert found[field].endswith("."), "each message is a sentence saying what would work"


def test_every_refusal_is_reported_at_once() -> None:
    body = job(
        packageUris=["/local/a.tar.gz", "gs://okay/b.tar.gz", "/local/c.tar.gz"],
        runtimeVersion="1.14",
        jobDir="/tmp/out",
        region="asia-east1",
        hyperparameters={**_one_param(), "resumePreviousJobId": "old"},
    )
    assert sorted(refusals(body)) == [
        "trainingInput.hyperparameters.resumePreviousJobId",
        "trainingInput.jobDir",
        "trainingInput.packageUris[0]",
        "trainingInput.packageUris[2]",
        "trainingInput.region",
        "trainingInput.runtimeVersion",
    ]


def test_translation_error_is_a_job_spec_error() -> None:
    with pytest.raises(JobSpecError) as err:
        to_vertex(job(jobDir="/tmp"), region=REGION)
    assert isinstance(err.value, TranslationError) and isinstance(err.value, ValueError)
    assert str(err.value).startswith("Field: trainingInput.jobDir Error: ")


def test_a_region_that_matches_or_is_unset_is_fine() -> None:
    assert to_vertex(job(region=None), region="europe-west4").body["displayName"] == "job_1"
    assert to_vertex(job(region="europe-west4"), region="europe-west4").notes == ()


# -- states -------------------------------------------------------------------------------------

JOB_STATES = SCHEMAS["GoogleCloudAiplatformV1CustomJob"]["properties"]["state"]["enum"]
EXPECTED_STATES = {
    "JOB_STATE_UNSPECIFIED": "STATE_UNSPECIFIED",
    "JOB_STATE_QUEUED": "QUEUED",
    "JOB_STATE_PENDING": "PREPARING",
    "JOB_STATE_RUNNING": "RUNNING",
    "JOB_STATE_SUCCEEDED": "SUCCEEDED",
    "JOB_STATE_FAILED": "FAILED",
    "JOB_STATE_CANCELLING": "CANCELLING",
    "JOB_STATE_CANCELLED": "CANCELLED",
    "JOB_STATE_PAUSED": "QUEUED",
    "JOB_STATE_EXPIRED": "FAILED",
    "JOB_STATE_UPDATING": "RUNNING",
    "JOB_STATE_PARTIALLY_SUCCEEDED": "FAILED",
}


@pytest.mark.parametrize("state", JOB_STATES)
def test_every_vertex_job_state_maps(state: str) -> None:
    assert state in EXPECTED_STATES, f"new Vertex AI state {state}: map it in vertex_translate"
    assert ml_state(state) == EXPECTED_STATES[state]


def test_tuning_jobs_share_the_state_enum() -> None:
    tuning = SCHEMAS["GoogleCloudAiplatformV1HyperparameterTuningJob"]["properties"]["state"]
    assert tuning["enum"] == JOB_STATES


@pytest.mark.parametrize("state", [None, "", "JOB_STATE_FROZEN", "RUNNING"])
def test_unknown_states_are_unspecified(state: str | None) -> None:
    assert ml_state(state) == "STATE_UNSPECIFIED"


def test_resource_id() -> None:
    assert resource_id("projects/123/locations/us-central1/customJobs/456") == "456"
    assert resource_id("projects/p/locations/r/hyperparameterTuningJobs/789/") == "789"
    assert resource_id("456") == "456"


# -- from_vertex --------------------------------------------------------------------------------


def test_from_vertex_custom_job_overview() -> None:
    req = to_vertex(job(jobDir="gs://bucket/out"), region=REGION)
    resource = server_copy(
        req,
        REGION,
        state="JOB_STATE_FAILED",
        startTime="2026-01-02T03:05:00Z",
        endTime="2026-01-02T03:09:00Z",
        error={"code": 3, "message": "The replica workerpool0-0 exited with a non-zero status."},
        labels={"team": "vision"},
        webAccessUris={"workerpool0-0": "https://abc.aiplatform-training.googleusercontent.com"},
    )
    out = from_vertex(resource, CUSTOM_JOBS)
    assert out["jobId"] == "job_1"
    assert out["state"] == "FAILED"
    assert out["createTime"] == "2026-01-02T03:04:05.123456Z"
    assert out["startTime"] == "2026-01-02T03:05:00Z"
    assert out["endTime"] == "2026-01-02T03:09:00Z"
    assert out["errorMessage"].startswith("The replica workerpool0-0")
    assert out["labels"] == {"team": "vision"}
    assert "trainingOutput" not in out
    assert out["trainingInput"] == {
        "scaleTier": "CUSTOM",
        "masterType": "n1-standard-4",
        "packageUris": [PKG],
        "pythonModule": "trainer.task",
        "region": REGION,
        "jobDir": "gs://bucket/out",
        "runtimeVersion": "2.11",
    }
    assert out[VERTEX_FIELD] == {
        "name": "projects/123456/locations/us-central1/customJobs/8765432109876543210",
        "id": "8765432109876543210",
        "collection": CUSTOM_JOBS,
        "state": "JOB_STATE_FAILED",
        "consoleUrl": "https://console.cloud.google.com/vertex-ai/training/custom-jobs/locations/"
        "us-central1/custom-jobs/8765432109876543210?project=123456",
        "webAccessUris": {"workerpool0-0": "https://abc.aiplatform-training.googleusercontent.com"},
    }
    assert from_vertex(resource, CUSTOM_JOBS, job_id="mine")["jobId"] == "mine"


def test_etag_is_stable_and_follows_changes() -> None:
    resource = server_copy(to_vertex(job(), region=REGION), REGION)
    etag = from_vertex(resource, CUSTOM_JOBS)["etag"]
    assert isinstance(etag, str) and etag
    assert from_vertex(copy.deepcopy(resource), CUSTOM_JOBS)["etag"] == etag
    for change in ({"state": "JOB_STATE_RUNNING"}, {"updateTime": "2026-01-02T03:05:00Z"}):
        assert from_vertex({**resource, **change}, CUSTOM_JOBS)["etag"] != etag


def test_from_vertex_reads_odd_resources_without_raising() -> None:
    out = from_vertex({}, CUSTOM_JOBS)
    assert out["state"] == "STATE_UNSPECIFIED"
    assert out["trainingInput"] == {"scaleTier": "CUSTOM"}
    odd = {"name": 5, "jobSpec": {"workerPoolSpecs": [{"machineSpec": "x"}, 3]}, "trials": "?"}
    assert from_vertex(odd, TUNING_JOBS)["trainingOutput"]["completedTrialCount"] == "0"


def test_foreign_machines_and_images_are_kept() -> None:
    """A job made outside this app (an L4 on g2, a PyTorch image) still shows and resubmits."""
    resource = {
        "name": "projects/p/locations/us-east1/customJobs/1",
        "displayName": "foreign",
        "state": "JOB_STATE_SUCCEEDED",
        "jobSpec": {
            "workerPoolSpecs": [
                {
                    "machineSpec": {
                        "machineType": "g2-standard-8",
                        "acceleratorType": "NVIDIA_L4",
                        "acceleratorCount": 1,
                    },
                    "replicaCount": "1",
                    "pythonPackageSpec": {
                        "executorImageUri": PYTORCH,
                        "packageUris": [PKG],
                        "pythonModule": "t.m",
                    },
                }
            ]
        },
    }
    out = from_vertex(resource, CUSTOM_JOBS)
    ti = out["trainingInput"]
    assert ti["masterType"] == "g2-standard-8"
    assert ti["masterConfig"] == {"acceleratorConfig": {"count": "1", "type": "NVIDIA_L4"}}
    assert out[VERTEX_FIELD]["executorImageUri"] == PYTORCH
    assert "runtimeVersion" not in ti


def test_tier_hosts_come_back_as_legacy_names_ml_v1_accepts() -> None:
    back = round_trip(job(scaleTier="STANDARD_1"), REGION)
    ti = back["trainingInput"]
    assert (ti["masterType"], ti["workerType"], ti["parameterServerType"]) == (
        "complex_model_s",
        "complex_model_s",
        "standard",
    )
    assert (ti["workerCount"], ti["parameterServerCount"]) == ("4", "3")
    assert parse_job({k: back[k] for k in ("jobId", "trainingInput")})


def test_retired_gpus_come_back_as_their_legacy_type_beside_legacy_hosts() -> None:
    """n1-highcpu-8 has only a legacy name in ml v1, so the K80 worker (now a T4) is named by
    its legacy type too; translated again it is the same T4 pool."""
    body = custom(masterType="complex_model_s", workerType="complex_model_l_gpu", workerCount=2)
    back = round_trip(body, REGION)
    ti = back["trainingInput"]
    assert (ti["masterType"], ti["workerType"]) == ("complex_model_s", "complex_model_l_gpu")
    assert parse_job({k: back[k] for k in ("jobId", "trainingInput")})


TRIAL_STATES = SCHEMAS["GoogleCloudAiplatformV1Trial"]["properties"]["state"]["enum"]
EXPECTED_TRIAL_STATES = {
    "STATE_UNSPECIFIED": "STATE_UNSPECIFIED",
    "REQUESTED": "QUEUED",
    "ACTIVE": "RUNNING",
    "STOPPING": "CANCELLING",
    "SUCCEEDED": "SUCCEEDED",
    "INFEASIBLE": "FAILED",
}


def _tuning_resource(trials: list[dict[str, Any]]) -> dict[str, Any]:
    hp = {
        "hyperparameterMetricTag": "accuracy",
        "maxTrials": 6,
        "maxParallelTrials": 2,
        "params": [
            {"parameterName": "layers", "type": "INTEGER", "minValue": 1, "maxValue": 4},
            {"parameterName": "lr", "type": "DOUBLE", "minValue": 0.001, "maxValue": 0.1},
            {"parameterName": "opt", "type": "CATEGORICAL", "categoricalValues": ["adam", "sgd"]},
        ],
    }
    req = to_vertex(job(hyperparameters=hp), region=REGION)
    return server_copy(req, REGION, state="JOB_STATE_RUNNING", trials=trials)


def _trial(i: int, state: str, **extra: Any) -> dict[str, Any]:
    return {
        "id": str(i),
        "state": state,
        "parameters": [
            {"parameterId": "layers", "value": float(i)},
            {"parameterId": "lr", "value": 0.01 * i},
            {"parameterId": "opt", "value": "adam"},
        ],
        "startTime": "2026-01-02T03:05:00Z",
        **extra,
    }


@pytest.mark.parametrize("state", TRIAL_STATES)
def test_every_trial_state_maps(state: str) -> None:
    assert state in EXPECTED_TRIAL_STATES, f"new trial state {state}: map it in vertex_translate"
    out = from_vertex(_tuning_resource([_trial(1, state)]), TUNING_JOBS)
    assert out["trainingOutput"]["trials"][0]["state"] == EXPECTED_TRIAL_STATES[state]


def test_tuning_job_trials_in_ml_v1_shape() -> None:
    final = {"stepCount": "200", "metrics": [{"metricId": "accuracy", "value": 0.93}]}
    trials = [
        _trial(1, "SUCCEEDED", finalMeasurement=final, endTime="2026-01-02T03:15:00Z"),
        _trial(
            2,
            "ACTIVE",
            measurements=[
                {"stepCount": "50", "metrics": [{"metricId": "accuracy", "value": 0.4}]},
                {"stepCount": "100", "metrics": [{"metricId": "accuracy", "value": 0.6}]},
            ],
        ),
        _trial(3, "INFEASIBLE", infeasibleReason="no metric", endTime="2026-01-02T03:07:00Z"),
        _trial(
            4,
            "SUCCEEDED",
            finalMeasurement={
                "stepCount": "200",
                "metrics": [{"metricId": "accuracy", "value": 0.95}],
            },
        ),
    ]
    resource = _tuning_resource(trials)
    assert violations("aiplatform", "v1", SCHEMA_OF[TUNING_JOBS], resource) == []
    out = from_vertex(resource, TUNING_JOBS)
    output = out["trainingOutput"]
    assert output["isHyperparameterTuningJob"] is True
    assert output["hyperparameterMetricTag"] == "accuracy"
    assert output["completedTrialCount"] == "2"
    assert output["trials"][0] == {
        "trialId": "1",
        "hyperparameters": {"layers": "1", "lr": "0.01", "opt": "adam"},
        "startTime": "2026-01-02T03:05:00Z",
        "endTime": "2026-01-02T03:15:00Z",
        "state": "SUCCEEDED",
        "finalMetric": {"trainingStep": "200", "objectiveValue": 0.93},
    }
    assert output["trials"][1]["allMetrics"] == [
        {"trainingStep": "50", "objectiveValue": 0.4},
        {"trainingStep": "100", "objectiveValue": 0.6},
    ]
    assert output["trials"][2]["state"] == "FAILED"
    # The trials table the TUI already has reads it: best first, the running one provisional.
    rows = trial_rows(out, datetime(2026, 1, 2, 4, tzinfo=UTC))
    assert [(r.trial_id, r.objective, r.best) for r in rows[:3]] == [
        ("4", 0.95, True),
        ("1", 0.93, False),
        ("2", 0.6, False),
    ]
    assert rows[0].hyperparameters == "layers=4, lr=0.04, opt=adam"
    assert out["trainingInput"]["hyperparameters"]["goal"] == "MAXIMIZE"
    assert out[VERTEX_FIELD]["consoleUrl"].startswith(
        "https://console.cloud.google.com/vertex-ai/training/hyperparameter-tuning-jobs/"
    )


# -- round trip over the corpus and any valid job -----------------------------------------------

# Corpus files that cannot run on Vertex AI as written, and why (the fields refused).
CORPUS_REFUSALS = {
    "basic_tpu.yaml": {"trainingInput.runtimeVersion"},  # 2.8: no TPU image on Google's list
    "custom_tpu.yaml": {"trainingInput.runtimeVersion"},  # 2.5, likewise
    "default_tier.yaml": {"trainingInput.runtimeVersion"},  # unset
    "hp_bayesian.yaml": {"trainingInput.runtimeVersion"},
    "hp_grid.yaml": {"trainingInput.runtimeVersion"},
    "hp_random.yaml": {
        "trainingInput.runtimeVersion",
        "trainingInput.hyperparameters.resumePreviousJobId",
    },
    "premium_1.yaml": {"trainingInput.runtimeVersion"},  # 1.10
    "standard_1.yaml": {"trainingInput.runtimeVersion"},  # 1.14
}


def _region(body: dict[str, Any]) -> str:
    return str(body["trainingInput"].get("region") or REGION)


@pytest.mark.parametrize("path", VALID, ids=lambda p: p.name)
def test_corpus_translates_or_is_refused_as_expected(path: Path) -> None:
    body = load_corpus_file(path)
    expected = CORPUS_REFUSALS.get(path.name, set())
    if expected:
        assert set(refusals(body, region=_region(body))) == expected
        return
    req = to_vertex(body, region=_region(body))
    assert vertex_notes(body["trainingInput"], region=_region(body)) == list(req.notes)


@pytest.mark.parametrize("path", VALID, ids=lambda p: p.name)
def test_corpus_round_trips(path: Path) -> None:
    body = load_corpus_file(path)
    body["trainingInput"].get("hyperparameters", {}).pop("resumePreviousJobId", None)
    image = PYTORCH if path.name in CORPUS_REFUSALS else None
    back = round_trip(body, _region(body), image)
    # What comes back is a config ml v1 (and so the builder and the editor) accepts.
    assert parse_job({k: back[k] for k in ("jobId", "labels", "trainingInput") if k in back})


# Refusals any valid ml v1 job may meet on Vertex AI: local files, runtimes or Pythons without an
# image, Pods, resumes, tuning on TPUs.
EXPECTED_REFUSAL = re.compile(
    r"^trainingInput\.("
    r"runtimeVersion|pythonVersion|packageUris\[\d+\]|jobDir"
    r"|hyperparameters(\.resumePreviousJobId)?"
    r"|\w+Config\.acceleratorConfig\.type|workerCount"
    r")$"
)


@SETTINGS
@given(body=valid_jobs(), image=st.sampled_from([None, PYTORCH]))
def test_any_valid_job_round_trips_or_is_refused_for_a_known_reason(
    body: dict[str, Any], image: str | None
) -> None:
    region = _region(body)
    try:
        req = to_vertex(body, region=region, executor_image=image)
    except TranslationError as err:
        unexpected = [v for v in err.violations if not EXPECTED_REFUSAL.match(v.field)]
        assert not unexpected, unexpected
        return
    assert violations("aiplatform", "v1", SCHEMA_OF[req.collection], req.body, request=True) == []
    back = round_trip(body, region, image)
    assert parse_job({k: back[k] for k in ("jobId", "labels", "trainingInput") if k in back})


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=10,
)
TI_KEYS = st.sampled_from(
    [
        "scaleTier",
        "masterType",
        "workerType",
        "workerCount",
        "masterConfig",
        "workerConfig",
        "args",
        "packageUris",
        "hyperparameters",
        "scheduling",
        "jobDir",
        "runtimeVersion",
        "region",
    ]
)


@SETTINGS
@given(ti=st.dictionaries(TI_KEYS, JSON, max_size=6))
def test_vertex_notes_never_raises(ti: dict[str, Any]) -> None:
    assert isinstance(vertex_notes(ti, region=REGION), list)
    try:
        to_vertex({"jobId": "j", "trainingInput": ti}, region=REGION)
    except TranslationError as err:
        assert err.violations


def _as_the_refusals_advise(body: dict[str, Any]) -> tuple[dict[str, Any], str | None]:
    """A valid job with each refused field changed the way its message says: packages and job
    dir in Cloud Storage, T4 for K80, a TPU VM for a Pod, one TPU worker, no resumed study, no
    tuning on a TPU, and the profile's executor_image for a runtime without an image."""
    out = copy.deepcopy(body)
    ti = out["trainingInput"]
    if "packageUris" in ti:
        ti["packageUris"] = [
            u if u.startswith("gs://") else f"gs://bucket/pkg{i}.tar.gz"
            for i, u in enumerate(ti["packageUris"])
        ]
    if "jobDir" in ti and not ti["jobDir"].startswith("gs://"):
        ti["jobDir"] = "gs://bucket/out"
    ti.get("hyperparameters", {}).pop("resumePreviousJobId", None)
    for role in ("master", "worker", "parameterServer", "evaluator"):
        acc = ti.get(f"{role}Config", {}).get("acceleratorConfig", {})
        if acc.get("type") == "NVIDIA_TESLA_K80":
            acc["type"] = "NVIDIA_TESLA_T4"
        elif str(acc.get("type")).endswith("_POD"):
            acc["type"] = "TPU_V3"
    if ti.get("workerType") == "cloud_tpu" and int(ti.get("workerCount") or 0) > 1:
        ti["workerCount"] = "1"
    try:
        to_vertex(out, region=_region(out))
    except TranslationError as err:
        fields = {v.field for v in err.violations}
        if "trainingInput.hyperparameters" in fields:
            del ti["hyperparameters"]
        if fields & {"trainingInput.runtimeVersion", "trainingInput.pythonVersion"}:
            return out, PYTORCH
    return out, None


@SETTINGS
@given(body=valid_jobs())
def test_any_valid_job_round_trips_once_its_refusals_are_fixed(body: dict[str, Any]) -> None:
    fixed, image = _as_the_refusals_advise(body)
    region = _region(fixed)
    req = to_vertex(fixed, region=region, executor_image=image)
    assert violations("aiplatform", "v1", SCHEMA_OF[req.collection], req.body, request=True) == []
    back = round_trip(fixed, region, image)
    assert parse_job({k: back[k] for k in ("jobId", "labels", "trainingInput") if k in back})
