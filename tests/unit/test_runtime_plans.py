"""The runtime rules: exact on the job's Python, nearest versions on ours, or a refusal."""

from __future__ import annotations

import pytest

from tui_app.model.jobs.runtimes import (
    RUNTIME_PYTHON,
    RuntimeRefused,
    missing_module_hint,
    plan,
    requirement_names,
    tf_requirement,
)

OWN_311 = ("3.11", "/srv/python3.11")
PY37 = {"3.7": "/py/3.7/bin/python"}


def test_exact_on_the_jobs_python_with_the_recorded_versions() -> None:
    p = plan("2.11", "3.7", False, PY37, OWN_311)
    assert p.exact and p.python == "3.7" and p.interpreter == "/py/3.7/bin/python"
    assert p.requirements[:4] == (
        "tensorflow-cpu==2.11.*",
        "scikit-learn==1.0.2",
        "xgboost==1.6.1",
        "pandas==1.3.5",
    )
    assert p.substitutions == () and p.unrecorded == ()
    assert p.env == {} and p.notes() == []


def test_the_modular_gcs_filesystem_is_never_switched_on() -> None:
    """tensorflow-io-gcs-filesystem's reads abort the trainer (docs/runtimes.md), so no plan
    turns TF_USE_MODULAR_FILESYSTEM on, exact or substituted."""
    for p in (
        plan("2.5", None, False, PY37, OWN_311),
        plan("2.11", "3.7", False, PY37, OWN_311),
        plan("2.11", "3.7", False, {}, OWN_311),
        plan("2.11", "3.7", False, {}, ("3.12", "/p")),
    ):
        assert not any(r.startswith("tensorflow-io-gcs") for r in p.requirements)
        assert "TF_USE_MODULAR_FILESYSTEM" not in p.env


def test_unrecorded_frameworks_are_said_not_passed_off() -> None:
    p = plan("2.5", None, False, PY37, OWN_311)
    assert p.exact and p.unrecorded == ("scikit-learn", "xgboost", "pandas")
    assert "scikit-learn" in p.requirements
    assert any("not recorded" in n for n in p.notes())


def test_fallback_lists_every_substitution_on_311() -> None:
    p = plan("2.11", "3.7", False, {}, OWN_311)
    assert not p.exact and p.python == "3.11" and p.interpreter == "/srv/python3.11"
    assert "tensorflow-cpu==2.12.*" in p.requirements
    assert "scikit-learn==1.1.3" in p.requirements and "pandas==1.5.0" in p.requirements
    assert "xgboost==1.6.1" in p.requirements  # pure-Python tags: no substitution
    names = [s.name for s in p.substitutions]
    assert names == ["tensorflow", "scikit-learn", "pandas"]
    assert p.env == {}  # TensorFlow 2.12 still has Keras 2: nothing to switch


def test_keras_2_kept_from_tensorflow_216() -> None:
    p = plan("2.11", "3.7", False, {}, ("3.12", "/py312"))
    assert "tensorflow-cpu==2.16.*" in p.requirements and "tf-keras==2.16.*" in p.requirements
    assert p.env == {"TF_USE_LEGACY_KERAS": "1"}
    assert any("TF_USE_LEGACY_KERAS=1" in n for n in p.notes())


def test_tensorflow_1_without_its_python_is_refused_naming_what_runs() -> None:
    with pytest.raises(RuntimeRefused) as err:
        plan("1.15", "3.7", False, {}, OWN_311)
    assert err.value.field == "trainingInput.runtimeVersion"
    assert "pyenv install 3.7" in str(err.value) and "runtimeVersion 2.x" in str(err.value)


def test_tensorflow_1_takes_the_nearest_python_it_has_wheels_for() -> None:
    p = plan("1.14", "3.5", False, {"3.6": "/py36", "3.7": "/py37"}, OWN_311)
    assert p.python == "3.6" and not p.exact
    assert p.substitutions[0].name == "python" and p.substitutions[0].got == "3.6"
    with pytest.raises(RuntimeRefused):
        plan("1.10", "3.5", False, {"3.7": "/py37"}, OWN_311)  # 1.10 has no 3.7 wheels


def test_python_27_and_unknown_runtimes_are_refused() -> None:
    with pytest.raises(RuntimeRefused) as err:
        plan("1.15", "2.7", False, {"2.7": "/py27"}, OWN_311)
    assert err.value.field == "trainingInput.pythonVersion"
    with pytest.raises(RuntimeRefused):
        plan("9.9", None, False, PY37, OWN_311)
    with pytest.raises(RuntimeRefused):
        plan("2.11", "3.7", False, {}, ("3.14", "/py314"))  # no known TensorFlow for 3.14


