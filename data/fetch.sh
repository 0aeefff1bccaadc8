#!/usr/bin/env bash
# Rebuilds data/breast-cancer.csv and data/diabetes.csv from the scikit-learn
# wheel on the Python package index and checks their sha256. Not run by CI:
# the files are committed; this records how they were made.
#
# Usage: data/fetch.sh            (from the repository root; needs pip, python3)
set -euo pipefail

VERSION=1.6.1
DATA_DIR="$(cd "$(dirname "$0")" && pwd)"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT

# Any wheel of the release carries the same data files; pin one so the
# download does not depend on the host's Python.
pip download "scikit-learn==$VERSION" --no-deps --only-binary=:all: \
    --platform manylinux2014_x86_64 --python-version 3.11 --implementation cp \
    -d "$WORK" --quiet

python3 - "$WORK"/scikit_learn-"$VERSION"-*.whl "$DATA_DIR" <<'PY'
import csv, gzip, io, sys, zipfile

wheel, out = sys.argv[1], sys.argv[2]
z = zipfile.ZipFile(wheel)

# breast_cancer.csv: the first line is "569,30,malignant,benign" (rows,
# features, target names); then 30 features and the class (0 = malignant,
# 1 = benign), as load_breast_cancer in sklearn/datasets/_base.py reads it.
# The names are that function's feature_names, spaces made underscores.
names = [
    "mean radius", "mean texture", "mean perimeter", "mean area",
    "mean smoothness", "mean compactness", "mean concavity",
    "mean concave points", "mean symmetry", "mean fractal dimension",
    "radius error", "texture error", "perimeter error", "area error",
    "smoothness error", "compactness error", "concavity error",
    "concave points error", "symmetry error", "fractal dimension error",
    "worst radius", "worst texture", "worst perimeter", "worst area",
    "worst smoothness", "worst compactness", "worst concavity",
    "worst concave points", "worst symmetry", "worst fractal dimension",
]
rows = list(csv.reader(io.TextIOWrapper(z.open("sklearn/datasets/data/breast_cancer.csv"), "utf-8")))
n, d = int(rows[0][0]), int(rows[0][1])
body = rows[1:]
assert (n, d) == (569, 30) and len(body) == n and all(len(r) == d + 1 for r in body)
with open(f"{out}/breast-cancer.csv", "w", newline="") as f:
    f.write(",".join([s.replace(" ", "_") for s in names] + ["target"]) + "\n")
    for r in body:
        assert r[-1] in ("0", "1")
        f.write(",".join(r) + "\n")

# diabetes: the raw (unscaled) features, space-separated, and the target
# (written as 1.510000000000000000e+02; every value is an integer).
x = gzip.decompress(z.read("sklearn/datasets/data/diabetes_data_raw.csv.gz")).decode().split("\n")
y = gzip.decompress(z.read("sklearn/datasets/data/diabetes_target.csv.gz")).decode().split("\n")
x = [l.split() for l in x if l.strip()]
y = [float(l) for l in y if l.strip()]
assert len(x) == len(y) == 442 and all(len(r) == 10 for r in x)
with open(f"{out}/diabetes.csv", "w", newline="") as f:
    f.write("age,sex,bmi,bp,s1,s2,s3,s4,s5,s6,target\n")
    for r, t in zip(x, y):
        assert t == int(t)
        f.write(",".join(r + [str(int(t))]) + "\n")
PY

cd "$DATA_DIR"
sha256sum --check - <<'SUMS'
432ff316e7bfb60b70a275064b4401315cc39f09c9099d031013a23647e98687  breast-cancer.csv
f5060bc32176d2f47695065d12478e468fac452a515ffc00fce404de6e94a4d2  diabetes.csv
SUMS
