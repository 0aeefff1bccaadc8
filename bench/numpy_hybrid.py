"""Hybrid parallelism (data x pipeline x tensor) as a vectorised NumPy program:

    gcsim run --parallel dp=D,pp=P,tp=T --microbatches M --schedule S \\
        [--backward-ratio R] [--p2p-time TAU] [--stage-work w0,..] \\
        [--microbatch-work LAW] [--dist LAW] [--scheme frc|crc|ignore --s s] \\
        [--scheme timeout --timeout T] [--optimizer-time O] --trials N

Each of the n = D*P*T ranks (rank (d*P + i)*T + t) is slow for the
iteration with probability p_slow, its draws then times `slowdown`, and
draws X for each of its replica's m microbatches (m = M; (s+1)*M for frc and
crc, a replica's load); a microbatch work law draws u per replica and
microbatch, shared by its stages. Microbatch j's compute on stage i is
x = w_i * u * max over the tensor group of X; its forward takes x/(1+R), its
backward R*x/(1+R).

The schedule is evaluated as max-plus recursions over arrays of one chunk's
trials x replicas: the ops are put once, in Python, in an order in which
every op comes after its stage's previous op and after the op it waits for
(F(i-1,j) + tau for F(i,j); B(i+1,j) + tau for B(i,j); F(P-1,j) for
B(P-1,j)); each op's end is then max(stage free, input ready) + duration,
one vectorised step per op. GPipe runs F(0..m-1) then B(0..m-1); 1F1B
(Narayanan et al. 2021) w = min(P-i-1, m) warm-up forwards, then F(w+k),
B(k) in turn, then the remaining backwards.

A stage's done time is its last backward's end; per stage the scheme's rule
over the replicas (uncoded: the slowest; ignore, crc: the (D-s)-th
smallest; frc: the slowest group of s+1 consecutive replicas' fastest;
timeout: min(the slowest, max(T, the fastest))),
the latest stage, plus the optimizer's time, is the iteration. The speedup
is over the uncoded job on the first M microbatches of the same draws; the
bubble fraction, 1 - sum of busy / (P * makespan) per replica, is averaged
over replicas and written with its standard error.

Laws: exp:rate=..., lognormal:mu=...,sigma=..., either with
p_slow=...,slowdown=... appended.

usage: python3 bench/numpy_hybrid.py --parallel dp=2,pp=4,tp=1 --microbatches 8 \\
           --schedule 1f1b [...] [trials] [seed]
"""
import argparse

import numpy as np

from numpy_common import chunks, write


def law(text):
    """(sampler(rng, shape), p_slow, slowdown) of `family:key=value,...`."""
    family, _, rest = text.partition(":")
    keys = dict(kv.split("=") for kv in rest.split(",") if kv)
    values = {k: float(v) for k, v in keys.items()}
    if family == "exp":
        scale = 1.0 / values["rate"]
        sample = lambda rng, shape: rng.exponential(scale, size=shape)
    elif family == "lognormal":
        mu, sigma = values["mu"], values["sigma"]
        sample = lambda rng, shape: rng.lognormal(mu, sigma, size=shape)
    else:
        raise SystemExit(f"numpy_hybrid.py: no law {family}")
    return sample, values.get("p_slow", 0.0), values.get("slowdown", 1.0)


def order(schedule, p, i, m):
    """Stage i's ops, ('F'|'B', j), in the order it runs them."""
    if schedule == "gpipe":
        return [("F", j) for j in range(m)] + [("B", j) for j in range(m)]
    w = min(p - i - 1, m)
    ops = [("F", j) for j in range(w)]
    for k in range(m - w):
        ops += [("F", w + k), ("B", k)]
    return ops + [("B", j) for j in range(m - w, m)]


def waits_for(kind, i, j, p):
    """The op whose output op (kind, i, j) needs, and whether it crosses a link (tau)."""
    if kind == "F":
        return (("F", i - 1, j), True) if i > 0 else (None, False)
    if i == p - 1:
        return ("F", i, j), False
    return ("B", i + 1, j), True


def sequence(schedule, p, m):
    """Every op (kind, i, j) once, each after its stage's previous op and after
    the op it waits for: stages advance in turn while their next op's input is done."""
    orders = [order(schedule, p, i, m) for i in range(p)]
    position, done, seq = [0] * p, set(), []
    while len(seq) < 2 * p * m:
        progressed = False
        for i in range(p):
            while position[i] < len(orders[i]):
                kind, j = orders[i][position[i]]
                dep, _ = waits_for(kind, i, j, p)
                if dep is not None and dep not in done:
                    break
                seq.append((kind, i, j))
                done.add((kind, i, j))
                position[i] += 1
                progressed = True
        assert progressed, "the schedule deadlocks"
    return seq


