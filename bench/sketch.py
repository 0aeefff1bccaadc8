#!/usr/bin/env python3
"""Would a one-pass mergeable quantile sketch give gcsim's percentile accuracy?

    python3 bench/sketch.py [--gcsim PATH] [--trials 1e4,1e5,1e6] [--seed S]

Needs NumPy and three sketch packages, installed by you (this script installs
nothing), e.g. `pip install --user numpy datasketches fastdigest ddsketch`:

  datasketches  Apache DataSketches' KLL (kll_doubles_sketch), k = 200, 2000, 20000
  fastdigest    a t-digest (Rust; max_centroids = 1000, its default); the pure
                Python `tdigest` package computes the same digest but takes
                minutes per 10^6 values, so it is not used
  ddsketch      DDSketch (Datadog), relative accuracy 1e-2 and 1e-4

What it does, per job and trial count N (each N a prefix of the largest, as
gcsim's trials are):
  1. Draws every trial's iteration time of a few configurations with NumPy,
     the law of the gcsim job named (the models of bench/numpy_*.py; not
     gcsim's own random streams, which no gcsim option writes out).
  2. Computes the exact type-1 quantile (order statistic ceil(qN)-1, gcsim's
     definition) of p50, p90, p99, p999.
  3. Estimates each with
       gcsim~   gcsim's own algorithm re-enacted on these values: the pilot
                (first 65 536 trials) or, where gcsim uses it (N >= 8 pilots
                and an exact law: headline, lognormal), the exact law places
                the window; bins, judge() and refinement passes of 4096 bins
                exactly as crates/gcsim/src/stats/quantile.rs; a run of at
                most 65 536 trials is exact. Its column `ps` is the passes the
                quantile needed.
       kll200, kll2k, kll20k, tdigest, dd1e-2, dd1e-4: the sketches, each
                built per gcsim chunk (8192 trials) and merged, as a
                mergeable sketch would be in gcsim (DDSketch's merge adds
                bucket counts, so it is built in one piece: same result).
                KLL is asked for the inclusive quantile (type 1 on its
                retained items), DDSketch for rank j/(N-1) (index j).
                KLL compacts with random bits that DataSketches seeds
                itself, so its columns change from run to run.
  4. Prints, per estimate, the value as gcsim's table prints it (4 significant
     digits, export.rs `short`), `*` where that printed value differs from
     the exact one's, and the error in standard errors of the quantile,
     SE = sqrt(q(1-q)/N)/f(x_q), f from the spacing of the order statistics
     j -/+ d, d = floor(sqrt(q(1-q)N)) + 1 (as gcsim's own test does).
     Where that spacing is 0 (an atom: a trace's step times, a deadline) the
     error is printed as 0 if the estimate is the atom's value and `inf`
     otherwise.
  With --gcsim, the column `gc` is the passes the real gcsim needed on its own
  draws for that job at N (its stderr note `the percentiles needed K passes`;
  no note means 1), and the summary gives its wall time.

gcsim's criterion (quantile.rs): the bin holding order statistic j is
expected to hold at most 0.05 sqrt(q(1-q)N) values, so its estimate is within
0.05 SE of the exact one; in a refinement pass a bin of one or two distinct
values gives the exact order statistic.
"""
import argparse
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

try:
    import numpy as np
    from datasketches import kll_doubles_sketch
    import ddsketch
    import fastdigest
except ImportError as e:
    sys.exit(f"bench/sketch.py needs the packages numpy, datasketches, fastdigest and ddsketch ({e}); "
             "e.g. pip install --user numpy datasketches fastdigest ddsketch")

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.dont_write_bytecode = True  # no __pycache__ in bench/
sys.path.insert(0, str(HERE))
from numpy_common import read_trace  # noqa: E402

