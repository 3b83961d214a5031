"""Every request body ``to_vertex`` makes, built with googleapiclient exactly as the product
builds it, is one the aiplatform v1 discovery schema accepts.

The client is built from the discovery document that ships in the wheel (``static_discovery``)
with the regional endpoint, and ``HttpMock`` stands in for the network: nothing is sent, but the
URI, method and serialised body are the ones a real create would carry. The body is then checked
field by field (``tests/support/discovery_schema.py``, whose own tests show it catches unknown
fields, int64/int32 mix-ups, enums, durations and output-only fields), plus the rules the schema
cannot state: one code spec per pool, the display name limit, label rules, and that every
executor image the translator chose is on Google's list of prebuilt training containers for the
pool's kind of machine (``vertex_images.TF_IMAGES``).

The corpus: every scale tier, every legacy machine type, Compute Engine machines with each GPU
(and several GPUs, on workers, parameter servers and evaluators), TPU VMs, containers per role,
evaluators after skipped pools, every field that carries over, every runtime and Python on the
list, and tuning with each parameter type and scale, each algorithm, early stopping on and off.
"""

from __future__ import annotations

import copy
import json
import re
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from googleapiclient import discovery
from googleapiclient.http import HttpMock
from hypothesis import given

from tests.support.config_corpus import SETTINGS, VALID, load_corpus_file, valid_jobs
from tests.support.discovery_schema import discovery_document, method, violations
from tui_app.model.jobs.tiers import ACCELERATORS, MACHINE_TYPES
from tui_app.model.vertex.translate import (
    CUSTOM_JOBS,
    TUNING_JOBS,
    TranslationError,
    VertexRequest,
    to_vertex,
)
from tui_app.model.vertex.vertex_images import TF_IMAGES, image_of_uri

PROJECT = "my-project"
PKG = "gs://bucket/packages/trainer-0.1.tar.gz"
IMAGE = "us-docker.pkg.dev/vertex-ai/training/pytorch-gpu.2-1.py310:latest"
TPU_IMAGE = "us-docker.pkg.dev/vertex-ai/training/tf-tpu.2-12:latest"
METHODS = {
    CUSTOM_JOBS: "aiplatform.projects.locations.customJobs.create",
    TUNING_JOBS: "aiplatform.projects.locations.hyperparameterTuningJobs.create",
}
# Vertex AI's label rules (CustomJob.labels): at most 64 labels, keys and values of at most 64
# characters, lowercase letters, digits, '_' and '-', keys starting with a letter.
LABEL_KEY = re.compile(r"^[a-z][a-z0-9_-]{0,63}$")
LABEL_VALUE = re.compile(r"^[a-z0-9_-]{0,64}$")


@cache
def service(region: str) -> Any:
    """The aiplatform client as the product builds it, on the region's own host."""
    return discovery.build(
        "aiplatform",
        "v1",
        http=HttpMock(),
        static_discovery=True,
        cache_discovery=False,
        client_options={"api_endpoint": f"https://{region}-aiplatform.googleapis.com"},
    )


def built_request(req: VertexRequest, region: str) -> Any:
    locations = service(region).projects().locations()
    collection = (
        locations.customJobs()
        if req.collection == CUSTOM_JOBS
        else locations.hyperparameterTuningJobs()
    )
    return collection.create(parent=f"projects/{PROJECT}/locations/{region}", body=req.body)


