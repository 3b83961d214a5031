"""The builder's tier panel figures: every number comes from the one tier table (issue 5)."""

from __future__ import annotations

import pytest

from tui_app.model.builder.tier_summary import short_accelerator, summarize_cluster
from tui_app.model.jobs.tiers import ACCELERATORS, MACHINE_TYPES, SCALE_TIERS


@pytest.mark.parametrize("tier", [t for t in SCALE_TIERS if t != "CUSTOM"])
def test_predefined_tiers_show_their_layout_and_published_units(tier: str) -> None:
    summary = summarize_cluster({"scaleTier": tier})
    table = SCALE_TIERS[tier]
    assert summary.tier == tier
    assert summary.description == table.description
    assert summary.ml_units_per_hour == table.ml_units_per_hour
    for group, row in zip(table.groups, summary.rows, strict=False):
        assert (row.count, row.machine_type) == (group.count, group.machine_type)
        assert row.vcpus == MACHINE_TYPES[group.machine_type].vcpus
    assert summary.notes == ()


def test_rows_add_up_to_the_published_figures() -> None:
    """The tier's published ML units equal the sum of its rows (rounding aside)."""
    for tier in ("STANDARD_1", "PREMIUM_1", "BASIC_TPU"):
        summary = summarize_cluster({"scaleTier": tier})
        total = sum(r.ml_units_per_hour or 0 for r in summary.rows)
        assert total == pytest.approx(summary.ml_units_per_hour, abs=1e-3), tier


def test_standard_1_totals() -> None:
    summary = summarize_cluster({"scaleTier": "STANDARD_1"})
    assert [(r.role, r.count, r.machine_type) for r in summary.rows] == [
        ("master", 1, "complex_model_s"),
        ("workers", 4, "complex_model_s"),
        ("param servers", 3, "standard"),
    ]
    assert summary.replicas == 8
    assert summary.ml_units_per_hour == 5.9234


def test_basic_gpu_and_basic_tpu_name_their_accelerators() -> None:
    gpu = summarize_cluster({"scaleTier": "BASIC_GPU"})
    assert (gpu.rows[0].gpus, gpu.rows[0].accelerator, gpu.gpus) == (1, "K80", 1)
    tpu = summarize_cluster({"scaleTier": "BASIC_TPU"})
    assert [r.role for r in tpu.rows] == ["master", "TPU worker"]
    assert tpu.tpu_cores == 8
    assert tpu.ml_units_per_hour == 13.9743


def test_no_tier_is_basic() -> None:
    assert summarize_cluster({}).tier == "BASIC"


def test_custom_cluster_totals_machines_and_accelerators() -> None:
    ti = {
        "scaleTier": "CUSTOM",
        "masterType": "n1-standard-8",
        "workerType": "n1-standard-8",
        "workerCount": "2",
        "parameterServerType": "n1-standard-4",
        "parameterServerCount": 1,
        "workerConfig": {"acceleratorConfig": {"count": "2", "type": "NVIDIA_TESLA_T4"}},
    }
    summary = summarize_cluster(ti)
    assert [(r.role, r.count) for r in summary.rows] == [
        ("master", 1),
        ("workers", 2),
        ("param servers", 1),
    ]
    worker = summary.rows[1]
    assert (worker.gpus, worker.accelerator) == (2, "T4")
    per_worker = (
        MACHINE_TYPES["n1-standard-8"].ml_units_per_hour
        + 2 * ACCELERATORS["NVIDIA_TESLA_T4"].ml_units_per_hour
    )
    assert worker.ml_units_per_hour == pytest.approx(2 * per_worker, abs=1e-4)
    assert summary.replicas == 4
    assert summary.vcpus == 8 + 2 * 8 + 4
    assert summary.memory_gb == 30 + 2 * 30 + 15
    assert summary.gpus == 4
    assert summary.ml_units_per_hour == pytest.approx(
        sum(r.ml_units_per_hour or 0 for r in summary.rows), abs=1e-4
    )


def test_custom_tpu_accelerator_counts_cores() -> None:
    summary = summarize_cluster(
        {
            "scaleTier": "CUSTOM",
            "masterType": "n1-highcpu-16",
            "masterConfig": {"acceleratorConfig": {"count": "1", "type": "TPU_V3"}},
        }
    )
    assert summary.tpu_cores == 8 and summary.gpus == 0
    assert summary.rows[0].accelerator == "TPU v3"


def test_half_typed_custom_forms_never_raise() -> None:
    """The panel follows the form as it is typed: unknown types and bad counts are notes."""
    summary = summarize_cluster(
        {
            "scaleTier": "CUSTOM",
            "masterType": "n1-standard-9",
            "workerType": "standard",
            "workerCount": "two",
            "parameterServerType": "standard",
            "parameterServerCount": "0",
        }
    )
    assert [r.machine_type for r in summary.rows] == ["n1-standard-9"]
    assert summary.rows[0].vcpus is None and summary.ml_units_per_hour is None
    assert any("n1-standard-9" in n for n in summary.notes)
    assert any("workerCount" in n for n in summary.notes)
    empty = summarize_cluster({"scaleTier": "CUSTOM"})
    assert empty.rows == () and any("master" in n for n in empty.notes)
    unknown = summarize_cluster({"scaleTier": "HUGE"})
    assert unknown.rows == () and unknown.notes


def test_short_accelerator_labels() -> None:
    assert short_accelerator(ACCELERATORS["NVIDIA_TESLA_K80"]) == "K80"
    assert short_accelerator(ACCELERATORS["NVIDIA_TESLA_A100"]) == "A100"
    assert short_accelerator(ACCELERATORS["TPU_V3_POD"]) == "TPU v3 Pod"


def test_every_machine_type_has_its_size() -> None:
    """A legacy type explains itself by its host's size, even a host not offered for CUSTOM."""
    for machine in MACHINE_TYPES.values():
        if not machine.is_tpu:
            assert machine.vcpus > 0 and machine.memory_gb > 0, machine.name
