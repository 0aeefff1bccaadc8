"""A deadline as a vectorised NumPy program:

    gcsim sweep --n 100 --scheme timeout --timeout 1.5 --trials T

The master waits for all n workers until T, then proceeds with those that
have arrived, or with the first to arrive if none has: the iteration time
is min(A_(n), max(T, A_(1))), A the arrivals (here the exponential(1) finish
times). Besides the time, the share of the data in the update: the mean
number of workers in by the end, over n (gcsim's data_fraction, a closed
form for i.i.d. workers), written with its standard error.

usage: python3 bench/numpy_timeout.py [trials] [seed]
"""
import numpy as np

from numpy_common import arguments, chunks, write

trials, seed, rng = arguments(1_000_000)
n, deadline = 100, 1.5

times, fraction, uncoded = [], [], []
for c in chunks(trials, n):
    a = rng.exponential(1.0, size=(c, n))
    first, last = a.min(axis=1), a.max(axis=1)
    end = np.minimum(last, np.maximum(deadline, first))
    times.append(end)
    fraction.append((a <= end[:, None]).mean(axis=1))
    uncoded.append(last)
times, fraction = np.concatenate(times)[:, None], np.concatenate(fraction)
extra = {"data_fraction": ([fraction.mean()], [fraction.std(ddof=1) / np.sqrt(trials)])}
write("timeout", n, [0], [n], times, uncoded=np.concatenate(uncoded), extra=extra)