def check(req: VertexRequest, region: str, image: str | None = None) -> dict[str, Any]:
    """Everything a create request must satisfy; returns the body as it went on the wire.

    ``image`` is the profile's executor_image, when the request was made with one.
    """
    http_request = built_request(req, region)
    m = method("aiplatform", "v1", METHODS[req.collection])
    assert http_request.method == m["httpMethod"] == "POST"
    assert http_request.uri == (
        f"https://{region}-aiplatform.googleapis.com/v1/projects/{PROJECT}/locations/{region}/"
        f"{req.collection}?alt=json"
    )
    sent = json.loads(http_request.body)
    assert sent == req.body
    assert violations("aiplatform", "v1", m["request"]["$ref"], sent, request=True) == []
    assert 1 <= len(sent["displayName"]) <= 128
    labels = sent.get("labels", {})
    assert len(labels) <= 64
    assert all(LABEL_KEY.match(k) and LABEL_VALUE.match(v) for k, v in labels.items()), labels
    spec = sent["trialJobSpec" if req.collection == TUNING_JOBS else "jobSpec"]
    pools = spec["workerPoolSpecs"]
    assert pools and pools[0], "the primary pool is always used"
    assert pools[-1], "trailing skipped pools are left out"
    assert len(pools) <= 4
    assert pools[0]["replicaCount"] == "1"
    for pool in pools:
        if pool:
            assert ("pythonPackageSpec" in pool) != ("containerSpec" in pool), pool
            assert int(pool["replicaCount"]) >= 1
            python = pool.get("pythonPackageSpec")
            if python:
                assert python["executorImageUri"] and python["pythonModule"]
                assert python["packageUris"] and all(
                    u.startswith("gs://") for u in python["packageUris"]
                )
                if python["executorImageUri"] != image:
                    assert_listed_image(python["executorImageUri"], pool["machineSpec"], region)
    if req.collection == TUNING_JOBS:
        assert sent["studySpec"]["metrics"] and sent["studySpec"]["parameters"]
        assert sent["maxTrialCount"] >= 1 and sent["parallelTrialCount"] >= 1
    return dict(sent)


def assert_listed_image(uri: str, machine: dict[str, Any], region: str) -> None:
    """The translator's own choice is an image Google lists, for this kind of machine, in the
    registry nearest the region."""
    listed = image_of_uri(uri)
    assert listed is not None, f"{uri} is not on Google's list of prebuilt training containers"
    accelerator = ACCELERATORS.get(machine.get("acceleratorType", ""))
    kind = (
        "tpu"
        if machine["machineType"] == "cloud-tpu"
        else "gpu"
        if accelerator is not None and not accelerator.is_tpu
        else "cpu"
    )
    assert listed.kind == kind, (uri, machine)
    assert uri == listed.uri(region)


def job(**ti: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "scaleTier": "BASIC",
        "region": "us-central1",
        "packageUris": [PKG],
        "pythonModule": "trainer.task",
        "runtimeVersion": "2.11",
    }
    base.update(ti)
    return {"jobId": "job_1", "trainingInput": {k: v for k, v in base.items() if v is not None}}


def container(**ti: Any) -> dict[str, Any]:
    return job(packageUris=None, pythonModule=None, runtimeVersion=None, **ti)


HP = {
    "goal": "MINIMIZE",
    "hyperparameterMetricTag": "loss",
    "maxTrials": 10,
    "maxParallelTrials": 2,
    "maxFailedTrials": 3,
    "algorithm": "GRID_SEARCH",
    "enableTrialEarlyStopping": True,
    "params": [
        {
            "parameterName": "layers",
            "type": "INTEGER",
            "minValue": -3,
            "maxValue": 5,
            "scaleType": "UNIT_LINEAR_SCALE",
        },
        {
            "parameterName": "opt",
            "type": "CATEGORICAL",
            "categoricalValues": ["adam", "sgd"],
            "scaleType": "NONE",
        },
        {
            "parameterName": "bs",
            "type": "DISCRETE",
            "discreteValues": [16, 32.5],
            "scaleType": "UNIT_LOG_SCALE",
        },
    ],
}
PARAMETER: dict[str, dict[str, Any]] = {
    "DOUBLE": {"parameterName": "lr", "type": "DOUBLE", "minValue": 1e-4, "maxValue": 0.5},
    "INTEGER": {"parameterName": "units", "type": "INTEGER", "minValue": 8, "maxValue": 512},
    "CATEGORICAL": {
        "parameterName": "act",
        "type": "CATEGORICAL",
        "categoricalValues": ["relu", "gelu", "tanh"],
    },
    "DISCRETE": {"parameterName": "bs", "type": "DISCRETE", "discreteValues": [16, 64, 256]},
}
HP_DOUBLE = {
    "params": [
        {
            "parameterName": "lr",
            "type": "DOUBLE",
            "minValue": 1e-5,
            "maxValue": 1,
            "scaleType": "UNIT_REVERSE_LOG_SCALE",
        }
    ]
}

