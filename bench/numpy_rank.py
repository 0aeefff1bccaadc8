"""crc decoded with its real encoding matrix, as a vectorised NumPy program:

    gcsim sweep --n 50 --scheme crc --s 0..10 --decoder rank --trials T

The code (Tandon et al. 2017, section 4.2, Algorithm 2, as crates/gcsim/src/codes/build.rs
builds it): draw H, s x n, i.i.d. standard normal, and replace its last
column by minus the sum of the others so that H 1 = 0; row i of B has
B[i, i] = 1 and, on the partitions J = i+1, ..., i+s (mod n), the solution x
of H[:, J] x = -H[:, i], so every row lies in the null space of H, which
holds the all-ones vector; rows are then scaled to unit norm. (H is this
program's own draw, not gcsim's: any such H gives the same law.)

The master (crates/gcsim/src/engine/trial/evaluate.rs) takes the arrivals in order and
stops at the shortest prefix F whose rows of B span the all-ones vector:
the relative residual |1 - P_F 1| / |1| below 1e-9, P_F the projection on
the row space of B_F computed from its singular value decomposition with
singular values below sigma_max * n * eps dropped (the LAPACK/NumPy rank
rule gcsim uses). Decodability only grows with F, so the prefix is found by
bisection, vectorised over the trials still searching: the rows not in a
trial's prefix are zeroed (which leaves the row space unchanged), so every
trial's test is one n x n SVD in one batched call. The full set is tested
once per code (it is the same matrix in every trial); a code that never
decodes would make every time infinite.

usage: python3 bench/numpy_rank.py [trials] [seed]
"""
import numpy as np

from numpy_common import arguments, chunks, write

TOLERANCE = 1e-9

trials, seed, rng = arguments(300)
n = 50
s = np.arange(0, 11)
k = n - s
code_rng = np.random.default_rng(seed + 1)


def crc_code(n, s):
    """The crc encoding matrix B (n x n), rows of unit norm."""
    b = np.eye(n)
    if s == 0:
        return b
    h = code_rng.standard_normal((s, n))
    h[:, -1] = -h[:, :-1].sum(axis=1)
    rows = np.arange(n)
    cols = (rows[:, None] + np.arange(1, s + 1)) % n
    a = np.transpose(h[:, cols], (1, 0, 2))  # n systems, s x s
    x = np.linalg.solve(a, -h.T[:, :, None])[:, :, 0]
    b[rows[:, None], cols] = x
    return b / np.linalg.norm(b, axis=1, keepdims=True)


def decodable(m):
    """For a batch of n x n matrices, whether 1 is in each one's row space."""
    _, sv, vh = np.linalg.svd(m)
    kept = sv > sv[:, :1] * m.shape[-1] * np.finfo(float).eps
    coeff = vh.sum(axis=2) * kept
    projection = np.einsum("ak,akj->aj", coeff, vh)
    residual = np.linalg.norm(1.0 - projection, axis=1) / np.sqrt(m.shape[-1])
    return residual < TOLERANCE


codes = [crc_code(n, v) for v in s]
full = [decodable(b[None])[0] for b in codes]
times = []
for c in chunks(trials, n):
    x = rng.exponential(1.0, size=(c, n))
    order = np.argsort(x, axis=1)
    position = np.argsort(order, axis=1)
    arrival = np.take_along_axis(x, order, axis=1)
    columns = []
    for b, ok in zip(codes, full):
        if not ok:
            columns.append(np.full(c, np.inf))
            continue
        lo, hi = np.ones(c, dtype=int), np.full(c, n)
        while True:
            active = np.flatnonzero(lo < hi)
            if active.size == 0:
                break
            mid = (lo[active] + hi[active]) // 2
            prefix = position[active] < mid[:, None]
            yes = decodable(b[None] * prefix[:, :, None])
            hi[active] = np.where(yes, mid, hi[active])
            lo[active] = np.where(yes, lo[active], mid + 1)
        columns.append(arrival[np.arange(c), lo - 1])
    times.append(np.stack(columns, axis=1))
times = np.concatenate(times)
write("crc", n, s, k, times, uncoded=times[:, 0])
