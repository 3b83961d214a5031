"""Scalar points from what a trainer prints, for trainers that write no TensorFlow event files.

The metrics view reads each replica's log lines in order and feeds them to one
:class:`LogMetricParser` per replica (Keras prints ``Epoch 3/10`` on one line and that epoch's
numbers on a later one, so the parser keeps a little state). Each line gives back
``(tag, step, value)`` points; a point for a ``(tag, step)`` the caller already holds replaces
it, which is how an epoch's progress updates end with the epoch's final numbers.

What is recognised, and the choices made where the printed text leaves room:

- **Keras** ``model.fit`` progress (tf.keras / TF 1.x and 2.x, verbose 1 and 2, and Keras 3):
  ``Epoch 3/10`` then ``100/100 [====] - 2s 20ms/step - loss: 0.31 - accuracy: 0.88`` (or
  ``100/100 - 2s - loss: ...``, `` - 2s - loss: ...``, ``100/100 ━━━━ 2s 20ms/step - ...``).
  The step is the epoch, numbered from 0 (``Epoch 3/10`` is step 2): Keras' TensorBoard callback
  writes ``epoch_loss`` at the zero-based epoch, so a curve read from the log lines up with one
  read from the event files. Every update of an epoch gives the same ``(tag, step)`` points and
  the last one printed wins. Timing fields (``2s``, ``20ms/step``, ``ETA: 1s``) are not metrics.
  An epoch's progress only moves forward: a counter lower than the last one seen, or another
  total, is a new progress bar (``model.evaluate`` after ``fit``) and ends the epoch, so its
  numbers do not overwrite the last epoch's. A verbose=2 line is the whole epoch and ends it.
- **key=value** pairs (``loss=0.3``, ``loss: 0.3``, ``loss = 0.3``) on a line that has a step:
  ``step N`` / ``step=N`` / ``Step N/M`` / ``Step [N/M]``, ``global_step`` / ``global step N``,
  ``iteration`` / ``iter`` / ``it=N`` (the bare word "it" is English, so ``it`` needs ``=`` or
  ``:``), ``batch`` (axis "step"), ``epoch`` (axis "epoch"), XGBoost's ``[N]`` round at the start
  of the line. When several are on a line the most global one wins: global step, step, iteration,
  epoch, batch. With an epoch on the line, a batch, or a step written against a total
  (``Step [100/600]``), counts within the epoch and restarts with it, so the epoch is the step
  then. The step itself (and any other step key) is not a metric point. A line with no step
  gives nothing, so a config print (``lr=0.01 batch_size=32``) never becomes a curve, and neither
  does ``global_step/sec: 2.3`` unless a step is on its line.
  A ``key: value`` pair whose key follows a plain lower-case or capitalised word, or a bare
  number after one (``Average loss: 0.03``, ``train loss: 0.3 | val loss: 0.4``, ``mean loss
  across 2 ranks: 0.12``), is skipped: the key is only the last word of a longer name, and two
  such names would overwrite each other (``=`` binds tighter: ``mean loss=0.1`` is ``loss``).
  A ``key: value`` whose key has a dot is a source location (``hooks.py:262]``), not a metric.
  Bare ``loss 0.4`` pairs (no ``=`` or ``:``) are not read: in log text a word followed by a
  number is far more often prose (``received 3 requests``) than a metric.
- **Dicts**: a line ending in a JSON object (``{"step": 10, "loss": 0.3}``) or a printed Python
  dict (Hugging Face Trainer's ``{'loss': 0.31, 'learning_rate': 5e-05, 'epoch': 0.5}``; numpy
  2's ``np.float64(0.3)`` reads as 0.3). Numeric fields only: booleans, strings and lists are
  skipped. One level of nesting is read as ``parent/child`` (``{"train": {"loss": 0.3}}`` is
  ``train/loss``): TensorBoard groups tags by ``/``, and a logger that nests its metrics means
  that grouping; deeper levels are structure (configs, histograms), not scalars, and leaving
  them out bounds the work. The step keys are those of key=value lines, at the top level.
- **Epoch numbers** outside Keras' progress lines are kept as printed when they are integers
  (``epoch=3`` is step 3: whether a loop counts from 0 or 1 cannot be told from the text), except
  on a stream that has shown a Keras ``Epoch N/M`` header, where they are Keras' own 1-based
  numbers (its callbacks print ``Epoch 3: val_loss improved ...``) and step N-1 like the
  progress lines. A fractional epoch (Hugging Face prints ``'epoch': 0.25``, the epochs done so
  far, and no step) maps to the 1-based epoch it falls in, ``max(1, ceil(epoch))``: 0.25 and
  1.0 are epoch 1, 1.5 is epoch 2. The step is an integer, so several logs within one epoch
  share it and the last wins: such a curve has one point per epoch.
- **Values**: integers, decimals, exponents, ``nan``, ``inf``, ``-inf``, ``Infinity`` (any
  case). NaN and infinities are kept (a blown-up loss is worth seeing). A trailing ``%`` is
  dropped (``acc=91.2%`` is 91.2). Anything else glued to the number is not a number: ``0.5s``,
  ``3ms``, ``1,234``, ``9890/10000``, ``0.1+0.02``. Tags are kept as printed (``val_loss``,
  ``train/loss``, ``Loss``) and must be ASCII letters, digits, ``_ . / @ -``, starting with a
  letter or ``_``, at most 64 characters; quotes around a key are dropped.

Work per line is bounded: only the first :data:`SCAN_LIMIT` characters of a line are looked at
(of the last ``\\r`` frame when the line has several), and every scan is a single pass, so a line
of 500 pairs parses in time linear in its length and a 1 MB line costs what 32 KiB cost. Most log
lines are not metrics, and have no step: a few substring searches for the step words turn them
away before anything else is done (``benchmarks/log_metrics_bench.py`` measures the rates).
Nothing here raises on any text: ANSI colours, ``\\r`` redraws and backspaces are removed the way
the log view removes them (:func:`model.logs.log_text.clean`), binary junk and tracebacks give
nothing (or, for ``RuntimeError: diverged at step 12 (loss=nan)``, the point it states).
"""

