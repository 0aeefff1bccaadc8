"""What the NumPy programs of bench/ share: their arguments, trials in
chunks, and the summary gcsim writes for every configuration.

Each program is one gcsim job written as vectorised NumPy: it draws a chunk
of trials at a time (bounded memory, arrays that stay near the cache), keeps
every trial's iteration time per configuration, and prints the columns
scheme,n,s,k,trials,mean,std_err,ci95_low,ci95_high,p50,p90,p99,p999,
speedup,p99_speedup to stdout, as gcsim computes them: the standard error
of the mean, the 95% interval mean +- 1.96 se, the percentiles as the
inverse empirical CDF (type 1, NumPy's "inverted_cdf", gcsim's definition),
and speedups over the uncoded time on the same draws.
"""
import sys

import numpy as np

HEADER = "scheme,n,s,k,trials,mean,std_err,ci95_low,ci95_high,p50,p90,p99,p999,speedup,p99_speedup"


def arguments(default_trials, skip=0):
    """(trials, seed, rng) from `program [trials] [seed]`, after `skip` other
    arguments."""
    args = sys.argv[1 + skip:]
    trials = int(args[0]) if len(args) > 0 else default_trials
    seed = int(args[1]) if len(args) > 1 else 0
    return trials, seed, np.random.default_rng(seed)


def chunks(trials, per_trial):
    """Chunk sizes covering `trials`, each about 2^22 values of `per_trial` per trial."""
    size = max(1, (1 << 22) // per_trial)
    for start in range(0, trials, size):
        yield min(size, trials - start)


def k_of_n(sorted_times, k):
    """Column j: the k[j]-th smallest of each row of `sorted_times` (rows ascending)."""
    return sorted_times[:, np.asarray(k) - 1]


def crc_sweep(default_trials, draw, draws_per_trial=None, n=100, s_max=50):
    """The crc sweep s = 0..s_max on n workers from `draw(rng, c, n)`, a
    c x n matrix of one chunk's arrival times: each row sorted once and the
    order statistic k = n - s read for every s (crc decodes from any n - s
    workers; Tandon et al. 2017); prints the summary."""
    trials, _, rng = arguments(default_trials)
    s = np.arange(0, s_max + 1)
    k = n - s
    times = []
    for c in chunks(trials, draws_per_trial or n):
        x = draw(rng, c, n)
        x.sort(axis=1)
        times.append(k_of_n(x, k))
    times = np.concatenate(times)
    write("crc", n, s, k, times, uncoded=times[:, 0])


def write(scheme, n, s, k, times, uncoded, extra=None):
    """Prints one row per configuration: column j of `times` (trials x
    configurations) is scheme[j] (one name or one per column) at tolerance
    s[j] and threshold k[j]; `uncoded` is each trial's uncoded time on the
    same draws. `extra` maps a column name to per-configuration (value,
    standard error) pairs, appended as NAME,NAME_se."""
    trials, configs = times.shape
    schemes = [scheme] * configs if isinstance(scheme, str) else list(scheme)
    mean = times.mean(axis=0)
    se = times.std(axis=0, ddof=1) / np.sqrt(trials)
    q = np.percentile(times, [50, 90, 99, 99.9], axis=0, method="inverted_cdf")
    base_mean = uncoded.mean()
    base_p99 = np.percentile(uncoded, 99, method="inverted_cdf")
    extra = extra or {}
    print(HEADER + "".join(f",{name},{name}_se" for name in extra))
    for j in range(configs):
        cells = [
            schemes[j], n, s[j], k[j], trials, mean[j], se[j], mean[j] - 1.96 * se[j], mean[j] + 1.96 * se[j],
            q[0, j], q[1, j], q[2, j], q[3, j], base_mean / mean[j], base_p99 / q[2, j],
        ]
        for value, err in extra.values():
            cells += [value[j], err[j]]
        print(",".join(str(c) for c in cells))


def read_trace(path):
    """A trace CSV (step,worker,time in seconds) as a steps x workers array,
    workers in ascending id, complete steps only, as gcsim keeps them."""
    data = np.genfromtxt(path, delimiter=",", names=True)
    steps, step_index = np.unique(data["step"].astype(np.int64), return_inverse=True)
    workers, worker_index = np.unique(data["worker"].astype(np.int64), return_inverse=True)
    table = np.full((len(steps), len(workers)), np.nan)
    table[step_index, worker_index] = data["time"]
    return table[~np.isnan(table).any(axis=1)]
