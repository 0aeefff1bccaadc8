"""Whether gcsim's and NumPy's results of one job agree.

usage: python3 bench/agree.py GCSIM_CSV NUMPY_CSV

Configurations are matched by (scheme, s). Two Monte Carlo means of the same
quantity agree when |mean_g - mean_np| <= 5 sqrt(se_g^2 + se_np^2): each
comparison then fails by chance with probability about 6e-7 (normal means),
so over the few hundred configurations of the suite a failure means that
one of the programs is wrong. Equal values (a deadline's constant time,
both infinite) agree. A column X that NumPy writes with X_se beside it is
compared with gcsim's X within 5 X_se, gcsim's value taken as exact (it
writes closed forms there: the deadline's data_fraction for i.i.d.
workers). Prints `agree`, or `DIFFER` with how many configurations do
not and the farthest; each configuration that does not goes to stderr.
"""
import csv
import math
import sys


def rows(path):
    with open(path, newline="") as f:
        lines = [l for l in f if not l.startswith("#")]
    return {(r["scheme"], int(r["s"])): r for r in csv.DictReader(lines)}


def close(a, b, tolerance):
    return a == b or abs(a - b) <= tolerance


gcsim, numpy = rows(sys.argv[1]), rows(sys.argv[2])
problems = []  # (distance in standard errors, configuration, description)
for key in sorted(set(gcsim) | set(numpy)):
    name = f"{key[0]} s={key[1]}"
    if key not in gcsim or key not in numpy:
        problems.append((math.inf, name, f"{name} only in {'gcsim' if key in gcsim else 'numpy'}"))
        continue
    g, n = gcsim[key], numpy[key]
    mg, mn = float(g["mean"]), float(n["mean"])
    se = math.hypot(float(g["std_err"] or 0), float(n["std_err"] or 0))
    if not close(mg, mn, 5 * se):
        z = abs(mg - mn) / se if se > 0 else math.inf
        problems.append((z, name, f"{name} mean: gcsim {mg:.6g}, numpy {mn:.6g} ({z:.1f} se)"))
    for column in n:
        if column.endswith("_se") or column + "_se" not in n:
            continue
        xg, xn, sx = float(g[column]), float(n[column]), float(n[column + "_se"])
        if not close(xg, xn, 5 * sx):
            z = abs(xg - xn) / sx if sx > 0 else math.inf
            problems.append((z, f"{name} {column}", f"{name} {column}: gcsim {xg:.6g}, numpy {xn:.6g} ({z:.1f} se)"))
for _, _, text in problems:
    print(text, file=sys.stderr)
if problems:
    z, worst, _ = max(problems)
    print(f"DIFFER: {len(problems)} of {len(set(gcsim) | set(numpy))}, farthest {worst} ({z:.0f} se)")
else:
    print("agree")
