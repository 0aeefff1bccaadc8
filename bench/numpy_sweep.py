"""The headline job written as a vectorised NumPy program, for comparison.

gcsim sweep --n 100 --s 0..50 --trials T (exponential rate 1, fixed load,
crc): draw a trials x n matrix, sort each row once, read the order statistic
k = n - s of every row for s = 0..50, then the mean, its standard error and
95% interval, np.percentile at 50/90/99/99.9, and the speedups. Writes the
same columns as gcsim's CSV to stdout.

usage: python3 bench/numpy_sweep.py [trials] [seed]
"""
import sys

import numpy as np

trials = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
seed = int(sys.argv[2]) if len(sys.argv) > 2 else 0
n = 100
s = np.arange(0, 51)
k = n - s

rng = np.random.default_rng(seed)
x = rng.exponential(1.0, size=(trials, n))
x.sort(axis=1)
t = x[:, k - 1]
mean = t.mean(axis=0)
se = t.std(axis=0, ddof=1) / np.sqrt(trials)
p50, p90, p99, p999 = np.percentile(t, [50, 90, 99, 99.9], axis=0, method="inverted_cdf")
print("scheme,n,s,m,k,load,message,exact,trials,mean,std_err,ci95_low,ci95_high,p50,p90,p99,p999,speedup,p99_speedup")
for i in range(len(s)):
    print(
        f"crc,{n},{s[i]},,{k[i]},{s[i] + 1}.0,1.0,true,{trials},{mean[i]},{se[i]},"
        f"{mean[i] - 1.96 * se[i]},{mean[i] + 1.96 * se[i]},{p50[i]},{p90[i]},{p99[i]},{p999[i]},"
        f"{mean[0] / mean[i]},{p99[0] / p99[i]}"
    )