from __future__ import annotations

import ast
import json
import math
import re
import string
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Final, Literal

from tui_app.model.logs.log_text import clean

__all__ = ["MAX_TAG_CHARS", "SCAN_LIMIT", "Axis", "LogMetricParser", "LogPoint"]

SCAN_LIMIT: Final = 32_768
"""Characters of one line (its last ``\\r`` frame) that are looked at; the rest is ignored."""
MAX_TAG_CHARS: Final = 64
"""Longer keys are not tags: past this length a "key" is a path, a hash or junk."""

Axis = Literal["step", "epoch"]


@dataclass(frozen=True, slots=True)
class LogPoint:
    """One scalar a trainer printed."""

    tag: str
    """As printed: ``loss``, ``val_accuracy``, ``train/loss``."""
    step: int
    """Never negative; counts what :attr:`axis` says."""
    value: float
    """NaN and infinities kept as printed: a diverged loss is a point, not a gap."""
    axis: Axis
    """``"step"`` (training steps, iterations, rounds) or ``"epoch"``."""


# A number as trainers print it; nan/inf in any case ("nan", "NaN", "Infinity", "-inf").
# Spelt out rather than re.IGNORECASE: a case-blind pattern is several times slower to search.
_NUMBER = (
    r"[-+]?(?:(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?"
    r"|[nN][aA][nN]|[iI][nN][fF](?:[iI][nN][iI][tT][yY])?)"
)
# What may follow a value: a unit, a ratio, a time or a thousands separator may not ("0.5s",
# "9890/10000", "12:30", "1,234", "0.1+0.02"); a percent sign is dropped.
_VALUE_END = r"%?(?=$|[\s;)\]}|'\"]|,(?![0-9]))"
_KEY = rf"[A-Za-z_][A-Za-z0-9_./@-]{{0,{MAX_TAG_CHARS - 1}}}"
# A key starts where no key character comes before (so not inside "--lr" or "x.y"); checking
# that first also keeps the search from trying every position inside a word.
_NOT_BEFORE_KEY = "A-Za-z0-9_./@-"

