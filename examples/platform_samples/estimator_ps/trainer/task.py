"""Census income with a canned DNN Estimator on parameter servers, shaped like Google's census
Estimator sample: ``tf.estimator.train_and_evaluate`` reads the cluster (master or chief,
workers, parameter servers) from ``TF_CONFIG``, the workers train asynchronously against the
parameter servers, and the chief evaluates once training is done, writing ``accuracy`` into
its summary events (``<model dir>/eval``). ``train_and_evaluate`` itself evaluates only in a
local run or on an ``evaluator`` task: runtime 2.x names the first replica ``chief``, which
only trains, so without an evaluator in the cluster the chief calls ``evaluate`` itself.

Its hyperparameters have the sample's hyphenated names (``--first-layer-size``, ``--num-layers``,
``--scale-factor``). For tuning it appends the trial id from ``TF_CONFIG`` to ``--job-dir``, the
idiom Google's samples used, so trials never share a model directory; the tuning service reads
each trial's ``accuracy`` back from those summary events (the trainer reports nothing else).
"""

import argparse
import json
import os

import tensorflow as tf

NUMERIC = ["age", "education_num", "capital_gain", "capital_loss", "hours_per_week"]
COLUMNS = [
    "age",
    "workclass",
    "fnlwgt",
    "education",
    "education_num",
    "marital_status",
    "occupation",
    "relationship",
    "race",
    "gender",
    "capital_gain",
    "capital_loss",
    "hours_per_week",
    "native_country",
    "income_bracket",
]
DEFAULTS = [
    [0.0],
    [""],
    [0.0],
    [""],
    [0.0],
    [""],
    [""],
    [""],
    [""],
    [""],
    [0.0],
    [0.0],
    [0.0],
    [""],
    [""],
]


def input_fn(path, epochs, shuffle, batch_size=64):
    def parse(line):
        fields = tf.io.decode_csv(line, record_defaults=DEFAULTS)
        features = dict(zip(COLUMNS, fields))
        label = tf.strings.regex_full_match(
            tf.strings.strip(features.pop("income_bracket")), ">50K.?"
        )
        return {name: features[name] for name in [*NUMERIC, "education", "occupation"]}, tf.cast(
            label, tf.int32
        )

    def make():
        data = tf.data.TextLineDataset(path).map(parse)
        if shuffle:
            data = data.shuffle(1000, seed=0)
        return data.repeat(epochs).batch(batch_size)

    return make


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--job-dir", required=True)
    parser.add_argument("--data-dir", required=True)
    parser.add_argument("--first-layer-size", type=int, default=32)
    parser.add_argument("--num-layers", type=int, default=2)
    parser.add_argument("--scale-factor", type=float, default=0.5)
    parser.add_argument("--train-steps", type=int, default=300)
    args = parser.parse_args()

    trial = json.loads(os.environ.get("TF_CONFIG", "{}")).get("task", {}).get("trial", "")
    model_dir = os.path.join(args.job_dir, trial)
    sizes = [
        max(2, int(args.first_layer_size * args.scale_factor**i)) for i in range(args.num_layers)
    ]
    columns = [
        tf.feature_column.numeric_column(name, normalizer_fn=lambda x: x / 100.0)
        for name in NUMERIC
    ]
    for name in ("education", "occupation"):
        categories = tf.feature_column.categorical_column_with_hash_bucket(name, 32)
        columns.append(tf.feature_column.embedding_column(categories, 4))
    config = tf.estimator.RunConfig(model_dir=model_dir, save_checkpoints_steps=100)
    estimator = tf.estimator.DNNClassifier(
        hidden_units=sizes, feature_columns=columns, config=config
    )
    data = args.data_dir.rstrip("/")
    train = tf.estimator.TrainSpec(
        input_fn(data + "/adult.data", None, True), max_steps=args.train_steps
    )
    evaluate = tf.estimator.EvalSpec(
        input_fn(data + "/adult.test", 1, False), steps=None, throttle_secs=1
    )
    print(f"model dir {model_dir}, hidden units {sizes}")
    result = tf.estimator.train_and_evaluate(estimator, train, evaluate)
    metrics = result[0] if result else None
    tf_config = json.loads(os.environ.get("TF_CONFIG", "{}"))
    chief = tf_config.get("task", {}).get("type") in (None, "chief", "master")
    if not metrics and chief and "evaluator" not in tf_config.get("cluster", {}):
        metrics = estimator.evaluate(evaluate.input_fn, steps=None)
    if metrics:
        print("accuracy {:.4f} at step {}".format(metrics["accuracy"], metrics["global_step"]))


if __name__ == "__main__":
    main()
