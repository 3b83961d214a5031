"""Census income with PyTorch DistributedDataParallel over gloo, shaped like the PyTorch samples
people ran on AI Platform and Vertex AI: ``init_process_group`` reads ``MASTER_ADDR``,
``MASTER_PORT``, ``WORLD_SIZE`` and ``RANK`` from the environment the platform sets, each rank
trains on its shard, gradients are averaged across the replicas, and rank 0 saves the model
under ``--job-dir`` through google-cloud-storage.
"""

import argparse
import io
import os

import torch
import torch.distributed as dist
from google.cloud import storage
from torch.nn.parallel import DistributedDataParallel

NUMERIC = [0, 4, 10, 11, 12]


def split_gcs(uri):
    bucket, _, path = uri.replace("gs://", "").partition("/")
    return bucket, path.rstrip("/")


def load(client, uri):
    bucket, name = split_gcs(uri)
    text = client.bucket(bucket).blob(name).download_as_bytes().decode()
    rows = [line.split(", ") for line in text.splitlines() if line.strip()]
    x = torch.tensor([[float(r[i]) for i in NUMERIC] for r in rows])
    y = torch.tensor([[1.0 if r[14].rstrip(".") == ">50K" else 0.0] for r in rows])
    return (x - x.mean(0)) / (x.std(0) + 1e-6), y


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--job-dir", required=True)
    parser.add_argument("--data-dir", required=True)
    parser.add_argument("--epochs", type=int, default=5)
    args = parser.parse_args()

    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    print(
        "rank {} of {} (master {}:{})".format(
            rank, world, os.environ["MASTER_ADDR"], os.environ["MASTER_PORT"]
        )
    )
    client = storage.Client()
    x, y = load(client, args.data_dir.rstrip("/") + "/adult.data")
    x, y = x[rank::world], y[rank::world]
    torch.manual_seed(0)
    model = DistributedDataParallel(
        torch.nn.Sequential(
            torch.nn.Linear(len(NUMERIC), 16), torch.nn.ReLU(), torch.nn.Linear(16, 1)
        )
    )
    optimiser = torch.optim.Adam(model.parameters(), lr=0.01)
    loss_fn = torch.nn.BCEWithLogitsLoss()
    for epoch in range(args.epochs):
        for start in range(0, len(y), 64):
            optimiser.zero_grad()
            loss = loss_fn(model(x[start : start + 64]), y[start : start + 64])
            loss.backward()
            optimiser.step()
        total = torch.tensor([loss.item()])
        dist.all_reduce(total)
        print(f"epoch {epoch} mean loss across {world} ranks: {total.item() / world:.4f}")
    with torch.no_grad():
        accuracy = ((model(x) > 0).float() == y).float().mean()
    dist.all_reduce(accuracy)
    if rank == 0:
        buffer = io.BytesIO()
        torch.save(model.module.state_dict(), buffer)
        bucket, prefix = split_gcs(args.job_dir)
        client.bucket(bucket).blob(f"{prefix}/model.pt".lstrip("/")).upload_from_string(
            buffer.getvalue()
        )
        summary = f"accuracy {accuracy.item() / world:.4f} over {world} ranks"
        client.bucket(bucket).blob(f"{prefix}/metrics.txt".lstrip("/")).upload_from_string(summary)
        print(summary)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