_PAIR = re.compile(
    rf"(?<![{_NOT_BEFORE_KEY}])(?P<q>['\"]?)(?P<key>{_KEY})(?P=q)[ \t]*(?P<sep>[=:])[ \t]*"
    rf"(?P<value>{_NUMBER}){_VALUE_END}",
    re.ASCII,
)
# Searched in the lower-cased line. It starts with the step words themselves, so the search
# skips ahead to them; where the word starts, and that "it" is followed by "=" or ":", is
# checked after the match (see _line_step).
_STEP = re.compile(
    r"(?P<key>global[ _]step|step|it(?:eration|er)?|epoch|batch)['\"]?"
    r"(?P<sep>[ \t]*[=:][ \t]*|[ \t]+)\[?[ \t]*(?P<num>[0-9]{1,18}(?:\.[0-9]+)?)"
    r"(?P<total>[ \t]*/[ \t]*[0-9]{1,18})?[ \t]*\]?(?![a-z0-9_.])",
    re.ASCII,
)
_NOT_BEFORE_STEP = frozenset("abcdefghijklmnopqrstuvwxyz0123456789_./@-")
# XGBoost's evaluation lines: "[12]\ttrain-logloss:0.31\ttest-logloss:0.35" (boosting round 12).
_ROUND = re.compile(r"\[([0-9]{1,18})\](?=\s)")
_ASCII_LOWER = str.maketrans(string.ascii_uppercase, string.ascii_lowercase)
_IT_SEP = re.compile(r"it['\"]?[ \t]*[=:]")

_EPOCH_HEADER = re.compile(r"Epoch ([0-9]{1,9})/[0-9]{1,9}\Z")
# The start of a Keras progress line: "100/100 ...", "  7/Unknown ...", or TF 1.x verbose=2's
# "- 3s - loss: ..." (no counter).
_KERAS_PROGRESS = re.compile(r"(?:([0-9]{1,12})/([0-9]{1,12}|Unknown)(?=\s)|-\s+[0-9]+s\s+-\s)")
_KERAS_METRIC = re.compile(rf" - (?P<key>{_KEY}): (?P<value>{_NUMBER})(?=\s|$)", re.ASCII)

_STEP_KEYS: Final = frozenset(("global_step", "step", "iteration", "iter", "it", "epoch", "batch"))
_STEP_RANK: Final = {
    "global_step": 0,
    "step": 1,
    "round": 1,
    "iteration": 2,
    "iter": 2,
    "it": 2,
    "epoch": 3,
    "batch": 4,
}
_TAG = re.compile(_KEY, re.ASCII)
_PLAIN_NUMBER = re.compile(r"[-+]?[0-9]+(?:\.[0-9]+)?")
_NAMED_NUMBERS: Final = {"nan": math.nan, "NaN": math.nan, "inf": math.inf, "Infinity": math.inf}
_BEFORE_KEY_WINDOW = 40
"""Characters looked at before a ``key:`` to find the word in front of it (bounds the work)."""
_FIRST_FRAMES = 4
"""``\\r`` frames looked at from the start of a Keras line for where its counter began."""


