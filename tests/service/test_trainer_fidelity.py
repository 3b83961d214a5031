"""What real trainers meet on the live service: hyphenated tuning flags, torch.distributed's
variables, TensorFlow's multi-line log records and errorMessage for TensorFlow errors (issue 13).

The replicas run tests/support/probe_trainer, a stdlib trainer that records what it was given.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import unique_id
from tests.support.live_service import CLUSTER, LiveService, basic_job
from tui_app.shell.package_build import build_sdist

PROBE_SRC = Path(__file__).resolve().parent.parent / "support" / "probe_trainer"
FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "tracebacks"


@pytest.fixture(scope="module")
def probe_uri(service: LiveService, tmp_path_factory: pytest.TempPathFactory) -> str:
    return service.stage(build_sdist(PROBE_SRC, tmp_path_factory.mktemp("probe-build")))


def _probe_job(job_id: str, uri: str, *args: str, **training: Any) -> dict[str, Any]:
    return basic_job(job_id, uri, *args, pythonModule="probe.task", **training)


def _records(svc: LiveService, job_id: str) -> dict[str, dict[str, Any]]:
    """What each replica recorded, by ``<type>-<index>[-trial<id>]`` (in its working dir)."""
    found = svc.state_dir.glob(f"jobs/*/{job_id}/**/probe/*.json")
    return {p.name.removesuffix(".json"): json.loads(p.read_text()) for p in found}


def test_hyphenated_parameter_names_reach_the_trainer_as_flags(
    service: LiveService, probe_uri: str
) -> None:
    """Google's tuning configs name parameters `first-layer-size`; trials get those flags."""
    job_id = unique_id("hyphens")
    hp = {
        "goal": "MAXIMIZE",
        "algorithm": "GRID_SEARCH",
        "maxTrials": 4,
        "maxParallelTrials": 2,
        "params": [
            {"parameterName": "first-layer-size", "type": "DISCRETE", "discreteValues": [64, 128]},
            {"parameterName": "scale-factor", "type": "CATEGORICAL", "categoricalValues": ["a"]},
            {"parameterName": "num-layers", "type": "INTEGER", "minValue": 2, "maxValue": 3},
        ],
    }
    service.client().create(_probe_job(job_id, probe_uri, hyperparameters=hp))
    job = service.wait_state(job_id, timeout=120)
    assert job["state"] == "SUCCEEDED", job.get("errorMessage")
    trials = {t["trialId"]: t for t in job["trainingOutput"]["trials"]}
    assert sorted(trials) == ["1", "2", "3", "4"]
    records = _records(service, job_id)
    for trial_id, trial in trials.items():
        given = trial["hyperparameters"]
        assert set(given) == {"first-layer-size", "scale-factor", "num-layers"}
        record = records[f"master-0-trial{trial_id}"]
        assert record["argv"][-3:] == [
            f"--first-layer-size={given['first-layer-size']}",
            f"--scale-factor={given['scale-factor']}",
            f"--num-layers={given['num-layers']}",
        ]
        # argparse turns --first-layer-size into first_layer_size, as a trainer reads it.
        assert record["hyperparameters"] == {
            "first_layer_size": given["first-layer-size"],
            "scale_factor": "a",
            "num_layers": given["num-layers"],
        }
    points = sorted(
        (t["hyperparameters"]["first-layer-size"], t["hyperparameters"]["num-layers"])
        for t in trials.values()
    )
    assert points == [("128", "2"), ("128", "3"), ("64", "2"), ("64", "3")]


def test_a_parameter_name_no_flag_can_carry_is_refused(service: LiveService) -> None:
    body = _probe_job(
        unique_id("bad_name"),
        "gs://test-bucket/none.tar.gz",
        hyperparameters={
            "goal": "MAXIMIZE",
            "params": [{"parameterName": "lr=1", "type": "DOUBLE", "minValue": 0, "maxValue": 1}],
        },
    )
    status, resp = service.post_job(body)
    assert status == 400, resp
    [violation] = resp["error"]["details"][0]["fieldViolations"]
    assert violation["field"] == "trainingInput.hyperparameters.params[0].parameterName"
    assert "'='" in violation["description"]


def test_every_node_gets_torch_distributed_variables_and_they_meet(
    service: LiveService, probe_uri: str
) -> None:
    job_id = unique_id("torch_env")
    body = _probe_job(
        job_id,
        probe_uri,
        "--await-peers",
        "4",
        **CLUSTER,
        evaluatorType="standard",
        evaluatorCount="1",
    )
    service.client().create(body)
    job = service.wait_state(job_id, timeout=90)
    assert job["state"] == "SUCCEEDED", job.get("errorMessage")
    records = _records(service, job_id)
    assert set(records) == {"master-0", "worker-0", "worker-1", "ps-0", "evaluator-0"}
    cluster = records["master-0"]["tf_config"]["cluster"]
    [master] = cluster["master"]
    host, port = master.rsplit(":", 1)
    for name, rank in (("master-0", "0"), ("worker-0", "1"), ("worker-1", "2")):
        assert records[name]["env"] == {
            "MASTER_ADDR": host,
            "MASTER_PORT": port,
            "WORLD_SIZE": "3",
            "RANK": rank,
        }
    # Rank 0 listened on MASTER_ADDR:MASTER_PORT and met every other rank there.
    assert records["master-0"]["met"] == [0, 1, 2]
    assert records["ps-0"]["env"] == {} and records["evaluator-0"]["env"] == {}


def test_deprecation_records_are_warnings_and_the_tensorflow_cause_is_in_error_message(
    service: LiveService, probe_uri: str
) -> None:
    job_id = unique_id("tf_records")
    fixture = FIXTURES / "tf115_original_stack_trace.txt"
    body = _probe_job(
        job_id,
        probe_uri,
        "--deprecation",
        "--stderr-file",
        str(fixture),
        "--exit-code",
        "1",
    )
    service.client().create(body)
    job = service.wait_state(job_id, timeout=90)
    assert job["state"] == "FAILED"
    message = job["errorMessage"]
    assert message.splitlines()[0] == "The replica master 0 exited with a non-zero status of 1."
    assert (
        "tensorflow.python.framework.errors_impl.NotFoundError: Restoring from checkpoint failed."
        in message
    )
    assert "Key dnn/hiddenlayer_0/kernel not found in checkpoint" in message

    entries = service.entries(
        f'resource.labels.job_id="{job_id}" AND resource.labels.task_name="master-replica-0" '
        'AND logName:"master-replica-0"'
    )
    lines = [(e["severity"], e["jsonPayload"]["message"]) for e in entries]
    # Python logging's record and absl's, three lines each, all WARNING.
    assert [sev for sev, _ in lines[:6]] == ["WARNING"] * 6
    assert lines[1][1] == "Instructions for updating:"
    # The first ERROR, where `e` lands, is the real traceback.
    first_error = next(text for sev, text in lines if sev == "ERROR")
    assert first_error == "Traceback (most recent call last):"
