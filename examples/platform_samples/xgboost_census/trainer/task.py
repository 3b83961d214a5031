"""Census income with XGBoost, shaped like Google's XGBoost "getting started" trainer.

Data through google-cloud-storage, categories label-encoded, ``xgb.train`` on a DMatrix, the
booster saved as ``model.bst`` under ``--job-dir`` (split from its ``gs://`` URI, as the samples
did) with the test error beside it.
"""

import argparse
import io
import json

import pandas as pd
import xgboost as xgb
from google.cloud import storage
from sklearn.preprocessing import LabelEncoder

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


def split_gcs(uri):
    bucket, _, path = uri.replace("gs://", "").partition("/")
    return bucket, path.rstrip("/")


def read_table(client, uri):
    bucket, name = split_gcs(uri)
    data = client.bucket(bucket).blob(name).download_as_bytes()
    frame = pd.read_csv(io.BytesIO(data), header=None, names=COLUMNS, skipinitialspace=True)
    labels = (frame.pop("income-level").str.rstrip(".") == ">50K").astype(int)
    return frame, labels


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--job-dir", required=True)
    parser.add_argument("--data-dir", required=True)
    parser.add_argument("--rounds", type=int, default=20)
    args = parser.parse_args()

    client = storage.Client()
    train_x, train_y = read_table(client, args.data_dir.rstrip("/") + "/adult.data")
    test_x, test_y = read_table(client, args.data_dir.rstrip("/") + "/adult.test")
    for column in CATEGORICAL:
        encoder = LabelEncoder().fit(pd.concat([train_x[column], test_x[column]]))
        train_x[column] = encoder.transform(train_x[column])
        test_x[column] = encoder.transform(test_x[column])
    dtrain = xgb.DMatrix(train_x, train_y)
    dtest = xgb.DMatrix(test_x, test_y)
    evals = {}
    booster = xgb.train(
        {"objective": "binary:logistic", "eval_metric": "error"},
        dtrain,
        args.rounds,
        evals=[(dtest, "test")],
        evals_result=evals,
        verbose_eval=5,
    )
    error = float(evals["test"]["error"][-1])
    print(f"test error: {error:.4f} (xgboost {xgb.__version__})")

    booster.save_model("model.bst")
    bucket, prefix = split_gcs(args.job_dir)
    client.bucket(bucket).blob(f"{prefix}/model.bst".lstrip("/")).upload_from_filename("model.bst")
    client.bucket(bucket).blob(f"{prefix}/metrics.json".lstrip("/")).upload_from_string(
        json.dumps({"error": error, "xgboost": xgb.__version__})
    )


if __name__ == "__main__":
    main()