class LogMetricParser:
    """Points from one log stream (one replica), fed one line at a time, in order."""

    def __init__(self) -> None:
        self._epoch: int | None = None
        """The open Keras epoch (zero-based), or None outside ``model.fit``'s epochs."""
        self._target: str | None = None
        """The open epoch's progress total (``"100"``, ``"Unknown"``), once seen."""
        self._count = 0
        """The open epoch's progress counter last seen."""
        self._keras = False
        """Whether this stream has shown a Keras ``Epoch N/M`` header (see the module doc)."""

    def feed(self, text: str) -> list[LogPoint]:
        """The points one log line states (often none); see the module doc for the formats.

        Args:
            text: one line as the trainer printed it; ``\\r`` redraws, ANSI colours and
                backspaces are allowed (the last frame with content is read).

        Returns:
            Each tag at most once; a point for a ``(tag, step)`` seen before replaces it.
        """
        raw = text
        if self._epoch is None:
            # Most lines are not metrics: turn them away before any cleaning or parsing. Only
            # the ends of a long line matter (its first characters, or its last \r frame).
            probe = text if len(text) <= SCAN_LIMIT else text[:SCAN_LIMIT] + text[-SCAN_LIMIT:]
            lower = probe.lower()  # here the indices need not match: only words are looked for
            if (
                "step" not in lower
                and "epoch" not in lower
                and "iter" not in lower
                and "batch" not in lower
                and not _may_have_step(lower)
            ):
                return []
        if "\r" in text or "\x1b" in text or "\x08" in text:
            text = clean(text, max_chars=SCAN_LIMIT).text
        elif len(text) > SCAN_LIMIT:
            text = text[:SCAN_LIMIT]
        text = text.strip()
        if not text:
            return []
        if self._epoch is not None or text.startswith("Epoch "):
            keras = self._keras_line(text, raw)
            if keras is not None:
                return keras
        if text[-1] == "}" and "{" in text:
            points = self._dict_line(text)
            if points is not None:
                return points
        return self._pairs_line(text)

    # Keras

    def _keras_line(self, text: str, raw: str) -> list[LogPoint] | None:
        """Points of a Keras epoch line, [] for one that gives none, None if not Keras'."""
        header = _EPOCH_HEADER.match(text)
        if header:
            number = int(header.group(1))
            self._keras = True
            self._epoch = number - 1 if number > 0 else None
            self._target, self._count = None, 0
            return []
        progress = _KERAS_PROGRESS.match(text)
        if progress is None or self._epoch is None:
            return None
        count, target = progress.group(1), progress.group(2)
        first = _first_count(raw) if "\r" in raw else count
        if target is not None:
            if self._target is None:
                self._target = target
            elif target != self._target:
                self._epoch = None
                return []
        if first is not None and int(first) < self._count:
            self._epoch = None
            return []
        if count is not None:
            self._count = int(count)
        step = self._epoch
        found: dict[str, float] = {}
        for m in _KERAS_METRIC.finditer(text):
            key = m.group("key")
            if key != "ETA":
                found[key] = float(m.group("value"))
        has_bar = "[" in text or "━" in text or target == "Unknown"
        if not has_bar:
            self._epoch = None  # verbose=2 prints an epoch once, at its end
        return [LogPoint(tag, step, value, "epoch") for tag, value in found.items()]

    # Dicts: JSON objects and printed Python dicts

    def _dict_line(self, text: str) -> list[LogPoint] | None:
        """Points of a line ending in a dict; None when that is not a dict after all."""
        body = text[text.index("{") :]
        data: object
        try:
            data = json.loads(body)
        except (ValueError, RecursionError):
            data = _python_dict(body)
        if not isinstance(data, dict):
            return None
        located = self._dict_step(data)
        if located is None:
            return []
        step, axis = located
        found: dict[str, float] = {}
        for tag, value in _dict_fields(data):
            found[tag] = value
        return [LogPoint(tag, step, value, axis) for tag, value in found.items()]

    def _dict_step(self, data: Mapping[object, object]) -> tuple[int, Axis] | None:
        best: tuple[int, int, Axis] | None = None  # (rank, step, axis)
        has_epoch = any(isinstance(k, str) and k.lower() == "epoch" for k in data)
        for key, value in data.items():
            if not isinstance(key, str):
                continue
            name = key.lower()
            rank = _STEP_RANK.get(name)
            if rank is None or name == "round" or (name == "batch" and has_epoch):
                continue
            if best is not None and best[0] <= rank:
                continue
            step = self._epoch_step(value) if name == "epoch" else _whole(value)
            if step is not None:
                best = (rank, step, "epoch" if name == "epoch" else "step")
        return None if best is None else (best[1], best[2])

    # key=value lines

    def _pairs_line(self, text: str) -> list[LogPoint]:
        lower = _lower(text)
        if not _may_have_step(lower):
            return []
        ends: set[int] = set()  # where a step's or a pair's number ends (see _phrase_tail)
        located = self._line_step(lower, ends)
        if located is None:
            return []
        step, axis = located
        found: dict[str, float] = {}
        for m in _PAIR.finditer(text):
            ends.add(m.end("value"))
            key = m.group("key")
            if key.lower() in _STEP_KEYS:
                continue
            if m.group("sep") == ":" and ("." in key or _phrase_tail(text, m.start(), ends)):
                continue  # "hooks.py:262]" is a source location; see _phrase_tail
            found[key] = float(m.group("value"))
        return [LogPoint(tag, step, value, axis) for tag, value in found.items()]

    def _line_step(self, lower: str, ends: set[int]) -> tuple[int, Axis] | None:
        """The step a lower-cased line states (the module doc's ranking); notes numbers' ends."""
        candidates: list[tuple[str, str, bool]] = []  # (key, number, written against a total)
        round_ = _ROUND.match(lower)
        if round_:
            candidates.append(("round", round_.group(1), False))
        for m in _STEP.finditer(lower):
            start = m.start()
            if start and lower[start - 1] in _NOT_BEFORE_STEP:
                continue  # the end of a longer word: max_step, 20ms/step, --steps
            key = m.group("key").replace(" ", "_")
            if key == "it" and "=" not in m.group("sep") and ":" not in m.group("sep"):
                continue  # the bare word "it" is English
            ends.add(m.end("num"))
            candidates.append((key, m.group("num"), m.group("total") is not None))
        has_epoch = any(key == "epoch" for key, _, _ in candidates)
        best: tuple[int, int, Axis] | None = None
        for key, number, of_total in candidates:
            if has_epoch and (key == "batch" or (key != "epoch" and of_total)):
                continue  # counts within the epoch (see the module doc)
            rank = _STEP_RANK[key]
            if best is not None and best[0] <= rank:
                continue
            if key == "epoch":
                step = self._epoch_step(int(number) if "." not in number else float(number))
            else:
                step = _whole(float(number) if "." in number else int(number))
            if step is not None:
                best = (rank, step, "epoch" if key == "epoch" else "step")
        return None if best is None else (best[1], best[2])

    def _epoch_step(self, value: object) -> int | None:
        """An epoch as printed (int, or a fraction of epochs done) -> the step, as documented."""
        if isinstance(value, bool):
            return None
        if isinstance(value, int):
            if value < 0:
                return None
            return max(value - 1, 0) if self._keras else value
        if isinstance(value, float) and math.isfinite(value) and value >= 0:
            return max(1, math.ceil(value)) - (1 if self._keras else 0)
        return None


