"""Speculative copies as a vectorised NumPy program:

    gcsim sweep --n 100 --scheme speculative --trials T

(defaults Q = 0.75, F = 1). Each worker's task is its uncoded share; the
master counts results as they arrive (A_i, exponential(1) here); at t_Q, the
ceil(Q n)-th, it waits until F t_Q, then hands each task whose result is
not in, in task order, to an idle worker (one whose own result is in,
earliest first), while idle workers last. A copy runs from F t_Q for a fresh
draw of its worker's law and the task is done at the first of its results;
the iteration ends when every task is (README, speculative; Dean &
Ghemawat 2008). The workers are i.i.d., so which idle worker runs a copy
does not change its law: the j-th late task's copy takes the j-th fresh
draw of its trial.

usage: python3 bench/numpy_speculative.py [trials] [seed]
"""
import math

import numpy as np

from numpy_common import arguments, chunks, write

trials, seed, rng = arguments(1_000_000)
n, after, factor = 100, 0.75, 1.0
q = min(max(math.ceil(after * n), 1), n)

times, uncoded = [], []
for c in chunks(trials, n):
    a = rng.exponential(1.0, size=(c, n))
    relaunch = factor * np.partition(a, q - 1, axis=1)[:, q - 1]
    late = a > relaunch[:, None]
    idle = n - late.sum(axis=1)
    order = np.cumsum(late, axis=1) - 1  # each late task's place among them
    copied = late & (order < idle[:, None])
    fresh = rng.exponential(1.0, size=(c, max(1, int(copied.sum(axis=1).max()))))
    copy = relaunch[:, None] + np.take_along_axis(fresh, np.where(copied, order, 0), axis=1)
    done = np.where(copied, np.minimum(a, copy), a)
    times.append(done.max(axis=1))
    uncoded.append(a.max(axis=1))
times = np.concatenate(times)[:, None]
write("speculative", n, [0], [n], times, uncoded=np.concatenate(uncoded))