CASES: dict[str, dict[str, Any]] = {
    **{
        f"tier-{t}": job(scaleTier=t)
        for t in ("BASIC", "STANDARD_1", "PREMIUM_1", "BASIC_GPU", "BASIC_TPU")
    },
    **{
        f"legacy-{m}": job(scaleTier="CUSTOM", masterType=m)
        for m in (
            "standard",
            "large_model",
            "complex_model_s",
            "complex_model_m",
            "complex_model_l",
            "standard_gpu",
            "complex_model_m_gpu",
            "complex_model_l_gpu",
            "standard_p100",
            "complex_model_m_p100",
            "standard_v100",
            "large_model_v100",
            "complex_model_m_v100",
            "complex_model_l_v100",
            "cloud_tpu",
        )
    },
    **{
        f"gpu-{kind}": job(
            scaleTier="CUSTOM",
            masterType="a2-highgpu-1g" if kind == "A100" else "n1-standard-8",
            masterConfig={"acceleratorConfig": {"type": f"NVIDIA_TESLA_{kind}", "count": "1"}},
        )
        for kind in ("T4", "V100", "P100", "P4", "A100")
    },
    "a2-built-in": job(scaleTier="CUSTOM", masterType="a2-highgpu-8g"),
    "tpu-worker": job(
        scaleTier="CUSTOM",
        masterType="n1-highcpu-16",
        workerType="cloud_tpu",
        workerCount=1,
        workerConfig={"acceleratorConfig": {"type": "TPU_V3", "count": 8}, "tpuTfVersion": "2.11"},
    ),
    "evaluator-gap": job(
        scaleTier="CUSTOM",
        masterType="n1-standard-8",
        masterConfig={"diskConfig": {"bootDiskType": "pd-standard", "bootDiskSizeGb": 250}},
        evaluatorType="n1-highmem-4",
        evaluatorCount="2",
    ),
    "containers": container(
        scaleTier="CUSTOM",
        masterType="n1-standard-8",
        masterConfig={
            "imageUri": "gcr.io/p/t:1",
            "containerCommand": ["python", "-m", "t"],
            "containerArgs": ["--a"],
        },
        workerType="n1-standard-8",
        workerCount=3,
        parameterServerType="n1-highmem-8",
        parameterServerCount=1,
        parameterServerConfig={"imageUri": "gcr.io/p/ps:1"},
        useChiefInTfConfig=True,
        jobDir="gs://bucket/jobs/c",
    ),
    "container-args": container(masterConfig={"imageUri": "gcr.io/p/t:1"}, args=["--x", "1"]),
    "everything": {
        **job(
            args=["--epochs", "3"],
            jobDir="gs://bucket/out",
            pythonVersion="3.7",
            scheduling={"maxRunningTime": "86400.5s", "maxWaitTime": "7200s", "priority": 9},
            serviceAccount="sa@p.iam.gserviceaccount.com",
            network="projects/1/global/networks/n",
            enableWebAccess=True,
            encryptionConfig={
                "kmsKeyName": "projects/p/locations/us-central1/keyRings/r/cryptoKeys/k"
            },
        ),
        "labels": {"team": "ml", "cost-center": "r_and_d", "empty": ""},
    },
    "long-id": {**job(), "jobId": "a" * 128},
    "hp-grid": job(hyperparameters=HP, jobDir="gs://bucket/hp"),
    "hp-double": {
        **job(
            scaleTier="STANDARD_1",
            hyperparameters=HP_DOUBLE,
            encryptionConfig={
                "kmsKeyName": "projects/p/locations/us-central1/keyRings/r/cryptoKeys/k"
            },
        ),
        "labels": {"kind": "hp"},
    },
    "hp-container": container(masterConfig={"imageUri": "gcr.io/p/t:1"}, hyperparameters=HP_DOUBLE),
    # -- added for issue 19: the rest of the cluster shapes, runtimes and tuning specs --------
    "gpus-on-every-role": job(
        scaleTier="CUSTOM",
        masterType="n1-standard-16",
        masterConfig={"acceleratorConfig": {"type": "NVIDIA_TESLA_T4", "count": "4"}},
        workerType="n1-standard-8",
        workerCount="3",
        workerConfig={"acceleratorConfig": {"type": "NVIDIA_TESLA_V100", "count": "2"}},
        parameterServerType="n1-highmem-8",
        parameterServerCount="2",
        evaluatorType="n1-standard-8",
        evaluatorCount="1",
        evaluatorConfig={
            "acceleratorConfig": {"type": "NVIDIA_TESLA_P100", "count": "1"},
            "diskConfig": {"bootDiskType": "pd-ssd", "bootDiskSizeGb": 500},
        },
    ),
    "a100-x8": job(
        scaleTier="CUSTOM",
        masterType="a2-highgpu-8g",
        masterConfig={"acceleratorConfig": {"type": "NVIDIA_TESLA_A100", "count": "8"}},
    ),
    "legacy-cluster": job(
        scaleTier="CUSTOM",
        masterType="complex_model_m_gpu",
        workerType="complex_model_l_v100",
        workerCount=2,
        parameterServerType="large_model",
        parameterServerCount=2,
        evaluatorType="standard_p100",
        evaluatorCount=1,
    ),
    "evaluator-after-workers": job(
        scaleTier="CUSTOM",
        masterType="complex_model_s",
        workerType="complex_model_s",
        workerCount=4,
        evaluatorType="standard",
        evaluatorCount=1,
    ),
    "containers-per-role": container(
        scaleTier="CUSTOM",
        masterType="n1-standard-8",
        masterConfig={
            "imageUri": "us-docker.pkg.dev/p/r/chief:1",
            "containerCommand": ["python3", "-m", "trainer.chief"],
            "containerArgs": ["--steps", "100"],
        },
        workerType="n1-standard-8",
        workerCount=2,
        workerConfig={
            "imageUri": "us-docker.pkg.dev/p/r/worker:1",
            "acceleratorConfig": {"type": "NVIDIA_TESLA_T4", "count": "1"},
        },
        parameterServerType="n1-highmem-4",
        parameterServerCount=1,
        evaluatorType="n1-standard-4",
        evaluatorCount=1,
        evaluatorConfig={"imageUri": "us-docker.pkg.dev/p/r/eval:1", "containerArgs": ["--eval"]},
        jobDir="gs://bucket/jobs/roles",
    ),
    "python-3.7": job(pythonVersion="3.7", scaleTier="BASIC_GPU"),
    "runtime-1.15": job(runtimeVersion="1.15", pythonVersion="3.7"),
    **{
        f"hp-{algorithm}": job(
            hyperparameters={**HP, "algorithm": algorithm, "enableTrialEarlyStopping": False}
        )
        for algorithm in ("ALGORITHM_UNSPECIFIED", "GRID_SEARCH", "RANDOM_SEARCH")
    },
    "hp-no-algorithm": job(hyperparameters={"params": HP["params"]}),
    **{
        f"hp-{kind.lower()}-{scale or 'unset'}": job(
            hyperparameters={
                "goal": "MAXIMIZE",
                "maxTrials": 3,
                "maxFailedTrials": 0,
                "params": [{**PARAMETER[kind], **({"scaleType": scale} if scale else {})}],
            }
        )
        for kind in ("DOUBLE", "INTEGER", "CATEGORICAL", "DISCRETE")
        for scale in (None, "NONE", "UNIT_LINEAR_SCALE", "UNIT_LOG_SCALE", "UNIT_REVERSE_LOG_SCALE")
    },
    "hp-early-stopping-on": job(hyperparameters={**HP_DOUBLE, "enableTrialEarlyStopping": True}),
    "hp-early-stopping-off": job(hyperparameters={**HP_DOUBLE, "enableTrialEarlyStopping": False}),
    "hp-distributed-early-stopping": job(
        scaleTier="PREMIUM_1",
        jobDir="gs://bucket/hp",
        hyperparameters={**HP, "enableTrialEarlyStopping": True},
    ),
    "hp-gpu-python-3.7": job(
        scaleTier="BASIC_GPU",
        pythonVersion="3.7",
        jobDir="gs://bucket/hp",
        hyperparameters={**HP, "enableTrialEarlyStopping": True},
    ),
}
"""ml v1 jobs and the request each makes; those in ``PROFILE_IMAGES`` run on that image."""