QUANTILES = [0.5, 0.9, 0.99, 0.999]
CHUNK = 8192
PILOT = 8 * CHUNK
LAW_WINDOWS_AFTER = 8
RANK_TOLERANCE = 0.05
NEIGHBOURS = 16
REFINE_BINS = 4096
MAX_PASSES = 8
TRACE = ROOT / "data" / "trace-llm-64w.csv"


# ---------------------------------------------------------------- the jobs
# Each job: gcsim's arguments (without --trials), a generator of the chosen
# configurations' per-trial times (trials x configs), the configurations'
# names, and (for crc on i.i.d. workers) the worker law's CDF inverse, with
# which gcsim places the windows by the exact law.

def crc_columns(draw, n, s_list):
    k = np.array([n - s for s in s_list])

    def gen(rng, trials):
        out = []
        size = max(1, (1 << 22) // n)
        for start in range(0, trials, size):
            x = draw(rng, min(size, trials - start), n)
            x.sort(axis=1)
            out.append(x[:, k - 1])
        return np.concatenate(out)
    return gen


def timeout_columns(rng, trials, n=100, deadline=1.5):
    out = []
    size = (1 << 22) // n
    for start in range(0, trials, size):
        a = rng.exponential(1.0, size=(min(size, trials - start), n))
        out.append(np.minimum(a.max(axis=1), np.maximum(deadline, a.min(axis=1))))
    return np.concatenate(out)[:, None]


def jobs():
    pool = read_trace(TRACE).ravel()
    inv_exp = lambda u: -math.log1p(-u)  # noqa: E731
    inv_lognormal = lambda u: math.exp(statistics.NormalDist().inv_cdf(u))  # noqa: E731
    return [
        ("headline", ["sweep", "--n", "100", "--s", "0..50"],
         crc_columns(lambda r, c, n: r.exponential(1.0, size=(c, n)), 100, [0, 20, 50]),
         ["s=0", "s=20", "s=50"], (100, [0, 20, 50], inv_exp)),
        ("lognormal", ["sweep", "--n", "100", "--s", "0..50", "--dist", "lognormal:mu=0,sigma=1"],
         crc_columns(lambda r, c, n: r.lognormal(0.0, 1.0, size=(c, n)), 100, [0, 20]),
         ["s=0", "s=20"], (100, [0, 20], inv_lognormal)),
        ("transfers", ["sweep", "--n", "100", "--s", "0..50", "--comm-dist", "exp:rate=2"],
         crc_columns(lambda r, c, n: r.exponential(1.0, size=(c, n)) + r.exponential(0.5, size=(c, n)), 100, [20]),
         ["s=20"], None),
        ("bootstrap", ["sweep", "--n", "100", "--s", "0..50", "--dist", f"trace:path={TRACE}", "--trace-bootstrap", "0"],
         crc_columns(lambda r, c, n: pool[r.integers(0, len(pool), size=(c, n))], 100, [0, 20]),
         ["s=0", "s=20"], None),
        ("timeout", ["sweep", "--n", "100", "--scheme", "timeout", "--timeout", "1.5"],
         timeout_columns, ["T=1.5"], None),
    ]


# ------------------------------------------------- gcsim's algorithm, re-enacted

def target_index(q, n):
    x = q * n
    r = round(x)
    rank = r if abs(x - r) <= 1e-9 * max(r, 1.0) else math.ceil(x)
    return min(max(int(rank), 1), n) - 1


def short(x):
    """gcsim's table format (export.rs `short`, Digits::TABLE)."""
    if x == 0.0:
        return "0"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    a = abs(x)
    if not (1e-4 <= a < 1e6):
        m = f"{x:.3e}"
        mant, exp = m.split("e")
        return f"{mant}e{int(exp)}"
    decimals = min(max(4 - 1 - math.floor(math.log10(a)), 0), 12)
    return f"{x:.{decimals}f}"


class Window:
    def __init__(self, lo, hi, bins):
        self.lo, self.hi, self.bins = lo, hi, bins

    def bin_of(self, v):
        b = ((v - self.lo) / (self.hi - self.lo) * self.bins).astype(np.int64)
        return np.minimum(np.maximum(b, 0), self.bins - 1)

    def edges(self, b):
        w = (self.hi - self.lo) / self.bins
        lo = self.lo + w * b
        hi = self.hi if b + 1 == self.bins else self.lo + w * (b + 1)
        return lo, hi


def window_over(lo, hi, q, half, total):
    hi = hi if hi > lo else lo
    allowed = RANK_TOLERANCE * math.sqrt(q * (1 - q) * total)
    bins = math.ceil(4.0 * 2.0 * half * total / allowed)
    return Window(lo, math.nextafter(hi, math.inf), int(min(max(bins, 256), 65536)))


def pilot_window(pilot_sorted, q, total):
    p = len(pilot_sorted)
    last = p - 1
    half = 6.0 * math.sqrt(q * (1 - q) / p) + 2.0 / p
    lo_rank, hi_rank = (q - half) * last, (q + half) * last
    lo = 0 if lo_rank <= 0 else math.floor(lo_rank)
    hi = last if hi_rank >= last else math.ceil(hi_rank)
    return window_over(pilot_sorted[lo], pilot_sorted[hi], q, half, total)


def law_quantile(p, n, k, inv_cdf):
    """The p-quantile of the k-th smallest of n i.i.d. workers: u with
    P(Bin(n, u) >= k) = p, by bisection, then the worker law's inverse."""
    if p <= 0:
        return inv_cdf(0.0)
    if p >= 1:
        return math.inf

    def tail(u):
        if u <= 0:
            return 0.0
        if u >= 1:
            return 1.0
        lu, lv = math.log(u), math.log1p(-u)
        return sum(math.exp(math.lgamma(n + 1) - math.lgamma(i + 1) - math.lgamma(n - i + 1) + i * lu + (n - i) * lv)
                   for i in range(k, n + 1))
    a, b = 0.0, 1.0
    for _ in range(200):
        m = 0.5 * (a + b)
        if tail(m) < p:
            a = m
        else:
            b = m
    return inv_cdf(0.5 * (a + b))


def law_windows(n, k, inv_cdf, total):
    ws = []
    for q in QUANTILES:
        half = 8.0 * math.sqrt(q * (1 - q) / total) + 2.0 / total
        lo, hi = law_quantile(max(q - half, 0.0), n, k, inv_cdf), law_quantile(min(q + half, 1.0), n, k, inv_cdf)
        ws.append(window_over(lo, hi, q, half, total))
    ok = all(math.isfinite(w.lo) and math.isfinite(w.hi) and w.lo < w.hi for w in ws)
    ok = ok and all(ws[i].hi <= ws[i + 1].lo for i in range(3))
    return ws if ok else None


def judge(q, total, w, values, rng_, track_ranges):
    """quantile::judge on the tally of `values` in window `w`: ('ok', x) or ('refine', window)."""
    j = target_index(q, total)
    below = int(np.count_nonzero(values < w.lo))
    inside_v = values[(values >= w.lo) & (values < w.hi)]
    if j < below:
        return "refine", Window(rng_[0], w.lo, REFINE_BINS)
    if j >= below + len(inside_v):
        return "refine", Window(w.hi, math.nextafter(rng_[1], math.inf), REFINE_BINS)
    min_in, max_in = float(inside_v.min()), float(inside_v.max())
    if min_in == max_in:
        return "ok", min_in
    bins = w.bin_of(inside_v)
    counts = np.bincount(bins, minlength=w.bins)
    allowed = RANK_TOLERANCE * math.sqrt(q * (1 - q) * total)
    cum = np.cumsum(counts)
    b = int(np.searchsorted(cum, j - below, side="right"))
    before = below + (int(cum[b - 1]) if b > 0 else 0)
    c = int(counts[b])
    if track_ranges:
        vb = inside_v[bins == b]
        lo_v, hi_v = float(vb.min()), float(vb.max())
        lo_c, hi_c = int(np.count_nonzero(vb == lo_v)), int(np.count_nonzero(vb == hi_v))
        if lo_v == hi_v or lo_c + hi_c == c:
            return "ok", lo_v if j < before + lo_c else hi_v
    lo, hi = w.edges(b)
    near = counts[max(b - NEIGHBOURS, 0):min(b + NEIGHBOURS, w.bins - 1) + 1]
    expected = near.sum() / len(near)
    coarse = expected > allowed or c > 8.0 * max(allowed, 1.0)
    unresolvable = hi - lo <= 4.0 * (max(abs(lo), abs(hi)) * sys.float_info.epsilon)
    if coarse and not unresolvable:
        return "refine", Window(lo, hi, REFINE_BINS)
    x = lo + ((j - before) + 0.5) / c * (hi - lo)
    return "ok", min(max(x, max(lo, min_in)), min(hi, max_in))


def resolve(values, level, total, w, discrete):
    """(estimate, passes) of the order statistic at `level` from first-pass window w."""
    rng_ = (float(values.min()), float(values.max()))
    track = discrete
    for passes in range(1, MAX_PASSES + 1):
        verdict, x = judge(level, total, w, values, rng_, track)
        if verdict == "ok":
            return x, passes
        if passes == MAX_PASSES:
            return 0.5 * (x.lo + math.nextafter(x.hi, -math.inf)), passes
        w, track = x, True


def gcsim_estimate(values, q, total, law_window, discrete):
    """(estimate, passes) as gcsim computes the q-quantile on these values;
    passes counts the ends of its 95% interval too (engine/targets.rs: the
    order statistics at q -/+ 1.96 sqrt(q(1-q)/N), resolved from the same
    window), as any of the three can call for a refinement pass."""
    if total <= PILOT:
        return float(np.sort(values)[target_index(q, total)]), 1
    w = law_window or pilot_window(np.sort(values[:PILOT]), q, total)
    x, passes = resolve(values, q, total, w, discrete)
    half = 1.959963984540054 * math.sqrt(q * (1 - q) / total)
    for level in (max(q - half, 0.0), min(q + half, 1.0)):
        passes = max(passes, resolve(values, level, total, w, discrete)[1])
    return x, passes


def gcsim_first_pass_bins(q, total, law):
    """Bins of gcsim's first-pass window for quantile q (pilot or law)."""
    if total <= PILOT:
        return 0
    if law:
        half = 8.0 * math.sqrt(q * (1 - q) / total) + 2.0 / total
    else:
        half = 6.0 * math.sqrt(q * (1 - q) / PILOT) + 2.0 / PILOT
    allowed = RANK_TOLERANCE * math.sqrt(q * (1 - q) * total)
    return int(min(max(math.ceil(8.0 * half * total / allowed), 256), 65536))


# ---------------------------------------------------------------- sketches

def chunks(values):
    return [values[i:i + CHUNK] for i in range(0, len(values), CHUNK)]


def kll(values, k):
    total = kll_doubles_sketch(k)
    for c in chunks(values):
        s = kll_doubles_sketch(k)
        s.update(c)
        total.merge(s)
    est = [total.get_quantile(q, inclusive=True) for q in QUANTILES]
    return est, len(total.serialize())


def tdigest(values):
    d = fastdigest.merge_all([fastdigest.TDigest.from_values(c) for c in chunks(values)])
    return [d.quantile(q) for q in QUANTILES], 16 * d.n_centroids


def dd(values, alpha):
    s = ddsketch.DDSketch(alpha)
    add = s.add
    for v in values.tolist():
        add(v)
    n = len(values)
    est = [s.get_quantile_value(target_index(q, n) / (n - 1) if n > 1 else 0.0) for q in QUANTILES]
    st = s._store
    return est, 8 * (st.max_key - st.min_key + 1)


METHODS = ["gcsim~", "kll200", "kll2k", "kll20k", "tdigest", "dd1e-2", "dd1e-4"]


def estimates(values, law_ws, discrete):
    n = len(values)
    out, mem, passes = {}, {}, []
    g = []
    for i, q in enumerate(QUANTILES):
        x, p = gcsim_estimate(values, q, n, law_ws[i] if law_ws else None, discrete)
        g.append(x)
        passes.append(p)
    out["gcsim~"] = g
    for name, k in (("kll200", 200), ("kll2k", 2000), ("kll20k", 20000)):
        out[name], mem[name] = kll(values, k)
    out["tdigest"], mem["tdigest"] = tdigest(values)
    out["dd1e-2"], mem["dd1e-2"] = dd(values, 1e-2)
    out["dd1e-4"], mem["dd1e-4"] = dd(values, 1e-4)
    return out, mem, passes


# ---------------------------------------------------------------- gcsim itself

def gcsim_passes(binary, args, trials, seed):
    with tempfile.TemporaryDirectory() as d:
        t = time.perf_counter()
        r = subprocess.run([binary, *args, "--trials", str(trials), "--seed", str(seed), "--format", "csv",
                            "-o", os.path.join(d, "out.csv")], capture_output=True, text=True, cwd=ROOT)
        wall = time.perf_counter() - t
    if r.returncode != 0:
        return None, wall
    passes = 1
    for line in r.stderr.splitlines():
        if "percentiles needed" in line:
            passes = int(line.split("needed")[1].split()[0])
    return passes, wall


def parse_count(s):
    return int(float(s.replace("_", "")))


def table_row(name, cfg, n, q, qi, srt, est, gc, passes, summary):
    """One row of the table; adds its estimates to `summary`."""
    j = target_index(q, n)
    exact = float(srt[j])
    d = int(math.sqrt(q * (1 - q) * n)) + 1
    se = (srt[min(j + d, n - 1)] - srt[max(j - d, 0)]) / 2.0
    row = f"{name:9} {cfg:5} {n:>7} {q:>5} {exact!r:>18} {gc:>2} {passes[qi]:>2}"
    for m in METHODS:
        x = float(est[m][qi])
        differs = short(x) != short(exact)
        if se > 0:
            err = (x - exact) / se
            err_s = f"{err:+.2f}" if abs(err) < 100 else f"{err:+.0e}"
        else:
            err = 0.0 if x == exact else math.inf
            err_s = "0" if x == exact else "inf"
        cell = f"{short(x)}{'*' if differs else ' '} {err_s}"
        row += f"  {cell:>15}"
        s = summary[m].setdefault(n, {"rows": 0, "printed": 0, "bits": 0, "errs": []})
        s["rows"] += 1
        s["printed"] += differs
        s["bits"] += x == exact
        if se > 0:
            s["errs"].append(abs(err))
    return row


def run_job(job, ns, rng, a, summary, memory, gruns):
    """Draws a job's trials once (the largest N), then prints its rows for every N."""
    name, args, gen, cfgs, law = job
    data = gen(rng, ns[-1])
    for n in ns:
        gc = "-"
        if a.gcsim:
            p, wall = gcsim_passes(a.gcsim, args, n, a.seed)
            gc = "?" if p is None else str(p)
            gruns.append((name, n, p, wall))
        for ci, cfg in enumerate(cfgs):
            values = np.ascontiguousarray(data[:n, ci])
            srt = np.sort(values)
            law_ws = None
            if law and n >= LAW_WINDOWS_AFTER * PILOT:
                law_ws = law_windows(law[0], law[0] - law[1][ci], law[2], n)
            est, mem, passes = estimates(values, law_ws, discrete=(name == "bootstrap"))
            for m, b in mem.items():
                memory.setdefault((m, n), []).append(b)
            for qi, q in enumerate(QUANTILES):
                print(table_row(name, cfg, n, q, qi, srt, est, gc, passes, summary), flush=True)


def print_summary(summary, ns):
    print()
    print("# summary per estimator and N: printed values that differ from the exact ones in gcsim's table (4 significant")
    print("# digits); estimates bit-identical to the exact order statistic (what CSV/JSON, which print every digit, need);")
    print("# median and largest |error| in SEs over the non-atom rows")
    print(f"{'estimator':9} {'N':>8} {'printed differs':>16} {'bit-identical':>14} {'median|err|':>12} {'max|err|':>10}")
    for m in METHODS:
        for n in ns:
            s = summary[m].get(n)
            if not s:
                continue
            e = s["errs"]
            med = f"{statistics.median(e):.3f}" if e else "-"
            mx = f"{max(e):.3f}" if e else "-"
            print(f"{m:9} {n:>8} {s['printed']:>7} of {s['rows']:<6} {s['bits']:>6} of {s['rows']:<5} {med:>12} {mx:>10}")


def print_memory(memory, ns):
    print()
    print("# memory per configuration, bytes: sketches as serialized (KLL), 16 B per centroid (t-digest), 8 B per")
    print("# bucket of the dense span (DDSketch); gcsim: u64 counts of its four first-pass windows (pilot or law")
    print("# windows; none at N <= 65536, where it keeps the values), 32 KiB per refined window of 4096 bins, and")
    print("# the pilot's 65536 stored values (512 KiB) where a pilot runs")
    for n in ns:
        parts = []
        for m in METHODS[1:]:
            v = memory.get((m, n))
            if v:
                parts.append(f"{m} {min(v)}-{max(v)}")
        pilot = 8 * sum(gcsim_first_pass_bins(q, n, False) for q in QUANTILES)
        law = 8 * sum(gcsim_first_pass_bins(q, n, True) for q in QUANTILES)
        if n <= PILOT:
            g = f"gcsim: all {n} values ({8 * n})"
        elif n < LAW_WINDOWS_AFTER * PILOT:
            g = f"gcsim first pass {pilot} (pilot windows) + the pilot's {8 * PILOT}"
        else:
            g = f"gcsim first pass {law} (law windows, where an exact law exists) or {pilot} + {8 * PILOT} (pilot)"
        print(f"N={n}: " + ", ".join(parts) + f"; {g}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--gcsim", help="a gcsim binary: also report the passes it needs on each job")
    ap.add_argument("--trials", default="1e4,1e5,1e6", help="comma list of N (default 1e4,1e5,1e6)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--jobs", default=None, help="comma list of jobs (default all)")
    a = ap.parse_args()
    ns = sorted(parse_count(x) for x in a.trials.split(","))
    rng = np.random.default_rng(a.seed)
    started = time.perf_counter()
    print("# bench/sketch.py: per estimate, its value as gcsim's table prints it, `*` if that differs from the exact")
    print("# value's, and its error in standard errors of the quantile (0/inf: an atom, hit or missed);")
    print("# gc = passes the real gcsim needed at this N on its own draws; ps = passes gcsim's algorithm needs here")
    print(f"{'job':9} {'cfg':5} {'N':>7} {'q':>5} {'exact':>18} {'gc':>2} {'ps':>2}" + "".join(f"  {m:>15}" for m in METHODS))
    summary, memory, gruns = {m: {} for m in METHODS}, {}, []
    selected = a.jobs.split(",") if a.jobs else None
    for job in jobs():
        if not selected or job[0] in selected:
            run_job(job, ns, rng, a, summary, memory, gruns)
    print_summary(summary, ns)
    print_memory(memory, ns)
    if gruns:
        print()
        print(f"# the real gcsim (its own draws, seed {a.seed}): passes and wall time of the whole job (all configurations)")
        for name, n, p, wall in gruns:
            print(f"{name:9} N={n:<8} passes={p}  wall={wall:.2f}s")
    print(f"\n# total time {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
