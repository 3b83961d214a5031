"""Write a synthetic census table in the UCI "adult" layout that Google's census samples read.

The samples download ``adult.data`` / ``adult.test`` from Google's public bucket; this machine
has no internet, and the point is the platform, not the data. The rows have the same fifteen
columns, comma-and-space separated, with the same category spellings, and an income label that
depends on age, education and hours, so a model has something to learn (accuracy well above
the majority class). Deterministic: the same seed writes the same bytes.

    python make_census.py OUT_DIR [--rows 4000]
"""

from __future__ import annotations

import argparse
import random
from pathlib import Path

WORKCLASS = ["Private", "Self-emp-not-inc", "Local-gov", "State-gov", "Federal-gov"]
EDUCATION = [
    ("HS-grad", 9),
    ("Some-college", 10),
    ("Bachelors", 13),
    ("Masters", 14),
    ("Doctorate", 16),
    ("11th", 7),
]
MARITAL = ["Married-civ-spouse", "Never-married", "Divorced", "Separated", "Widowed"]
OCCUPATION = ["Adm-clerical", "Exec-managerial", "Prof-specialty", "Sales", "Craft-repair"]
RELATIONSHIP = ["Husband", "Wife", "Not-in-family", "Own-child", "Unmarried"]
RACE = ["White", "Black", "Asian-Pac-Islander", "Amer-Indian-Eskimo", "Other"]
SEX = ["Male", "Female"]
COUNTRY = ["United-States", "Mexico", "India", "Canada", "Germany"]


def row(rng: random.Random, test: bool) -> str:
    age = rng.randint(17, 80)
    education, years = rng.choice(EDUCATION)
    hours = rng.randint(10, 70)
    gain = rng.choice([0] * 9 + [rng.randint(1000, 20000)])
    score = (age - 40) / 15 + (years - 10) / 2 + (hours - 40) / 15 + gain / 10000
    rich = score + rng.gauss(0, 0.8) > 1.0
    label = (">50K" if rich else "<=50K") + ("." if test else "")
    fields = [
        age,
        rng.choice(WORKCLASS),
        rng.randint(20000, 400000),
        education,
        years,
        rng.choice(MARITAL),
        rng.choice(OCCUPATION),
        rng.choice(RELATIONSHIP),
        rng.choice(RACE),
        rng.choice(SEX),
        gain,
        rng.choice([0] * 19 + [1902]),
        hours,
        rng.choice(COUNTRY),
        label,
    ]
    return ", ".join(str(f) for f in fields)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--rows", type=int, default=4000)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    rng = random.Random(20261125)
    for name, rows, test in (
        ("adult.data", args.rows, False),
        ("adult.test", args.rows // 4, True),
    ):
        lines = [row(rng, test) for _ in range(rows)]
        (args.out / name).write_text("\n".join(lines) + "\n")
        print(f"{args.out / name}: {rows} rows")


if __name__ == "__main__":
    main()
