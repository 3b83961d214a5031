"""CPU slots and GPUs (issue 6): what a job asks for, how it is cut to the machine, which
devices each replica gets, and how the service finds the machine's GPUs."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

import pytest

from tui_app.local.execution.cluster_env import gpu_env
from tui_app.local.execution.scheduler import detect_gpus, machine_capacity
from tui_app.model.running.capacity import (
    PCI_BUS_ORDER,
    Capacity,
    Demand,
    assign_gpus,
    first_gpus,
    fit,
    job_demand,
    parse_nvidia_smi_list,
    parse_visible_devices,
    shortfall_notes,
)

CUSTOM_GPUS: dict[str, Any] = {
    "scaleTier": "CUSTOM",
    "masterType": "n1-standard-16",
    "masterConfig": {"acceleratorConfig": {"count": "2", "type": "NVIDIA_TESLA_V100"}},
    "workerType": "n1-standard-8",
    "workerCount": "2",
    "workerConfig": {"acceleratorConfig": {"count": "1", "type": "NVIDIA_TESLA_T4"}},
    "parameterServerType": "n1-highmem-8",
    "parameterServerCount": "1",
}

SMI = """GPU 0: NVIDIA H200 (UUID: GPU-8a3c1b2e-0000-1111-2222-333344445555)
GPU 1: NVIDIA A100-SXM4-40GB (UUID: GPU-9b4d2c3f-0000-1111-2222-333344445555)
  MIG 1g.5gb      Device  0: (UUID: MIG-4f0e1d2c-0000-1111-2222-333344445555)
  MIG 1g.5gb      Device  1: (UUID: MIG-5a1f2e3d-0000-1111-2222-333344445555)
