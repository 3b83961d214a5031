"""Census income with a tuned scikit-learn gradient boosting model, shaped like Google's
scikit-learn tuning samples: hyphenated hyperparameter flags, the metric reported with
cloudml-hypertune, and the model written under ``--job-dir`` plus the trial id from
``TF_CONFIG`` (the platform gave every trial the same ``--job-dir``).
"""

import argparse
import io
import json
import os

import hypertune
import joblib
import pandas as pd
from google.cloud import storage
from sklearn.ensemble import GradientBoostingClassifier

NUMERIC = ["age", "education-num", "capital-gain", "capital-loss", "hours-per-week"]
COLUMNS = (
    "age",
    "workclass",
    "fnlwgt",
    "education",
    "education-num",
    "marital-status",
    "occupation",
    "relationship",
    "race",
    "sex",
    "capital-gain",
    "capital-loss",
    "hours-per-week",
    "native-country",
    "income-level",
)


def split_gcs(uri):
    bucket, _, path = uri.replace("gs://", "").partition("/")
    return bucket, path.rstrip("/")


def read_table(client, uri):
    bucket, name = split_gcs(uri)
    data = client.bucket(bucket).blob(name).download_as_bytes()
    frame = pd.read_csv(io.BytesIO(data), header=None, names=COLUMNS, skipinitialspace=True)
    return frame[NUMERIC], frame["income-level"].str.rstrip(".") == ">50K"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--job-dir", required=True)
    parser.add_argument("--data-dir", required=True)
    parser.add_argument("--max-depth", type=int, default=3)
    parser.add_argument("--learning-rate", type=float, default=0.1)
    parser.add_argument("--n-estimators", type=int, default=50)
    args = parser.parse_args()

    client = storage.Client()
    train_x, train_y = read_table(client, args.data_dir.rstrip("/") + "/adult.data")
    test_x, test_y = read_table(client, args.data_dir.rstrip("/") + "/adult.test")
    model = GradientBoostingClassifier(
        max_depth=args.max_depth, learning_rate=args.learning_rate, n_estimators=args.n_estimators
    )
    model.fit(train_x, train_y)
    accuracy = float(model.score(test_x, test_y))
    print(
        f"max-depth={args.max_depth} learning-rate={args.learning_rate:.4g}: "
        f"accuracy {accuracy:.4f}"
    )
    hypertune.HyperTune().report_hyperparameter_tuning_metric(
        hyperparameter_metric_tag="accuracy", metric_value=accuracy, global_step=args.n_estimators
    )

    trial = json.loads(os.environ.get("TF_CONFIG", "{}")).get("task", {}).get("trial", "")
    bucket, prefix = split_gcs(os.path.join(args.job_dir, trial))
    joblib.dump(model, "model.joblib")
    client.bucket(bucket).blob(f"{prefix}/model.joblib".lstrip("/")).upload_from_filename(
        "model.joblib"
    )
    os.remove("model.joblib")


if __name__ == "__main__":
    main()