def _lower(text: str) -> str:
    """``text`` lower-cased, character for character (indices into it are indices into text)."""
    return text.lower() if text.isascii() else text.translate(_ASCII_LOWER)


def _may_have_step(lower: str) -> bool:
    """A quick look for a step word (a few substring searches): False means no step."""
    return (
        "step" in lower
        or "epoch" in lower
        or "iter" in lower
        or "batch" in lower
        or ("it" in lower and _IT_SEP.search(lower) is not None)
        or lower.lstrip()[:1] == "["
    )


def _first_count(raw: str) -> str | None:
    """The counter of the first Keras frame of a ``\\r``-redrawn line (where this bar began)."""
    for frame in raw.split("\r", _FIRST_FRAMES)[:_FIRST_FRAMES]:
        # Keras erases a frame with backspaces before the next "\r": what it showed counts.
        shown = clean(frame[:256].replace("\x08", ""), max_chars=256).text.strip()
        if shown:
            m = _KERAS_PROGRESS.match(shown)
            return m.group(1) if m else None
    return None


def _phrase_tail(text: str, start: int, ends: set[int]) -> bool:
    """Whether the key at ``start`` is the last word of a phrase, not a name of its own.

    It is when a plain word comes before it (``Average loss:``), or a bare number after a plain
    word (``mean loss across 2 ranks:``) unless that number is a step's or a pair's value
    (``step 10 loss: 0.3``, ``loss: 0.3 acc: 0.9``). All-capital words are log levels
    (``INFO loss: 0.3``), not part of a name.
    """
    window = max(0, start - _BEFORE_KEY_WINDOW)
    before = text[window:start].rstrip(" \t")
    if not before:
        return False
    words = before.rsplit(None, 2)
    if _plain_word(words[-1]):
        return True
    return (
        len(words) > 1
        and _PLAIN_NUMBER.fullmatch(words[-1]) is not None
        and _plain_word(words[-2])
        and window + len(before) not in ends
    )