GPU 2: NVIDIA H200 (UUID: GPU-ac5e3d4a-0000-1111-2222-333344445555)
"""


@pytest.mark.parametrize(
    ("training_input", "gpus"),
    [
        ({}, (0,)),
        ({"scaleTier": "BASIC_GPU"}, (1,)),
        ({"scaleTier": "BASIC_TPU"}, (0,)),
        ({"scaleTier": "STANDARD_1"}, (0,) * 8),
        ({"scaleTier": "CUSTOM", "masterType": "complex_model_m_gpu"}, (4,)),
        (CUSTOM_GPUS, (2, 1, 1, 0)),
        (
            # An A2 machine's acceleratorConfig names its built-in A100s: counted once.
            {
                "scaleTier": "CUSTOM",
                "masterType": "a2-highgpu-4g",
                "masterConfig": {"acceleratorConfig": {"count": "4", "type": "NVIDIA_TESLA_A100"}},
            },
            (4,),
        ),
        (
            # A TPU worker holds no GPU.
            {
                "scaleTier": "CUSTOM",
                "masterType": "n1-highcpu-16",
                "workerType": "cloud_tpu",
                "workerCount": "1",
                "workerConfig": {"acceleratorConfig": {"count": "8", "type": "TPU_V3"}},
            },
            (0, 0),
        ),
    ],
)
def test_job_demand_counts_each_replicas_gpus(
    training_input: dict[str, Any], gpus: tuple[int, ...]
) -> None:
    demand = job_demand(training_input)
    assert demand.gpus == gpus
    assert demand.slots == len(gpus) == len(demand.task_names)


def test_demand_names_replicas_in_platform_order() -> None:
    assert job_demand(CUSTOM_GPUS).task_names == (
        "master-replica-0",
        "worker-replica-0",
        "worker-replica-1",
        "ps-replica-0",
    )


def test_fit_keeps_what_the_machine_can_give() -> None:
    demand = job_demand(CUSTOM_GPUS)
    assert fit(demand, Capacity(8, ("0", "1", "2", "3"))) == demand


def test_fit_cuts_an_oversized_job_to_the_whole_machine() -> None:
    """More replicas than slots: all slots. More GPUs than the machine: the master first."""
    demand = job_demand(CUSTOM_GPUS)  # 4 replicas, GPUs 2+1+1
    capacity = Capacity(2, ("0", "1", "2"))
    fitted = fit(demand, capacity)
    assert fitted.slots == 2
    assert fitted.gpus == (2, 1, 0, 0)
    notes = shortfall_notes(demand, fitted, capacity)
    assert len(notes) == 2
    assert "4 replicas and this machine 2 CPU slots" in notes[0]
    assert "asks for 4 GPUs and this machine has 3: it runs with 3" in notes[1]
    assert "worker-replica-1 0 of 1" in notes[1]


def test_fit_on_a_machine_without_gpus_runs_gpu_jobs_without_them() -> None:
    demand = job_demand({"scaleTier": "BASIC_GPU"})
    fitted = fit(demand, Capacity(4))
    assert fitted.gpus == (0,) and fitted.slots == 1
    [note] = shortfall_notes(demand, fitted, Capacity(4))
    assert "asks for 1 GPU and this machine has 0" in note


def test_assign_gpus_hands_out_devices_in_order() -> None:
    assert assign_gpus((2, 0, 1), ["1", "3", "4", "7"]) == (("1", "3"), (), ("4",))
    with pytest.raises(ValueError):
        assign_gpus((2, 1), ["0", "1"])


def test_gpu_env_hides_every_gpu_from_a_replica_without_one() -> None:
    assert gpu_env((), None) == {"CUDA_VISIBLE_DEVICES": ""}
    assert gpu_env(("0", "2"), PCI_BUS_ORDER) == {
        "CUDA_VISIBLE_DEVICES": "0,2",
        "CUDA_DEVICE_ORDER": "PCI_BUS_ID",
    }


def test_nvidia_smi_list_gives_indices_and_mig_instances() -> None:
    assert parse_nvidia_smi_list(SMI) == (
        "0",
        "MIG-4f0e1d2c-0000-1111-2222-333344445555",
        "MIG-5a1f2e3d-0000-1111-2222-333344445555",
        "2",
    )
    assert parse_nvidia_smi_list("") == ()
    assert parse_nvidia_smi_list("No devices were found\n") == ()


@pytest.mark.parametrize(
    ("value", "devices"),
    [
        ("0,1", ("0", "1")),
        (" 2 , 3 ", ("2", "3")),
        ("", ()),
        ("-1", ()),
        ("1,-1,2", ("1",)),
        ("NoDevFiles", ()),
        ("GPU-abc,0,0", ("GPU-abc", "0")),
    ],
)
def test_visible_devices_read_as_cuda_reads_them(value: str, devices: tuple[str, ...]) -> None:
    assert parse_visible_devices(value) == devices


def test_first_gpus_pretends_beyond_the_hardware() -> None:
    assert first_gpus(("3", "5"), 1) == ("3",)
    assert first_gpus((), 2) == ("0", "1")


def _fake_smi(tmp_path: Path, output: str, rc: int = 0) -> dict[str, str]:
    script = tmp_path / "nvidia-smi"
    script.write_text(f"#!/bin/sh\ncat <<'EOF'\n{output}EOF\nexit {rc}\n")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return {"PATH": f"{tmp_path}:{os.environ.get('PATH', '')}"}


def test_detect_gpus_runs_nvidia_smi(tmp_path: Path) -> None:
    env = _fake_smi(tmp_path, SMI)
    devices, order, source = detect_gpus(env)
    assert devices[0] == "0" and len(devices) == 4
    assert (order, source) == (PCI_BUS_ORDER, "nvidia-smi")


def test_detect_gpus_without_nvidia_smi_or_when_it_fails(tmp_path: Path) -> None:
    assert detect_gpus({"PATH": str(tmp_path)}) == ((), None, "no nvidia-smi")
    env = _fake_smi(tmp_path, "NVIDIA-SMI has failed\n", rc=9)
    assert detect_gpus(env) == ((), None, "nvidia-smi -L failed")


def test_the_services_own_cuda_visible_devices_wins(tmp_path: Path) -> None:
    env = {**_fake_smi(tmp_path, SMI), "CUDA_VISIBLE_DEVICES": "2,3"}
    assert detect_gpus(env) == (("2", "3"), None, "CUDA_VISIBLE_DEVICES")


def test_machine_capacity_flags_override_detection(tmp_path: Path) -> None:
    env = _fake_smi(tmp_path, SMI)
    assert machine_capacity(3, None, env) == Capacity(
        3, parse_nvidia_smi_list(SMI), "PCI_BUS_ID", "nvidia-smi"
    )
    assert machine_capacity(3, 0, env).gpu_ids == ()
    assert machine_capacity(3, 1, env).gpu_ids == ("0",)
    pretend = machine_capacity(3, 2, {"PATH": str(tmp_path / "none")})
    assert pretend.gpu_ids == ("0", "1") and pretend.gpu_source == "--gpus 2"
    assert machine_capacity(None, 0, env).slots == (os.cpu_count() or 1)
    assert pretend.describe() == "3 CPU slots, 2 GPUs (0,1 from --gpus 2)"


def test_demand_total() -> None:
    assert Demand(("a", "b"), (2, 1), 2).total_gpus == 3


def test_service_flags_and_env_size_the_machine() -> None:
    """``--slots``/``--gpus`` win; ``$TUI_APP_SLOTS``/``$TUI_APP_GPUS`` size a service started
    without them (the one the TUI starts); a bad value is a clear error, not a traceback."""
    from tui_app.entry.cli import build_parser
    from tui_app.local.service_cli import ServiceError, ServiceOptions

    parser = build_parser()
    plain = parser.parse_args(["service", "run"])
    env = {"TUI_APP_SLOTS": "3", "TUI_APP_GPUS": "1"}
    opts = ServiceOptions.from_args(plain, env)
    assert (opts.slots, opts.gpus, opts.max_wait_scale) == (3, 1, 1.0)
    flags = parser.parse_args(
        ["service", "start", "--slots", "2", "--gpus", "0", "--max-wait-scale", "0.001"]
    )
    opts = ServiceOptions.from_args(flags, env)
    assert (opts.slots, opts.gpus, opts.max_wait_scale) == (2, 0, 0.001)
    assert opts.argv()[-6:] == ["--slots", "2", "--gpus", "0", "--max-wait-scale", "0.001"]
    assert ServiceOptions.from_args(plain, {}).gpus is None  # detect
    with pytest.raises(ServiceError, match="TUI_APP_GPUS"):
        ServiceOptions.from_args(plain, {"TUI_APP_GPUS": "two"})
    with pytest.raises(SystemExit):
        parser.parse_args(["service", "run", "--gpus", "-1"])


def test_replica_nice_flag() -> None:
    """``--replica-nice`` (0-19, default 10) reaches the service ``service start`` runs; a bad
    value is refused by argparse with the range."""
    from tui_app.entry.cli import build_parser
    from tui_app.local.execution.replica_priority import DEFAULT_REPLICA_NICE
    from tui_app.local.service_cli import ServiceError, ServiceOptions

    parser = build_parser()
    default = ServiceOptions.from_args(parser.parse_args(["service", "run"]), {})
    assert default.replica_nice == DEFAULT_REPLICA_NICE == 10
    assert "--replica-nice" not in default.argv()
    off = ServiceOptions.from_args(
        parser.parse_args(["service", "start", "--replica-nice", "0"]), {}
    )
    assert off.replica_nice == 0
    assert off.argv()[off.argv().index("--replica-nice") + 1] == "0"
    for bad in ("20", "-1", "ten"):
        with pytest.raises(SystemExit):
            parser.parse_args(["service", "run", "--replica-nice", bad])
    # The service the TUI starts takes $TUI_APP_REPLICA_NICE; the flag wins over it.
    plain = parser.parse_args(["service", "run"])
    assert ServiceOptions.from_args(plain, {"TUI_APP_REPLICA_NICE": "0"}).replica_nice == 0
    flagged = parser.parse_args(["service", "run", "--replica-nice", "5"])
    assert ServiceOptions.from_args(flagged, {"TUI_APP_REPLICA_NICE": "0"}).replica_nice == 5
    with pytest.raises(ServiceError, match="TUI_APP_REPLICA_NICE"):
        ServiceOptions.from_args(plain, {"TUI_APP_REPLICA_NICE": "99"})
