"""scheduling.maxWaitTime / maxRunningTime and consumedMLUnits from the tier table (issue 6)."""

from __future__ import annotations

import pytest

from tui_app.model.jobs.cluster import ml_units_per_hour
from tui_app.model.jobs.tiers import ACCELERATORS, MACHINE_TYPES
from tui_app.model.running.cost import consumed_ml_units
from tui_app.model.running.limits import running_limit, wait_limit


def test_wait_limit_only_when_set_and_scaled() -> None:
    assert wait_limit({}) is None
    limit = wait_limit({"scheduling": {"maxWaitTime": "3600s"}})
    assert limit is not None and limit.seconds == 3600
    assert limit.message() == (
        "Job cancelled: it did not start running within scheduling.maxWaitTime (3600s)."
    )
    scaled = wait_limit({"scheduling": {"maxWaitTime": "1800s"}}, scale=0.001)
    assert scaled is not None and scaled.seconds == pytest.approx(1.8)
    assert "(1800s; 1.8s on this service)" in scaled.message()


def test_running_limit_defaults_to_seven_days() -> None:
    default = running_limit({})
    assert default.seconds == 604800 and default.default
    assert "maxRunningTime (604800s, the default)" in default.message()
    limit = running_limit({"scheduling": {"maxRunningTime": "2.5s"}})
    assert limit.seconds == 2.5
    assert limit.message() == (
        "Job cancelled: it was still running after scheduling.maxRunningTime (2.5s)."
    )


def test_consumed_units_are_the_hourly_price_times_hours_run() -> None:
    assert consumed_ml_units({}, None, 1000.0) == 0.0
    assert consumed_ml_units({}, 0.0, 3600.0) == 0.5661
    assert consumed_ml_units({"scaleTier": "STANDARD_1"}, 0.0, 1800.0) == round(5.9234 / 2, 4)
    assert consumed_ml_units({}, 100.0, 50.0) == 0.0


def test_custom_price_sums_machine_types_and_gpus() -> None:
    ti = {
        "scaleTier": "CUSTOM",
        "masterType": "n1-standard-8",
        "masterConfig": {"acceleratorConfig": {"count": "2", "type": "NVIDIA_TESLA_T4"}},
        "parameterServerType": "standard",
        "parameterServerCount": "2",
    }
    expected = (
        MACHINE_TYPES["n1-standard-8"].ml_units_per_hour
        + 2 * ACCELERATORS["NVIDIA_TESLA_T4"].ml_units_per_hour
        + 2 * 0.5661
    )
    assert ml_units_per_hour(ti) == pytest.approx(expected, abs=1e-4)


def test_built_in_accelerators_are_not_paid_twice() -> None:
    """An A2 machine's price includes its A100s; cloud_tpu's count is TPU cores."""
    a2 = {
        "scaleTier": "CUSTOM",
        "masterType": "a2-highgpu-2g",
        "masterConfig": {"acceleratorConfig": {"count": "2", "type": "NVIDIA_TESLA_A100"}},
    }
    assert ml_units_per_hour(a2) == MACHINE_TYPES["a2-highgpu-2g"].ml_units_per_hour
    tpu = {
        "scaleTier": "CUSTOM",
        "masterType": "standard",
        "workerType": "cloud_tpu",
        "workerCount": "1",
        "workerConfig": {"acceleratorConfig": {"count": "8", "type": "TPU_V3"}},
    }
    assert ml_units_per_hour(tpu) == pytest.approx(
        0.5661 + ACCELERATORS["TPU_V3"].ml_units_per_hour, abs=1e-4
    )
