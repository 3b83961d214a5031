"""LogMetricParser: the scalar points trainers print, read from their log lines.

Most lines here are copied from real trainers' output (GitHub issues, tutorials, the Keras and
TensorFlow docs); where a line is built instead, the comment above it says from what.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tui_app.model.metrics.log_metrics import (
    MAX_TAG_CHARS,
    SCAN_LIMIT,
    LogMetricParser,
    LogPoint,
)

TRACEBACKS = Path(__file__).resolve().parents[1] / "fixtures" / "tracebacks"
TAG = re.compile(r"[A-Za-z_][A-Za-z0-9_./@-]*")

Held = dict[tuple[str, int], tuple[float, str]]


def hold(lines: Iterable[str], parser: LogMetricParser | None = None) -> Held:
    """What the metrics view holds after these lines: a later point replaces its (tag, step)."""
    parser = parser or LogMetricParser()
    held: Held = {}
    for line in lines:
        for point in parser.feed(line):
            held[point.tag, point.step] = (point.value, point.axis)
    return held


def one(line: str) -> list[tuple[str, int, float, str]]:
    """The points of one line on a fresh stream, as plain tuples."""
    return [(p.tag, p.step, p.value, p.axis) for p in LogMetricParser().feed(line)]


def epochs(held: Held) -> dict[tuple[str, int], float]:
    assert {axis for _, axis in held.values()} <= {"epoch"}
    return {key: value for key, (value, _) in held.items()}


# Keras


def test_keras_2_verbose_1_epochs_are_zero_based_and_the_last_update_wins() -> None:
    # keras-team/keras#8169 (Keras 2.0.9, a log without a terminal: one update per line).
    held = hold(
        [
            "Epoch 1/12",
            "60000/60000 [==============================] - 5s 87us/step - loss: 0.3437 - acc: "
            "0.8957 - val_loss: 0.0759 - val_acc: 0.9771",
            "Epoch 2/12",
            "60000/60000 [==============================] - 5s 77us/step - loss: 0.1145 - acc: "
            "0.9671 - val_loss: 0.0518 - val_acc: 0.9837",
            "Epoch 3/12",
            "13184/60000 [=====>........................] - ETA: 3s - loss: 0.0952 - acc: 0.9743",
            "29312/60000 [=============>................] - ETA: 2s - loss: 0.0891 - acc: 0.9733",
        ]
    )
    assert epochs(held) == {
        ("loss", 0): 0.3437,
        ("acc", 0): 0.8957,
        ("val_loss", 0): 0.0759,
        ("val_acc", 0): 0.9771,
        ("loss", 1): 0.1145,
        ("acc", 1): 0.9671,
        ("val_loss", 1): 0.0518,
        ("val_acc", 1): 0.9837,
        ("loss", 2): 0.0891,
        ("acc", 2): 0.9733,
    }


def test_progress_updates_of_an_epoch_add_no_points_of_their_own() -> None:
    parser = LogMetricParser()
    parser.feed("Epoch 1/5")
    # tensorflow/tensorflow#36332 (TF 2.1): updates, then the epoch's end. TF 2.x prints the last
    # batch's update ("82/82 ... ETA: 0s") before the final line that adds the validation numbers
    # (the last two lines are built in that format).
    updates = [
        " 61/82 [=====================>........] - ETA: 37s - loss: 0.6016 - accuracy: 0.9260",
        " 62/82 [=====================>........] - ETA: 35s - loss: 0.5919 - accuracy: 0.9272",
        "82/82 [==============================] - ETA: 0s - loss: 0.4517 - accuracy: 0.9414",
    ]
    final = (
        "82/82 [==============================] - 131s 2s/step - loss: 0.4517 - accuracy: 0.9414"
        " - val_loss: 0.3120 - val_accuracy: 0.9560"
    )
    seen = {(p.tag, p.step) for line in updates for p in parser.feed(line)}
    last = parser.feed(final)
    assert seen <= {(p.tag, p.step) for p in last}
    assert [(p.tag, p.value) for p in last] == [
        ("loss", 0.4517),
        ("accuracy", 0.9414),
        ("val_loss", 0.312),
        ("val_accuracy", 0.956),
    ]
    assert {p.step for p in last} == {0}


def test_updates_redrawn_with_carriage_returns_read_as_the_last_one() -> None:
    # TF 2.x on a terminal: each update is "\b" * width + "\r" + the bar (tensorflow#36332's
    # numbers); a log file gets one long line.
    frames = [
        " 60/82 [====================>.........] - ETA: 38s - loss: 0.6116 - accuracy: 0.9248",
        " 61/82 [=====================>........] - ETA: 37s - loss: 0.6016 - accuracy: 0.9260",
        " 62/82 [=====================>........] - ETA: 35s - loss: 0.5919 - accuracy: 0.9272",
    ]
    line = "".join("\x08" * 90 + "\r" + frame for frame in frames)
    assert hold(["Epoch 4/10", line]) == {
        ("loss", 3): (0.5919, "epoch"),
        ("accuracy", 3): (0.9272, "epoch"),
    }


def test_keras_2_verbose_2_one_line_per_epoch_among_other_output() -> None:
    # JesperDramsch/keras-complex#22 (TF 2.12, verbose=2): a TF line between header and numbers.
    held = hold(
        [
            "Epoch 1/20",
            "2023-06-30 10:32:50.974378: I tensorflow/compiler/xla/stream_executor/cuda/"
            "cuda_dnn.cc:424] Loaded cuDNN version 8900",
            "1079/1079 - 21s - loss: 0.2431 - 21s/epoch - 19ms/step",
            "Epoch 2/20",
            "1079/1079 - 10s - loss: 0.2135 - 10s/epoch - 10ms/step",
        ]
    )
    assert epochs(held) == {("loss", 0): 0.2431, ("loss", 1): 0.2135}


def test_keras_2_1_verbose_2_lines_without_a_counter() -> None:
    # Keras 2.1/2.2 verbose=2, as printed in a tutorial's output.
    held = hold(
        [
            "Train on 8635 samples, validate on 960 samples",
            "Epoch 1/10",
            " - 3s - loss: 0.6775 - acc: 0.5709 - val_loss: 0.6175 - val_acc: 0.6661",
            "Epoch 2/10",
            " - 3s - loss: 0.5638 - acc: 0.7108 - val_loss: 0.5505 - val_acc: 0.7068",
        ]
    )
    assert epochs(held)["val_acc", 1] == 0.7068
    assert len(held) == 8


def test_keras_1_and_unknown_totals() -> None:
    # keras-team/keras#2937 (Keras 1: elapsed time only) and keras-team/keras#8169 (no total).
    held = hold(
        [
            "Epoch 1/200",
            "50000/50000 [==============================] - 678s - loss: 1.7646 - acc: 0.3460 - "
            "val_loss: 1.3379 - val_acc: 0.5161",
            "Epoch 2/12",
            "  13440/Unknown - 2s - loss: 0.8068 - acc: 0.7432",
            "  60000/Unknown - 5s 87us/step - loss: 0.3281 - acc: 0.8997 - val_loss: 0.0761 - "
            "val_acc: 0.9769",
        ]
    )
    assert epochs(held) == {
        ("loss", 0): 1.7646,
        ("acc", 0): 0.346,
        ("val_loss", 0): 1.3379,
        ("val_acc", 0): 0.5161,
        ("loss", 1): 0.3281,
        ("acc", 1): 0.8997,
        ("val_loss", 1): 0.0761,
        ("val_acc", 1): 0.9769,
    }


def test_keras_3_and_its_evaluate_before_and_after_fit() -> None:
    # A Keras 3 script's output (evaluate, fit for 3 epochs, evaluate), as its author posted it.
    held = hold(
        [
            "313/313 ━━━━━━━━━━━━━━━━━━━━ 0s 301us/step - accuracy: 0.0778 - loss: 2.3594",
            "Initial cost: 2.3634371757507324, Initial accuracy: 0.07209999859333038",
            "Epoch 1/3",
            "1688/1688 ━━━━━━━━━━━━━━━━━━━━ 2s 822us/step - accuracy: 0.8730 - loss: 0.4257 - "
            "val_accuracy: 0.9687 - val_loss: 0.1058",
            "Epoch 2/3",
            "1688/1688 ━━━━━━━━━━━━━━━━━━━━ 1s 812us/step - accuracy: 0.9666 - loss: 0.1089 - "
            "val_accuracy: 0.9685 - val_loss: 0.0976",
            "Epoch 3/3",
            "1688/1688 ━━━━━━━━━━━━━━━━━━━━ 1s 809us/step - accuracy: 0.9799 - loss: 0.0667 - "
            "val_accuracy: 0.9758 - val_loss: 0.0775",
            "313/313 ━━━━━━━━━━━━━━━━━━━━ 0s 308us/step - accuracy: 0.9706 - loss: 0.0943",
            "Final cost: 0.08249370753765106, Final accuracy: 0.9742000102996826",
        ]
    )
    got = epochs(held)
    assert len(got) == 12
    assert (got["loss", 0], got["loss", 1], got["loss", 2]) == (0.4257, 0.1089, 0.0667)
    assert got["accuracy", 2] == 0.9799  # not evaluate's 0.9706
    assert got["val_loss", 2] == 0.0775


def keras3_frame(count: int, total: int, eta: str, metrics: str) -> str:
    """One update as keras/src/utils/progbar.py (Keras 3) writes it on a terminal: bold counter,
    green done and grey remaining ``━``, bold time, then time per step and the metrics."""
    done = 20 * count // total
    bar = f"\x1b[1m{count:{len(str(total))}d}/{total}\x1b[0m "
    if done:
        bar += f"\x1b[32m{'━' * done}\x1b[0m"
    bar += f"\x1b[37m{'━' * (20 - done)}\x1b[0m"
    return f"{bar} \x1b[1m{eta}\x1b[0m 19ms/step - {metrics}"


def test_keras_3_colours_and_redraws_as_a_log_file_gets_them() -> None:
    # Numbers from a keras.io example (31 steps; the last batch's update, then the epoch's end).
    first = keras3_frame(1, 31, "0s", "accuracy: 0.2812 - loss: 2.1480 - top-5-accuracy: 0.7812")
    last = keras3_frame(31, 31, "0s", "accuracy: 0.1950 - loss: 2.2002 - top-5-accuracy: 0.7058")
    final = keras3_frame(
        31,
        31,
        "1s",
        "accuracy: 0.1948 - loss: 2.1979 - top-5-accuracy: 0.7069 - val_accuracy: 0.3602 - "
        "val_loss: 1.9981 - val_top-5-accuracy: 0.7826",
    )
    epoch = "\r" + first + "\x08" * 100 + "\r" + last + "\x08" * 100 + "\r" + final
    # evaluate() after fit: a new bar of the same length, starting again from 1.
    evaluate = "\r" + keras3_frame(1, 31, "0s", "accuracy: 0.5 - loss: 9.0") + "\x08" * 80
    evaluate += "\r" + keras3_frame(31, 31, "0s", "accuracy: 0.5 - loss: 9.0")
    held = hold(["Epoch 2/60", epoch, evaluate])
    assert epochs(held) == {
        ("accuracy", 1): 0.1948,
        ("loss", 1): 2.1979,
        ("top-5-accuracy", 1): 0.7069,
        ("val_accuracy", 1): 0.3602,
        ("val_loss", 1): 1.9981,
        ("val_top-5-accuracy", 1): 0.7826,
    }


def test_evaluate_after_fit_does_not_overwrite_the_last_epoch() -> None:
    # A tutorial's verbose=1 fit, then model.evaluate(verbose=2) on the test set.
    held = hold(
        [
            "Epoch 10/10",
            "346/346 [==============================] - 13s 38ms/step - loss: 0.0167 - accuracy: "
            "0.9950",
            "231/231 - 3s - loss: 0.0693 - accuracy: 0.9827",
        ]
    )
    assert epochs(held) == {("loss", 9): 0.0167, ("accuracy", 9): 0.995}
    # The same with an evaluation set as long as the training one: its counter starts again.
    parser = LogMetricParser()
    hold(["Epoch 1/1", "100/100 [==============================] - 1s - loss: 0.5"], parser)
    again = ["  1/100 [..............................] - ETA: 0s - loss: 9.9", "100/100 - loss: 9"]
    assert hold(again, parser) == {}


def test_timing_fields_are_not_metrics() -> None:
    held = hold(
        [
            "Epoch 1/3",
            "  5/423 [..............................] - ETA: 1:23 - loss: 1.9 - acc: 0.5",
            # keras-team/keras#10506
            "423/423 [==============================] - 192s 454ms/step - loss: 1.8386 - "
            "mean_squared_error: 0.0049 - acc: 0.6136",
        ]
    )
    assert {tag for tag, _ in held} == {"loss", "mean_squared_error", "acc"}


def test_keras_callbacks_lines_and_epochs_printed_beside_keras() -> None:
    parser = LogMetricParser()
    held = hold(
        [
            "Epoch 3/10",
            "100/100 [==============================] - 2s 20ms/step - loss: 0.3105",
            "Epoch 3: val_loss improved from 0.31234 to 0.29876, saving model to /tmp/ckpt.h5",
            "Epoch 3: ReduceLROnPlateau reducing learning rate to 0.0005000000237487257.",
            # A custom callback printing Keras' 1-based epoch: the same step as the bar's.
            "Epoch 3: val_f1=0.8100",
        ],
        parser,
    )
    assert epochs(held) == {("loss", 2): 0.3105, ("val_f1", 2): 0.81}


def test_no_epoch_header_no_keras_points() -> None:
    line = "313/313 [==============================] - 1s 2ms/step - loss: 0.07 - accuracy: 0.97"
    assert one(line) == []


# key=value lines


@pytest.mark.parametrize(
    ("line", "want"),
    [
        # examples/trainer (trainer/task.py and trainer/ps.py print these).
        ("step 240 loss=0.008158 task=master-0", [("loss", 240, 0.008158, "step")]),
        ("eval step 240 loss=0.001234 task=evaluator-0", [("loss", 240, 0.001234, "step")]),
        (
            "checkpoint step 240 eval_loss=0.001234 saved /tmp/job/checkpoints/ckpt-240.json",
            [("eval_loss", 240, 0.001234, "step")],
        ),
        ("ps 0: global_step=12 shard_norm=0.500000", [("shard_norm", 12, 0.5, "step")]),
        ("final loss=0.001234", []),
        ("reported loss=0.001234 (goal MINIMIZE) to /tmp/hypertune/output.metrics", []),
        ("master-0: global step 240 reached --steps 240; done", []),
        ("Checkpoint at step 5 is not newer than global step 7; not restoring", []),
        ('TF_CONFIG task=master:0 cluster={"master": ["127.0.0.1:2222"], "ps": []}', []),
        ("flood 12 xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", []),
        (
            "RuntimeError: Training diverged at step 12 (loss=nan); lower --learning-rate",
            [("loss", 12, math.nan, "step")],
        ),
        # examples/platform_samples: these print their numbers in prose, so they give nothing.
        ("accuracy 0.8123 at step 200", []),
        ("epoch 0 mean loss across 2 ranks: 0.6931", []),
        ("max-depth=3 learning-rate=0.1: accuracy 0.8512", []),
        ("rank 0 of 2 (master 127.0.0.1:29500)", []),
        # examples/platform_samples/xgboost_census: xgboost's verbose_eval lines.
        ("[0]\ttest-error:0.17520", [("test-error", 0, 0.1752, "step")]),
        (
            "[5]\ttrain-logloss:0.31002\ttest-logloss:0.35211",
            [("train-logloss", 5, 0.31002, "step"), ("test-logloss", 5, 0.35211, "step")],
        ),
        ("[0]\ttrain-error:0.15000+0.00100\ttest-error:0.16000+0.00300", []),  # xgb.cv mean+std
    ],
)
def test_what_our_sample_trainers_print(line: str, want: list[tuple[str, int, float, str]]) -> None:
    got = one(line)
    assert [(t, s, a) for t, s, _, a in got] == [(t, s, a) for t, s, _, a in want]
    for (_, _, value, _), (_, _, expected, _) in zip(got, want, strict=True):
        assert value == expected or (math.isnan(value) and math.isnan(expected))


@pytest.mark.parametrize(
    ("line", "want"),
    [
        # TF Estimator (LoggingTensorHook, evaluation), copied from users' output.
        ("INFO:tensorflow:loss = 2.3025851, step = 1", [("loss", 1, 2.3025851)]),
        ("INFO:tensorflow:loss = 0.32175, step = 101 (0.643 sec)", [("loss", 101, 0.32175)]),
        ("INFO:tensorflow:global_step/sec: 155.718", []),
        (
            "INFO:tensorflow:Saving dict for global step 5000: accuracy = 0.9126, global_step = "
            "5000, loss = 0.9034075",
            [("accuracy", 5000, 0.9126), ("loss", 5000, 0.9034075)],
        ),
        (
            "INFO:tensorflow:Saving dict for global step 1000: average_loss = 32.15896, "
            "global_step = 1000, label/mean = 22.08, loss = 3215.896, prediction/mean = 22.404533",
            [
                ("average_loss", 1000, 32.15896),
                ("label/mean", 1000, 22.08),
                ("loss", 1000, 3215.896),
                ("prediction/mean", 1000, 22.404533),
            ],
        ),
        (
            "INFO:tensorflow:Saving dict for global step 400: accuracy = 0.731844, "
            "accuracy/threshold_0.500000_mean = 0.731844, auc = 0.721949, global_step = 400",
            [
                ("accuracy", 400, 0.731844),
                ("accuracy/threshold_0.500000_mean", 400, 0.731844),
                ("auc", 400, 0.721949),
            ],
        ),
        (
            "I0930 13:31:34.585190 140152603084608 estimator.py:2039] Saving dict for global step "
            "270000: accuracy = 0.53644705, global_step = 270000, loss = 2.6062012",
            [("accuracy", 270000, 0.53644705), ("loss", 270000, 2.6062012)],
        ),
        (
            "INFO:tensorflow:Saving 'checkpoint_path' summary for global step 1000: "
            "train/model.ckpt-1000",
            [],
        ),
        ("INFO:tensorflow:Loss for final step: 0.3025851.", []),
        # PyTorch examples: mnist/main.py, and a widely copied tutorial's loop.
        ("Train Epoch: 1 [640/60000 (1%)]\tLoss: 1.359586", [("Loss", 1, 1.359586)]),
        ("Test set: Average loss: 0.0335, Accuracy: 9890/10000 (99%)", []),
        ("Epoch [1/5], Step [100/600], Loss: 2.2208", [("Loss", 1, 2.2208)]),
        # Generic loops.
        ("step=100 loss=0.3 acc=0.9", [("loss", 100, 0.3), ("acc", 100, 0.9)]),
        ("Epoch 2, step 300: loss=0.4", [("loss", 300, 0.4)]),
        ("Epoch 2, step 300: loss 0.4", []),
        ("2025-05-01 12:00:00,123 INFO loss: 0.3 step: 4", [("loss", 4, 0.3)]),
        ("Step 100/1000: loss=0.25 lr=3e-4", [("loss", 100, 0.25), ("lr", 100, 3e-4)]),
        ("iteration 7 loss=0.5", [("loss", 7, 0.5)]),
        ("iter: 7 | loss: 0.5 | grad_norm: 1.25", [("loss", 7, 0.5), ("grad_norm", 7, 1.25)]),
        ("it=7 loss=0.5", [("loss", 7, 0.5)]),
        ("batch 7 loss=0.5", [("loss", 7, 0.5)]),
        ("epoch 2 batch 7 loss=0.5", [("loss", 2, 0.5)]),
        ("global step 5 (step 3) loss=1.5", [("loss", 5, 1.5)]),
        ("step 10 loss: 0.3 acc: 0.9", [("loss", 10, 0.3), ("acc", 10, 0.9)]),
        ("[step 10] train loss: 0.3 | val loss: 0.4", []),
        ("step 1 loss=1 loss=2", [("loss", 1, 2.0)]),
        ("step=10.0 loss=1", [("loss", 10, 1.0)]),
    ],
)
def test_key_value_lines_of_real_trainers(line: str, want: list[tuple[str, int, float]]) -> None:
    got = one(line)
    assert [(t, s, v) for t, s, v, _ in got] == want
    by_epoch = line.lower().startswith(("train epoch", "epoch [", "epoch 2 batch"))
    assert {a for *_, a in got} <= {"epoch" if by_epoch else "step"}


@pytest.mark.parametrize(
    "line",
    [
        "lr=0.01 batch_size=32",  # a config print has no step
        "Namespace(batch_size=64, epochs=14, lr=1.0, seed=1)",
        "max_step=1000 loss=0.3",
        "20ms/step loss=0.3",
        "--steps 240 loss=0.3",
        "it 7 loss=0.5",  # the English word
        "step=10.5 loss=1",
        "step=-3 loss=1",
        "step 99999999999999999999 loss=1",
        "steps 240 loss=0.3",
    ],
)
def test_lines_without_a_step_give_nothing(line: str) -> None:
    assert one(line) == []


@pytest.mark.parametrize(
    ("printed", "step"),
    [("0", 0), ("3", 3), ("0.0", 1), ("0.25", 1), ("1.0", 1), ("1.5", 2), ("12.00", 12)],
)
def test_epochs_outside_keras(printed: str, step: int) -> None:
    assert one(f"epoch={printed} loss=1") == [("loss", step, 1.0, "epoch")]


# Values and tags


@pytest.mark.parametrize(
    ("printed", "value"),
    [
        ("3", 3.0),
        ("-2.5", -2.5),
        ("+7", 7.0),
        (".5", 0.5),
        ("5.", 5.0),
        ("1e-4", 1e-4),
        ("2.9342e-05", 2.9342e-05),
        ("-1.5000E+00", -1.5),
        ("nan", math.nan),
        ("NaN", math.nan),
        ("-nan", math.nan),
        ("inf", math.inf),
        ("INF", math.inf),
        ("-inf", -math.inf),
        ("Infinity", math.inf),
        ("-Infinity", -math.inf),
        ("91.2%", 91.2),
    ],
)
def test_values(printed: str, value: float) -> None:
    ((tag, step, got, _),) = one(f"step 1 x={printed}, y=2")[:1]
    assert (tag, step) == ("x", 1)
    assert got == value or (math.isnan(got) and math.isnan(value))


@pytest.mark.parametrize(
    "printed",
    ["0.5s", "3ms", "1,234", "9890/10000", "0.1+0.02", "12:30", "0x1F", "1e", "nanx", "1.2.3"],
)
def test_what_is_not_a_number(printed: str) -> None:
    assert one(f"step 1 x={printed}") == []


def test_tags_are_kept_as_printed_and_sane() -> None:
    line = "step 1 val_loss=1 train/loss=2 Acc@1=3 top-1=4 'quoted'=5 \"dq\": 6 --lr=7 file.py:8"
    assert [(t, v) for t, _, v, _ in one(line)] == [
        ("val_loss", 1.0),
        ("train/loss", 2.0),
        ("Acc@1", 3.0),
        ("top-1", 4.0),
        ("quoted", 5.0),
        ("dq", 6.0),
    ]
    longest = "k" * MAX_TAG_CHARS
    assert [t for t, *_ in one(f"step 1 {longest}=1 {longest}x=2")] == [longest]


# Dicts


def test_hugging_face_trainer_dicts() -> None:
    held = hold(
        [
            # A TRL DPO run (transformers Trainer's printed logs), copied from its output.
            "{'loss': 0.6914, 'grad_norm': 3.3615094645372428, 'learning_rate': "
            "8.888888888888888e-06, 'rewards/chosen': 0.0, 'rewards/rejected': 0.0, "
            "'logps/chosen': -536.0, 'logits/chosen': 0.1, 'epoch': 0.0}",
            # Trainer's str(logs) of a training step, an evaluation and the end (built in the
            # format ProgressCallback.on_log prints).
            "{'loss': 0.4521, 'grad_norm': 2.75, 'learning_rate': 4.5e-05, 'epoch': 0.5}",
            "{'eval_loss': 0.2508, 'eval_accuracy': 0.9112, 'eval_runtime': 12.3456, "
            "'eval_samples_per_second': 81.0, 'eval_steps_per_second': 10.13, 'epoch': 1.0}",
            "{'loss': nan, 'grad_norm': nan, 'learning_rate': 4e-05, 'epoch': 1.25}",
            "{'train_runtime': 100.5, 'train_samples_per_second': 30.1, 'train_loss': 0.41, "
            "'epoch': 2.0}",
        ]
    )
    values = epochs(held)
    assert values["loss", 1] == 0.4521  # 0.0 and 0.5 fall in epoch 1; the later one wins
    assert values["rewards/chosen", 1] == 0.0
    assert values["logps/chosen", 1] == -536.0
    assert values["eval_accuracy", 1] == 0.9112
    assert math.isnan(values["loss", 2]) and math.isnan(values["grad_norm", 2])
    assert values["train_loss", 2] == 0.41
    assert ("epoch", 1) not in values


@pytest.mark.parametrize(
    ("line", "want"),
    [
        ('{"step": 10, "loss": 0.3, "lr": 1e-4}', [("loss", 10, 0.3), ("lr", 10, 1e-4)]),
        (
            '{"step": 1, "done": true, "phase": "train", "loss": "0.3", "acc": 0.5}',
            [("acc", 1, 0.5)],
        ),
        (
            '{"step": 3, "train": {"loss": 0.2, "deep": {"x": 1}}, "lr": 0.1}',
            [("train/loss", 3, 0.2), ("lr", 3, 0.1)],
        ),
        ('{"step": 2, "loss": NaN, "m": -Infinity}', [("loss", 2, math.nan), ("m", 2, -math.inf)]),
        ('{"lr": 0.01, "batch_size": 32}', []),
        ('{"step": true, "loss": 1}', []),
        ('{"epoch": 2, "global_step": 500, "loss": 1}', [("loss", 500, 1.0)]),
        ('INFO:root:{"iteration": 5, "loss": 0.5}', [("loss", 5, 0.5)]),
        # TF Estimator's evaluate() result, printed by the user's script.
        (
            "{'accuracy': 0.9126, 'loss': 0.9034075, 'global_step': 5000}",
            [("accuracy", 5000, 0.9126), ("loss", 5000, 0.9034075)],
        ),
        # numpy 2 and torch reprs of scalars.
        ("{'step': 4, 'loss': np.float64(0.25)}", [("loss", 4, 0.25)]),
        ("{'step': 4, 'loss': tensor(0.2500, device='cuda:0')}", [("loss", 4, 0.25)]),
        # Not Python at all: read as key: value pairs instead.
        ("{'step': 4, 'loss': 0.25, 'grad': <Tensor>}", [("loss", 4, 0.25)]),
        ("{'step': 4, 'loss': -inf, 'big': 1" + "0" * 400 + "}", [("loss", 4, -math.inf)]),
    ],
)
def test_json_and_python_dict_lines(line: str, want: list[tuple[str, int, float]]) -> None:
    got = one(line)
    assert [(t, s) for t, s, _, _ in got] == [(t, s) for t, s, _ in want]
    for (_, _, value, _), (_, _, expected) in zip(got, want, strict=True):
        assert value == expected or (math.isnan(value) and math.isnan(expected))


def test_a_fractional_epoch_on_a_keras_stream_is_zero_based_too() -> None:
    held = hold(["Epoch 1/2", " - 1s - loss: 0.5", "{'val_f1': 0.75, 'epoch': 1.0}"])
    assert epochs(held) == {("loss", 0): 0.5, ("val_f1", 0): 0.75}


# Robustness


def test_five_hundred_pairs_on_one_line() -> None:
    line = "step 7 " + " ".join(f"m{i}={i / 1000}" for i in range(500))
    got = one(line)
    assert [(t, v) for t, _, v, _ in got] == [(f"m{i}", i / 1000) for i in range(500)]


def test_only_the_first_scan_limit_characters_of_a_long_line_are_read() -> None:
    head = "step 3 first=1 "
    line = head + "pad=0 " * ((SCAN_LIMIT - len(head)) // 6) + "x" * (1 << 20) + " late=2"
    assert len(line) > (1 << 20)
    tags = {t for t, *_ in one(line)}
    assert tags == {"first", "pad"}


def test_carriage_returns_colours_and_crlf() -> None:
    assert one("step 1 loss=0.5\rstep 2 loss=0.25") == [("loss", 2, 0.25, "step")]
    assert one("step 3 loss=0.125\r") == [("loss", 3, 0.125, "step")]
    coloured = "\x1b[32mstep 4\x1b[0m loss=\x1b[1;31m0.5\x1b[0m"
    assert one(coloured) == [("loss", 4, 0.5, "step")]


def test_junk_and_tracebacks_give_nothing() -> None:
    parser = LogMetricParser()
    junk = ["\x00\xff\ufffd step=\x00 loss=1", "\udcff" * 50, "{" * 5000 + "}", "[" * 3000]
    assert [p for line in junk for p in parser.feed(line)] == []
    for path in sorted(TRACEBACKS.glob("*.txt")):
        lines = path.read_text(errors="replace").splitlines()
        assert [p for line in lines for p in parser.feed(line)] == [], path.name


def valid(point: LogPoint) -> bool:
    return (
        isinstance(point.step, int)
        and point.step >= 0
        and type(point.value) is float
        and point.axis in ("step", "epoch")
        and len(point.tag) <= MAX_TAG_CHARS
        and TAG.fullmatch(point.tag) is not None
    )


@settings(max_examples=300, deadline=None)
@given(lines=st.lists(st.text(), max_size=8))
def test_any_text_never_raises(lines: list[str]) -> None:
    parser = LogMetricParser()
    for line in lines:
        assert all(valid(p) for p in parser.feed(line))


PIECES = [
    "Epoch 3/10", "100/100", "7/Unknown", " [====>...]", " ━━━━", " - ", "loss", "val_acc", ": ",
    "=", " = ", "0.5", "-1e-3", "nan", "-inf", "91%", "step", "global step", "epoch", "batch",
    "iter", "it=", " ", "\t", "{", "}", "'", '"', ",", "[5]", "/", "\r", "\x08", "\x1b[32m",
    "\x1b[0m", "ETA: 1s", "2s 20ms/step", "12", "0.25", "True", "np.float64(", ")", "\x00", "é",
]  # fmt: skip


@settings(max_examples=500, deadline=None)
@given(
    lines=st.lists(
        st.lists(st.sampled_from(PIECES), max_size=24).map("".join), min_size=1, max_size=12
    )
)
def test_near_metric_text_never_raises_and_points_are_sane(lines: list[str]) -> None:
    parser = LogMetricParser()
    for line in lines:
        assert all(valid(p) for p in parser.feed(line))