PROFILE_IMAGES = {name: TPU_IMAGE for name in ("tier-BASIC_TPU", "legacy-cloud_tpu", "tpu-worker")}
"""No ml v1 runtime has a TPU image on Google's list: a TPU job runs on the profile's image."""


@pytest.mark.parametrize("name", sorted(CASES))
def test_table_requests_are_valid(name: str) -> None:
    body = CASES[name]
    region = body["trainingInput"]["region"]
    image = PROFILE_IMAGES.get(name)
    req = to_vertex(body, region=region, executor_image=image)
    sent = check(req, region, image)
    assert req.collection == (
        TUNING_JOBS if "hyperparameters" in body["trainingInput"] else CUSTOM_JOBS
    )
    assert sent["displayName"] == body["jobId"]
    hp = body["trainingInput"].get("hyperparameters", {})
    stopping = [k for k in sent.get("studySpec", {}) if k.endswith("StoppingSpec")]
    assert stopping == (
        ["medianAutomatedStoppingSpec"] if hp.get("enableTrialEarlyStopping") else []
    )


def test_the_corpus_covers_every_tier_legacy_type_algorithm_and_parameter_type() -> None:
    """The table above is the corpus the issue asks for; this keeps it from losing a case."""
    doc = discovery_document("aiplatform", "v1")["schemas"]
    study = doc["GoogleCloudAiplatformV1StudySpec"]["properties"]
    inputs = [c["trainingInput"] for c in CASES.values()]
    assert {ti.get("scaleTier") for ti in inputs} >= {
        "BASIC",
        "STANDARD_1",
        "PREMIUM_1",
        "BASIC_GPU",
        "BASIC_TPU",
        "CUSTOM",
    }
    types = {
        ti.get(f"{r}Type")
        for ti in inputs
        for r in ("master", "worker", "parameterServer", "evaluator")
    }
    assert types >= {m for m in MACHINE_TYPES if MACHINE_TYPES[m].legacy}
    hps = [ti["hyperparameters"] for ti in inputs if "hyperparameters" in ti]
    assert {hp.get("algorithm", "ALGORITHM_UNSPECIFIED") for hp in hps} == set(
        study["algorithm"]["enum"]
    )
    assert {p["type"] for hp in hps for p in hp["params"]} == set(PARAMETER)
    assert {p.get("scaleType") for hp in hps for p in hp["params"]} >= {
        None,
        "NONE",
        "UNIT_LINEAR_SCALE",
        "UNIT_LOG_SCALE",
        "UNIT_REVERSE_LOG_SCALE",
    }
    assert {hp.get("enableTrialEarlyStopping") for hp in hps} >= {True, False, None}
    gpus = {
        ti.get(f"{r}Config", {}).get("acceleratorConfig", {}).get("type")
        for ti in inputs
        for r in ("master", "worker", "parameterServer", "evaluator")
    }
    assert gpus >= {a.name for a in ACCELERATORS.values() if not a.is_tpu} - {"NVIDIA_TESLA_K80"}
    assert any(ti.get("evaluatorConfig", {}).get("imageUri") for ti in inputs)


