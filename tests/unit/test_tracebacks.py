"""errorMessage's view of a failed replica's stderr: the last exception line, whatever the shape.

The fixtures in tests/fixtures/tracebacks are stderr as trainers write it: the ``*_py*.txt``
ones were produced by the pyenv Pythons named in their names (paths rewritten),
``torch213_ddp_rank_prefix.txt`` by a real gloo DDP job of torch 2.13 on the local service (rank
1 of 3 fed a wrong shape), the other TensorFlow,
PyTorch and scikit-learn ones are written after those libraries' real output (TF 1.15
Estimator restore, TF 2.11 Keras ``model.fit``, ``tf.io.gfile`` without network, a DDP forward,
an OneHotEncoder on NaN).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tui_app.model.logs.tracebacks import (
    ELLIPSIS,
    FRAME_LINES,
    MAX_LINE_CHARS,
    MESSAGE_HEAD,
    MESSAGE_TAIL,
    TAIL_LINES,
    error_summary,
    last_traceback,
)

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "tracebacks"


def _fixture(name: str) -> str:
    return (FIXTURES / name).read_text()


def _lines(text: str) -> list[str]:
    return [ln for ln in text.splitlines() if ln.strip()]


# Each fixture and the exception line errorMessage must show.
CASES = {
    "plain_py311.txt": "KeyError: 'learning_rate'",
    "plain_py27.txt": "NameError: global name 'FileNotFoundError' is not defined",
    "chained_py37.txt": (
        "RuntimeError: training data missing: gs://census-data/adult.data was not staged"
    ),
    "cause_py312.txt": "DataError: column 'age' has a non-numeric value",
    "syntax_py311.txt": "SyntaxError: '[' was never closed",
    "syntax_py37.txt": "SyntaxError: invalid syntax",
    "multiline_py311.txt": "ValueError: The input is missing 6 feature columns:",
    "kbd_py311.txt": "KeyboardInterrupt",
    "noise_py311.txt": "ZeroDivisionError: float division by zero",
    "tf115_original_stack_trace.txt": (
        "tensorflow.python.framework.errors_impl.NotFoundError: Restoring from checkpoint failed."
    ),
    "tf211_graph_execution_error.txt": (
        "tensorflow.python.framework.errors_impl.InvalidArgumentError: Graph execution error:"
    ),
    "tf211_gfile_unavailable.txt": (
        "tensorflow.python.framework.errors_impl.UnavailableError: Error executing an HTTP "
        "request: libcurl code 6 meaning 'Couldn't resolve host name', error details: Could not "
        "resolve host: storage.googleapis.com"
    ),
    "torch_shape_mismatch.txt": (
        "RuntimeError: mat1 and mat2 shapes cannot be multiplied (64x14 and 13x64)"
    ),
    "torch213_ddp_rank_prefix.txt": (
        "RuntimeError: mat1 and mat2 shapes cannot be multiplied (64x14 and 13x64)"
    ),
    "sklearn_nan.txt": (
        "ValueError: Input contains NaN, infinity or a value too large for dtype('float64')."
    ),
}


def test_every_fixture_has_a_case() -> None:
    assert {p.name for p in FIXTURES.glob("*.txt")} == {*CASES, "argparse_no_traceback.txt"}


@pytest.mark.parametrize(("name", "exception"), sorted(CASES.items()))
def test_the_exception_line_is_found_and_kept(name: str, exception: str) -> None:
    text = _fixture(name)
    parsed = last_traceback(_lines(text))
    assert parsed is not None
    assert parsed.exception.startswith(exception)
    summary = error_summary(text).splitlines()
    assert summary[0] == "Traceback (most recent call last):"
    assert any(line.startswith(exception[: MAX_LINE_CHARS - 3]) for line in summary)
    # Short enough to read in a job's detail, whatever the traceback's length.
    assert len(summary) <= 2 + FRAME_LINES + 1 + MESSAGE_HEAD + 1 + MESSAGE_TAIL


def test_tensorflow_original_stack_trace_keeps_the_cause_not_just_frames() -> None:
    """The old tail (first line + last 13) showed only "Original stack trace" frames."""
    summary = error_summary(_fixture("tf115_original_stack_trace.txt"))
    assert "Key dnn/hiddenlayer_0/kernel not found in checkpoint" in summary
    assert "Restoring from checkpoint failed" in summary
    lines = summary.splitlines()
    # The frames kept are the innermost ones of the traceback, before the exception line.
    exc_at = next(i for i, ln in enumerate(lines) if "Restoring from checkpoint failed" in ln)
    assert lines[exc_at - 1].strip().startswith("err, ")
    assert lines[1] == ELLIPSIS


def test_tensorflow_graph_execution_error_keeps_its_cause_at_the_end() -> None:
    summary = error_summary(_fixture("tf211_graph_execution_error.txt"))
    assert "Graph execution error:" in summary
    assert "Received a label value of 2 which is outside the valid range of [0, 2)." in summary
    assert "[Op:__inference_train_function_1043]" in summary
    # Shutdown noise after the message is not part of it.
    assert "GeneratorDataset" not in summary
    assert "PyFunc" not in summary


def test_chained_tracebacks_show_the_last_one() -> None:
    summary = error_summary(_fixture("cause_py312.txt"))
    assert summary.splitlines()[-1] == "DataError: column 'age' has a non-numeric value"
    assert "could not convert string" not in summary
    assert "direct cause" not in summary


def test_syntax_error_keeps_its_caret_lines() -> None:
    lines = error_summary(_fixture("syntax_py311.txt")).splitlines()
    assert lines[-1] == "SyntaxError: '[' was never closed"
    assert lines[-3:-1] == ["    layers = [units, units // 2", "             ^"]


def test_multi_line_message_is_kept_start_and_end() -> None:
    lines = error_summary(_fixture("multiline_py311.txt")).splitlines()
    exc_at = lines.index("ValueError: The input is missing 6 feature columns:")
    assert lines[exc_at + 1 : exc_at + 1 + MESSAGE_HEAD] == [
        "  education",
        "  marital_status",
        "  occupation",
    ]
    assert lines[exc_at + 1 + MESSAGE_HEAD] == ELLIPSIS
    assert lines[-1] == "See the README."


def test_a_short_message_is_kept_whole() -> None:
    lines = error_summary(_fixture("tf211_gfile_unavailable.txt")).splitlines()
    assert lines[-1] == (
        "\t when reading metadata of gs://cloud-samples-data/ai-platform/census/data/adult.data.csv"
    )
    assert ELLIPSIS in lines[:2]  # eight frames: the outer two were left out


def test_logging_noise_and_ignored_exceptions_after_the_exception_are_dropped() -> None:
    text = _fixture("noise_py311.txt")
    lines = error_summary(text).splitlines()
    # The "Exception ignored in" traceback at exit is later, but the process died of this one.
    assert lines[-1] == "ZeroDivisionError: float division by zero"
    assert not any("Saving a checkpoint" in ln or "OSError" in ln for ln in lines)


def test_torch_rank_prefixes_are_taken_off() -> None:
    """torch.distributed prints "[rank1]: " before every line of a rank's traceback."""
    text = _fixture("torch213_ddp_rank_prefix.txt")
    assert all(line.startswith("[rank1]:") for line in text.splitlines()[2:] if line)
    lines = error_summary(text).splitlines()
    assert lines[0] == "Traceback (most recent call last):"
    assert lines[-1] == "RuntimeError: mat1 and mat2 shapes cannot be multiplied (64x14 and 13x64)"
    assert not any("[rank" in line for line in lines)
    assert not any("UserWarning" in line for line in lines)


