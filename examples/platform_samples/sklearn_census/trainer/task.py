"""Census income with scikit-learn, shaped like Google's "getting started" trainer.

Reads ``adult.data``/``adult.test`` from Cloud Storage with google-cloud-storage, fits a
random forest over one-hot categories and the numeric columns, and writes ``model.joblib`` and
``metrics.json`` under ``--job-dir`` the way the samples did: by splitting the ``gs://`` URI into
bucket and prefix (so the job dir must arrive as the ``gs://`` URI it was given).
"""

import argparse
import datetime
import io
import json
import os

import joblib
import pandas as pd
from google.cloud import storage
from sklearn.compose import ColumnTransformer
from sklearn.ensemble import RandomForestClassifier
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import OneHotEncoder

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
CATEGORICAL = [
    "workclass",
    "education",
    "marital-status",
    "occupation",
    "relationship",
    "race",
    "sex",
    "native-country",
]
NUMERIC = ["age", "education-num", "capital-gain", "capital-loss", "hours-per-week"]


def split_gcs(uri):
    bucket, _, path = uri.replace("gs://", "").partition("/")
    return bucket, path.rstrip("/")


def read_table(client, uri):
    bucket, name = split_gcs(uri)
    data = client.bucket(bucket).blob(name).download_as_bytes()
    frame = pd.read_csv(io.BytesIO(data), header=None, names=COLUMNS, skipinitialspace=True)
    labels = frame.pop("income-level").str.rstrip(".") == ">50K"
    return frame, labels


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--job-dir", required=True)
    parser.add_argument("--data-dir", required=True)
    parser.add_argument("--n-estimators", type=int, default=50)
    args = parser.parse_args()

    client = storage.Client()
    train_x, train_y = read_table(client, args.data_dir.rstrip("/") + "/adult.data")
    test_x, test_y = read_table(client, args.data_dir.rstrip("/") + "/adult.test")
    prep = ColumnTransformer(
        [
            ("cat", OneHotEncoder(handle_unknown="ignore"), CATEGORICAL),
            ("num", "passthrough", NUMERIC),
        ]
    )
    model = Pipeline(
        [
            ("prep", prep),
            ("forest", RandomForestClassifier(n_estimators=args.n_estimators, random_state=0)),
        ]
    )
    model.fit(train_x, train_y)
    accuracy = float(model.score(test_x, test_y))
    print(f"test accuracy: {accuracy:.4f} on {len(test_y)} rows")

    joblib.dump(model, "model.joblib")
    bucket, prefix = split_gcs(args.job_dir)
    stamp = datetime.datetime.now().strftime("census_%Y%m%d_%H%M%S")
    blob = client.bucket(bucket).blob(f"{prefix}/{stamp}/model.joblib".lstrip("/"))
    blob.upload_from_filename("model.joblib")
    metrics = {"accuracy": accuracy, "model": f"gs://{bucket}/{blob.name}"}
    client.bucket(bucket).blob(f"{prefix}/metrics.json".lstrip("/")).upload_from_string(
        json.dumps(metrics), content_type="application/json"
    )
    print("model written to", metrics["model"])
    os.remove("model.joblib")


if __name__ == "__main__":
    main()
