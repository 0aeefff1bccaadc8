"""The headline job as a vectorised NumPy program:

    gcsim sweep --n 100 --s 0..50 --trials T

crc under the fixed load with exponential(1) workers: draw a trials x n
matrix, sort each row once, and read the order statistic k = n - s of every
row for s = 0..50 (crc decodes from any n - s workers; Tandon et al. 2017).

usage: python3 bench/numpy_headline.py [trials] [seed]
"""
import numpy as np

from numpy_common import arguments, chunks, k_of_n, write

trials, seed, rng = arguments(1_000_000)
n = 100
s = np.arange(0, 51)
k = n - s

times = []
for c in chunks(trials, n):
    x = rng.exponential(1.0, size=(c, n))
    x.sort(axis=1)
    times.append(k_of_n(x, k))
times = np.concatenate(times)
write("crc", n, s, k, times, uncoded=times[:, 0])