@pytest.mark.parametrize("image", TF_IMAGES, ids=lambda i: i.tag)
def test_every_listed_image_is_reached_by_its_runtime_and_python(image: Any) -> None:
    """Each row of Google's list, asked for by its TensorFlow and Python on its kind of machine,
    makes a valid request that runs on exactly that image."""
    tier = {"cpu": "BASIC", "gpu": "BASIC_GPU", "tpu": "BASIC_TPU"}[image.kind]
    body = job(
        scaleTier=tier,
        region="europe-west4",
        runtimeVersion=image.tensorflow,
        pythonVersion=image.python,
    )
    sent = check(to_vertex(body, region="europe-west4"), "europe-west4")
    (pool,) = sent["jobSpec"]["workerPoolSpecs"]
    assert pool["pythonPackageSpec"]["executorImageUri"] == image.uri("europe-west4")


def test_the_check_sees_inside_the_stopping_spec() -> None:
    req = to_vertex(CASES["hp-early-stopping-on"], region="us-central1")
    check(req, "us-central1")
    for bad in ({"useElapsedDuration": "no"}, {"useElapsedTime": False}):
        broken = copy.deepcopy(req.body)
        broken["studySpec"]["medianAutomatedStoppingSpec"] = bad
        with pytest.raises(AssertionError):
            check(VertexRequest(req.collection, broken, ()), "us-central1")