def test_gpu_builds() -> None:
    assert tf_requirement("1.15", gpu=True) == "tensorflow-gpu==1.15.*"
    assert tf_requirement("1.15", gpu=False) == "tensorflow==1.15.*"
    assert tf_requirement("2.11", gpu=True) == "tensorflow==2.11.*"
    assert tf_requirement("2.11", gpu=False) == "tensorflow-cpu==2.11.*"
    assert tf_requirement("2.16", gpu=True) == "tensorflow[and-cuda]==2.16.*"
    assert plan("2.11", "3.7", True, PY37, OWN_311).variant == "gpu"
    assert (
        plan("2.11", "3.7", True, PY37, OWN_311).key
        != plan("2.11", "3.7", False, PY37, OWN_311).key
    )


def test_every_runtime_plans_or_refuses_cleanly() -> None:
    for runtime, pythons in RUNTIME_PYTHON.items():
        for python in pythons:
            try:
                plan(runtime, python, False, {"3.7": "/py37"}, OWN_311)
            except RuntimeRefused as exc:
                assert exc.field.startswith("trainingInput.") and str(exc)


def test_missing_module_hint() -> None:
    tail = "Traceback (...):\nModuleNotFoundError: No module named 'lightgbm.sklearn'"
    hint = missing_module_hint(tail, "2.11")
    assert hint is not None and "'lightgbm'" in hint and "install_requires" in hint
    assert "runtime 2.11 does not include it" in hint
    assert "no runtimeVersion" in (missing_module_hint(tail, None) or "")
    assert missing_module_hint("ValueError: x", "2.11") is None


def test_describe_shows_the_runtime_environment() -> None:
    from datetime import UTC, datetime

    from tui_app.model.views.describe import render_text, summarize

    env = {
        "runtimeVersion": "2.11",
        "pythonVersion": "3.11",
        "interpreter": "/usr/bin/python3.11",
        "exact": False,
        "environment": "2.11-py3.11-cpu-abc",
        "packages": {"tensorflow-cpu": "2.12.0", "scikit-learn": "1.1.3", "pip": "23.2"},
        "substitutions": ["scikit-learn 1.1.3 instead of 1.0.2: no Python 3.7 on this host"],
        "notes": ["scikit-learn 1.1.3 instead of 1.0.2: no Python 3.7 on this host"],
    }
    job = {"jobId": "j", "state": "RUNNING"}
    text = render_text(summarize(job, datetime.now(UTC), environment=env))
    assert "Runtime environment" in text
    assert "2.11 on Python 3.11 (substituted)" in text
    assert "scikit-learn 1.1.3" in text and "pip 23.2" not in text
    assert text.count("instead of 1.0.2") == 1  # a substitution is not repeated as a note
    assert "Runtime environment" not in render_text(summarize(job, datetime.now(UTC)))


def test_old_pythons_get_a_pip_that_checks_requires_python() -> None:
    from tui_app.local.environments.runtime_envs import pip_upgrade

    assert pip_upgrade("3.6") == "pip<22"
    assert pip_upgrade("3.7.16") == "pip<24.1"
    assert pip_upgrade("3.5") == "pip<21"
    assert pip_upgrade("3.11") is None


def test_tensorflow_1_gets_the_protobuf_bound_it_does_not_declare() -> None:
    exact = plan("1.15", "3.7", False, PY37, OWN_311)
    assert "protobuf<3.21" in exact.requirements
    # And its gs:// limit is said where the job's log and describe show the plan.
    assert any("tf.io.gfile cannot reach gs://" in n for n in exact.notes())
    assert not any("tf.io.gfile" in n for n in plan("2.11", "3.7", False, PY37, OWN_311).notes())
    near = plan("1.14", "3.5", False, {"3.6": "/py/3.6/bin/python"}, OWN_311)
    assert "protobuf<3.21" in near.requirements
    assert not any(
        r.startswith("protobuf") for r in plan("2.11", "3.7", False, PY37, OWN_311).requirements
    )


def test_requirement_names_are_what_only_binary_takes() -> None:
    assert requirement_names(
        ["tensorflow-cpu==2.11.*", "scikit-learn", "protobuf<3.21", "tf_keras>=2", "scikit-learn"]
    ) == ["tensorflow-cpu", "scikit-learn", "protobuf", "tf_keras"]