def _plain_word(word: str) -> bool:
    return word.isalpha() and not word.isupper()


def _whole(value: object) -> int | None:
    """A step count: a non-negative integer, or a float that is one (``10.0``)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if 0 <= value < 1 << 63 else None
    if isinstance(value, float) and value.is_integer() and 0 <= value < 2.0**63:
        return int(value)
    return None


def _number(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        return float(value)
    except OverflowError:  # an integer beyond float's range: not a scalar anyone logged
        return None


def _dict_fields(data: Mapping[object, object]) -> Iterator[tuple[str, float]]:
    """``(tag, value)`` of a dict's numeric fields, one nested level as ``parent/child``."""
    for key, value in data.items():
        if not isinstance(key, str) or key.lower() in _STEP_KEYS:
            continue
        if isinstance(value, dict):
            for inner, item in value.items():
                if not isinstance(inner, str) or inner.lower() in _STEP_KEYS:
                    continue
                tag, number = f"{key}/{inner}", _number(item)
                if number is not None and _TAG.fullmatch(tag):
                    yield tag, number
            continue
        number = _number(value)
        if number is not None and _TAG.fullmatch(key):
            yield key, number


def _python_dict(body: str) -> dict[object, object] | None:
    """A printed Python dict read without running anything (``ast.parse``, not ``eval``).

    ``ast.literal_eval`` would do, but Python prints a NaN loss as ``nan``, a name it refuses,
    and a dict with one NaN in it is exactly the line worth reading.
    """
    try:
        tree = ast.parse(body, mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError):
        return None
    value = _literal(tree.body, 0)
    return value if isinstance(value, dict) else None


def _literal(node: ast.expr, depth: int) -> object:
    """Numbers, strings and dicts (two levels deep) of a parsed literal; None for the rest."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name):
        return _NAMED_NUMBERS.get(node.id)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        inner = _literal(node.operand, depth)
        if isinstance(inner, int | float) and not isinstance(inner, bool):
            return -inner if isinstance(node.op, ast.USub) else inner
        return None
    if isinstance(node, ast.Call) and len(node.args) == 1:
        # numpy 2 prints its scalars as np.float64(0.3), torch as tensor(0.3).
        inner = _literal(node.args[0], depth)
        return inner if isinstance(inner, int | float) else None
    if isinstance(node, ast.Dict) and depth < 2:
        out: dict[object, object] = {}
        for key, item in zip(node.keys, node.values, strict=True):
            if isinstance(key, ast.Constant) and isinstance(key.value, str):
                out[key.value] = _literal(item, depth + 1)
        return out
    return None
