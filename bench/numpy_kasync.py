"""K-async SGD as a vectorised NumPy program:

    gcsim sweep --n 100 --scheme k-async --k 50 --trials T

(Dutta et al. 2018; the timeline of crates/gcsim/src/engine/trial/asynchronous.rs.)
Every worker starts a gradient at time 0 (exponential(1) times); the master
applies an update whenever K gradients have arrived since the last one; a
worker that has sent its gradient waits for the update that includes it and
restarts on the new model with a fresh draw, the others go on. Idle workers
have sent, so the K gradients of the next update are the K earliest finish
times among the workers computing, and the update falls at the K-th of
them. A trial runs W = ceil(8 n / K) updates (the warm-up) and records the
time from the W-th update to the next: one partition per update, over all
trials at once. Without transfer times a gradient arrives when it is done.

usage: python3 bench/numpy_kasync.py [trials] [seed]
"""
import math

import numpy as np

from numpy_common import arguments, chunks, write

trials, seed, rng = arguments(100_000)
n, k = 100, 50
warmup = math.ceil(8 * n / k)

times, uncoded = [], []
for c in chunks(trials, n * (warmup + 1)):
    finish = rng.exponential(1.0, size=(c, n))
    uncoded.append(finish.max(axis=1))
    rows = np.arange(c)[:, None]
    last = np.zeros(c)
    for update in range(warmup + 1):
        senders = np.argpartition(finish, k - 1, axis=1)[:, :k]
        at = finish[rows, senders].max(axis=1)
        if update == warmup:
            times.append(at - last)
            break
        finish[rows, senders] = at[:, None] + rng.exponential(1.0, size=(c, k))
        last = at
times = np.concatenate(times)[:, None]
write("k-async", n, [n - k], [k], times, uncoded=np.concatenate(uncoded))