def test_keyboard_interrupt_has_no_message() -> None:
    assert error_summary(_fixture("kbd_py311.txt")).splitlines()[-1] == "KeyboardInterrupt"


def test_no_traceback_gives_the_last_lines() -> None:
    text = _fixture("argparse_no_traceback.txt")
    assert last_traceback(_lines(text)) is None
    assert error_summary(text) == "\n".join(_lines(text))
    many = "\n".join(f"line {i}" for i in range(100)) + "\n"
    lines = error_summary(many).splitlines()
    assert lines == [ELLIPSIS, *(f"line {i}" for i in range(100 - TAIL_LINES, 100))]
    assert error_summary("") == ""


def test_a_log_line_between_frames_is_not_taken_for_the_exception() -> None:
    text = "\n".join(
        [
            "Traceback (most recent call last):",
            '  File "/srv/trainer/task.py", line 9, in <module>',
            "    main()",
            "I1122 08:30:00.000001 140 input.py:31] Prefetching shard 3",
            '  File "/srv/trainer/task.py", line 7, in main',
            "    raise OSError('disk full')",
            "OSError: disk full",
        ]
    )
    parsed = last_traceback(_lines(text))
    assert parsed is not None and parsed.exception == "OSError: disk full"


def test_a_traceback_cut_before_its_exception_line_falls_back_to_the_last_lines() -> None:
    text = 'starting\nTraceback (most recent call last):\n  File "x.py", line 1, in <module>\n'
    assert last_traceback(_lines(text)) is None
    assert error_summary(text).splitlines()[-1] == '  File "x.py", line 1, in <module>'


def test_long_lines_are_cut() -> None:
    text = 'Traceback (most recent call last):\n  File "x", line 1\nValueError: ' + "v" * 5000
    line = error_summary(text).splitlines()[-1]
    assert len(line) == MAX_LINE_CHARS and line.endswith("...")