def test_the_check_refuses_an_image_google_does_not_list() -> None:
    req = to_vertex(job(), region="us-central1")
    broken = copy.deepcopy(req.body)
    code = broken["jobSpec"]["workerPoolSpecs"][0]["pythonPackageSpec"]
    for bad in ("tf-cpu.2-10", "tf-gpu.2-11.py310", "tf-cpu.2-11.py310:2.11"):
        uri = "us-docker.pkg.dev/vertex-ai/training/" + bad
        code["executorImageUri"] = uri if ":" in bad else f"{uri}:latest"
        with pytest.raises(AssertionError):
            check(VertexRequest(req.collection, broken, ()), "us-central1")


@pytest.mark.parametrize("region", ["europe-west4", "asia-northeast1", "us"])
def test_other_regions_use_their_own_host(region: str) -> None:
    body = job(region=region)
    check(to_vertex(body, region=region), region)
    check(to_vertex(job(region=region, hyperparameters=HP), region=region), region)


@pytest.mark.parametrize("path", VALID, ids=lambda p: p.name)
def test_corpus_requests_are_valid(path: Path) -> None:
    """The whole corpus: as written where it translates, else with the profile's image."""
    body = load_corpus_file(path)
    region = body["trainingInput"].get("region") or "us-central1"
    try:
        req = to_vertex(body, region=region)
    except TranslationError:
        body = copy.deepcopy(body)
        body["trainingInput"].get("hyperparameters", {}).pop("resumePreviousJobId", None)
        req = to_vertex(body, region=region, executor_image=IMAGE)
        check(req, region, IMAGE)
        return
    check(req, region)


def test_a_body_with_a_mistake_fails_the_check() -> None:
    """The check is not vacuous: the same path rejects an int64 sent as a number."""
    req = to_vertex(job(), region="us-central1")
    broken = copy.deepcopy(req.body)
    broken["jobSpec"]["workerPoolSpecs"][0]["replicaCount"] = 1
    with pytest.raises(AssertionError):
        check(VertexRequest(req.collection, broken, ()), "us-central1")


@SETTINGS
@given(body=valid_jobs())
def test_any_translatable_job_makes_a_valid_request(body: dict[str, Any]) -> None:
    region = body["trainingInput"]["region"]
    try:
        req = to_vertex(body, region=region, executor_image=IMAGE)
    except TranslationError:
        return  # which refusals are expected is test_vertex_translate's business
    check(req, region, IMAGE)


@SETTINGS
@given(body=valid_jobs())
def test_any_translatable_job_on_its_runtimes_image_makes_a_valid_request(
    body: dict[str, Any],
) -> None:
    """Without the profile's image, the translator picks one per pool from Google's list."""
    region = body["trainingInput"]["region"]
    try:
        req = to_vertex(body, region=region)
    except TranslationError:
        return
    check(req, region)