def pipeline(x, seq, p, m, ratio, tau):
    """Stage done times (P, c, D) of the computes x (P, >=m, c, D), first m microbatches."""
    f = x[:, :m] * (1.0 / (1.0 + ratio))
    b = x[:, :m] * (ratio / (1.0 + ratio))
    free = np.zeros((p,) + x.shape[2:])
    end = {"F": np.empty_like(f), "B": np.empty_like(b)}
    duration = {"F": f, "B": b}
    for kind, i, j in seq:
        dep, link = waits_for(kind, i, j, p)
        out = end[kind][i, j]
        if dep is None:
            np.copyto(out, free[i])
        else:
            ready = end[dep[0]][dep[1], dep[2]]
            if link and tau:
                np.maximum(free[i], ready + tau, out=out)
            else:
                np.maximum(free[i], ready, out=out)
        out += duration[kind][i, j]
        free[i] = out
    return free


def rule(g, scheme, s, deadline):
    """Per stage, the rule over the replicas (last axis) of g (P, c, D)."""
    d = g.shape[-1]
    if scheme == "uncoded":
        return g.max(axis=-1)
    if scheme == "timeout":
        return np.minimum(g.max(axis=-1), np.maximum(deadline, g.min(axis=-1)))
    if scheme in ("ignore", "crc"):
        return np.partition(g, d - s - 1, axis=-1)[..., d - s - 1]
    return g.reshape(g.shape[:-1] + (d // (s + 1), s + 1)).min(axis=-1).max(axis=-1)


def main():
    a = argparse.ArgumentParser(description="hybrid-parallel iteration times, vectorised")
    a.add_argument("--parallel", required=True)
    a.add_argument("--microbatches", type=int, required=True)
    a.add_argument("--schedule", choices=["gpipe", "1f1b"], required=True)
    a.add_argument("--backward-ratio", type=float, default=2.0)
    a.add_argument("--p2p-time", type=float, default=0.0)
    a.add_argument("--stage-work")
    a.add_argument("--microbatch-work")
    a.add_argument("--dist", default="exp:rate=1")
    a.add_argument("--scheme", default="uncoded", choices=["uncoded", "ignore", "crc", "frc", "timeout"])
    a.add_argument("--s", type=int, default=0)
    a.add_argument("--timeout", type=float)
    a.add_argument("--optimizer-time", type=float, default=0.0)
    a.add_argument("trials", type=int, nargs="?", default=10_000)
    a.add_argument("seed", type=int, nargs="?", default=0)
    o = a.parse_args()
    layout = dict(kv.split("=") for kv in o.parallel.split(","))
    d, p, t = (int(layout.get(k, 1)) for k in ("dp", "pp", "tp"))
    big_m = o.microbatches
    s = o.s if o.scheme not in ("uncoded", "timeout") else 0
    assert (o.timeout is not None) == (o.scheme == "timeout"), "--timeout goes with --scheme timeout"
    m = (s + 1) * big_m if o.scheme in ("frc", "crc") else big_m
    if o.scheme == "frc":
        assert d % (s + 1) == 0, "frc needs s+1 to divide dp"
    work = np.array([float(w) for w in o.stage_work.split(",")]) if o.stage_work else np.ones(p)
    assert len(work) == p, "--stage-work needs one value per stage"
    sample, p_slow, slowdown = law(o.dist)
    micro = law(o.microbatch_work)[0] if o.microbatch_work else None
    rng = np.random.default_rng(o.seed)
    seq, base_seq = sequence(o.schedule, p, m), sequence(o.schedule, p, big_m)

    times, baseline, bubble = [], [], []
    for c in chunks(o.trials, d * p * t * m):
        # Draws as (T, P, m, c, D): the max over the tensor group is an elementwise
        # maximum of T slabs (about 10 times faster than reducing a short last
        # axis), and a stage's microbatch is then a contiguous (c, D) slab.
        x = sample(rng, (t, p, m, c, d))
        if p_slow > 0:
            slow = rng.random((t, p, 1, c, d)) < p_slow
            x *= np.where(slow, slowdown, 1.0)
        x = x.max(axis=0)
        x *= work[:, None, None, None]
        if micro is not None:
            x *= micro(rng, (1, m, c, d))
        g = pipeline(x, seq, p, m, o.backward_ratio, o.p2p_time)
        busy = x.sum(axis=1)  # f + b = x per op
        bubble.append((1.0 - busy.sum(axis=0) / (p * g.max(axis=0))).mean(axis=-1))
        times.append(rule(g, o.scheme, s, o.timeout).max(axis=0) + o.optimizer_time)
        base = g if m == big_m else pipeline(x, base_seq, p, big_m, o.backward_ratio, o.p2p_time)
        baseline.append(base.max(axis=(0, 2)) + o.optimizer_time)
    times, baseline, bubble = np.concatenate(times), np.concatenate(baseline), np.concatenate(bubble)
    k = {"uncoded": d, "ignore": d - s, "crc": d - s, "frc": d // (s + 1), "timeout": d}[o.scheme]
    extra = {"bubble_fraction": ([bubble.mean()], [bubble.std(ddof=1) / np.sqrt(len(bubble))])}
    write(o.scheme, d * p * t, [s], [k], times[:, None], uncoded=baseline, extra=extra)


main()
