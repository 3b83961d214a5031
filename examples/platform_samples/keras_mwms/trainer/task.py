"""Census income with Keras on MultiWorkerMirroredStrategy, shaped like TensorFlow's multi-worker
tutorial as people ran it on AI Platform (a master and workers, ``TF_CONFIG`` from the platform).

Every replica reads the CSV from Cloud Storage with ``tf.io.gfile`` and trains in lockstep
(collective all-reduce between the replicas); the chief saves the model under ``--job-dir`` and
the others save into a scratch folder, as the tutorial says each worker must save, since saving
is collective.
"""

import argparse
import json
import os
import tempfile

import numpy as np
import tensorflow as tf

NUMERIC = [0, 4, 10, 11, 12]  # age, education-num, capital-gain, capital-loss, hours-per-week


def load(path):
    with tf.io.gfile.GFile(path) as f:
        rows = [line.split(", ") for line in f.read().splitlines() if line.strip()]
    x = np.array([[float(r[i]) for i in NUMERIC] for r in rows], dtype="float32")
    y = np.array([r[14].rstrip(".") == ">50K" for r in rows], dtype="float32")
    return x, y


def is_chief(task):
    return task.get("type") in (None, "chief", "master") or (
        task.get("type") == "worker" and task.get("index") == 0 and "chief" not in CLUSTER
    )


TF_CONFIG = json.loads(os.environ.get("TF_CONFIG", "{}"))
CLUSTER = TF_CONFIG.get("cluster", {})


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--job-dir", required=True)
    parser.add_argument("--data-dir", required=True)
    parser.add_argument("--epochs", type=int, default=3)
    args = parser.parse_args()

    strategy = tf.distribute.MultiWorkerMirroredStrategy()
    replicas = strategy.num_replicas_in_sync
    print(f"replicas in sync: {replicas}, tensorflow {tf.__version__}")
    x, y = load(args.data_dir.rstrip("/") + "/adult.data")
    mean, std = x.mean(axis=0), x.std(axis=0) + 1e-6
    x = (x - mean) / std
    held = len(y) // 5  # the last fifth is the validation set, as the census samples split it
    data = tf.data.Dataset.from_tensor_slices((x[:-held], y[:-held])).shuffle(len(y), seed=1)
    data = data.repeat().batch(32 * replicas)
    # Repeated, as the training data is: the strategy shards it across the replicas, and a
    # finite set would run out before validation_steps after the first epoch.
    validation = tf.data.Dataset.from_tensor_slices((x[-held:], y[-held:]))
    validation = validation.repeat().batch(32 * replicas)
    with strategy.scope():
        model = tf.keras.Sequential(
            [
                tf.keras.layers.Dense(16, activation="relu", input_shape=(len(NUMERIC),)),
                tf.keras.layers.Dense(1, activation="sigmoid"),
            ]
        )
        model.compile(optimizer="adam", loss="binary_crossentropy", metrics=["accuracy"])
    # As Google's census Keras sample does: TensorBoard summaries under the job dir (train/ and
    # validation/ runs, histograms of the weights beside the scalars). Under the strategy, the
    # callback has each non-chief worker write to a temporary folder of its own.
    tensorboard = tf.keras.callbacks.TensorBoard(
        os.path.join(args.job_dir, "keras_tensorboard"), histogram_freq=1
    )
    history = model.fit(
        data,
        epochs=args.epochs,
        steps_per_epoch=40,
        validation_data=validation,
        validation_steps=10,
        callbacks=[tensorboard],
        verbose=2,
    )
    print("final accuracy: {:.4f}".format(history.history["accuracy"][-1]))

    task = TF_CONFIG.get("task", {})
    target = os.path.join(args.job_dir, "model")
    if not is_chief(task):
        target = tempfile.mkdtemp()
    model.save(target)
    if is_chief(task):
        with tf.io.gfile.GFile(os.path.join(args.job_dir, "metrics.json"), "w") as f:
            f.write(json.dumps({"accuracy": history.history["accuracy"][-1], "replicas": replicas}))
        print("model saved to", target)


if __name__ == "__main__":
    main()
