#!/usr/bin/env python3
"""Writes a small synthetic per-op trace of an interleaved-pipeline job
(Megatron's virtual pipeline, vpp > 1) in the schema of the what-if
artifact's traces (ByteDance-Seed/StragglerAnalysis, data/trace-*.parquet):
columns dp_rank, stage, rank, step, optype, start_ts, duration, seq_id, mc,
gmc, mb_id, with the dtypes of trace-ST.parquet.

The job: dp=2 data-parallel replicas of a pp=4 pipeline, each stage holding
vpp=2 model chunks (stage s, chunk c holds the global chunk gmc = c*pp + s,
so activations flow gmc 0 -> 1 -> ... -> 7, the hop from stage 3 back to
stage 0 joining chunk 0 to chunk 1), M=8 microbatches per step, 4 steps.

Each rank runs Megatron's interleaved 1F1B program
(megatron/core/pipeline_parallel/schedules.py,
forward_backward_pipelining_with_interleaving): virtual microbatch k is
microbatch (k // (pp*vpp))*pp + k % pp on chunk (k % (pp*vpp)) // pp
(reversed for the backward); (pp - s - 1)*2 + (vpp - 1)*pp warm-up
forwards, then one forward and one backward per iteration, then the
cool-down backwards; after each compute one batched p2p call sends what it
produced and receives the next compute's input (Megatron's
send_forward_recv_forward, send_forward_backward_recv_forward_backward,
send_backward_recv_backward). Each compute op has one send and one receive
of its direction recorded, as the artifact's profiler records them: the
receive of the very first chunk's forwards (gmc 0) and of the very last
chunk's backwards, and the sends out of them, have no peer and are
recorded as short no-ops; stage 0's receive before its first forward is
not recorded at all. Before the pipeline each stage all-gathers the
parameters of each chunk across the dp replicas (params-all-gather, one per
chunk, the first forward of a chunk waiting for its own); after the last
backward: gc, layernorm-grads-all-reduce, embedding-grads-all-reduce
(stages 0 and pp-1 of a replica), one grads-reduce-scatter per chunk
across the replicas, optimizer-clip-main-grad (every rank) and optimizer.

Times come from an event simulation of these programs: a compute runs for
its drawn duration; a p2p transfer or collective ends a drawn transfer time
after its last participant posts it; every op starts a small random launch
gap after the rank is free. Stage 3 computes 1.3x slower (a heavier
stage), rank (dp 1, stage 1) 1.2x slower in every step (a persistently slow
worker), and every compute has 5% log-normal noise.

usage: make_trace.py OUT.parquet [--seed N]
"""
import argparse
import random

import numpy as np
import pandas as pd

DP, PP, VPP, M = 2, 4, 2, 8
STEPS = [3, 4, 6, 7]
TOTAL = M * VPP


def chunk(k, forward):
    """Megatron's get_model_chunk_id."""
    c = (k % (PP * VPP)) // PP
    return c if forward else VPP - c - 1


def microbatch(k):
    return (k // (PP * VPP)) * PP + k % PP


def gmc(stage, c):
    return c * PP + stage


def program(stage):
    """The compute stream of one rank: a list of ('F'|'B', k) computes and
    ('P', [(optype, k), ...]) batched p2p calls, in Megatron's order."""
    warmup = min((PP - stage - 1) * 2 + (VPP - 1) * PP, TOTAL)
    assert M != PP, "the all-warm-up case is not generated"
    rest = TOTAL - warmup
    prog = []
    if stage != 0:
        prog.append(("P", [("forward-recv", 0)]))
    for k in range(warmup):
        prog.append(("F", k))
        batch = [("forward-send", k)]
        if k + 1 < TOTAL:
            batch.append(("forward-recv", k + 1))
        if k == warmup - 1 and rest > 0:
            batch.append(("backward-recv", 0))
        prog.append(("P", batch))
    for k in range(rest):
        fk = k + warmup
        prog.append(("F", fk))
        prog.append(("B", k))
        batch = [("forward-send", fk), ("backward-send", k)]
        if fk + 1 < TOTAL:
            batch.append(("forward-recv", fk + 1))
        batch.append(("backward-recv", k + 1))
        prog.append(("P", batch))
    for k in range(rest, TOTAL):
        prog.append(("B", k))
        batch = [("backward-send", k)]
        if k + 1 < TOTAL:
            batch.append(("backward-recv", k + 1))
        prog.append(("P", batch))
    return prog


def p2p_key(stage, optype, k):
    """The transfer a send/recv takes part in, or None for a no-op (no peer
    model chunk). A forward transfer is named by its receiving global chunk
    and microbatch, a backward one likewise."""
    forward = optype.startswith("forward")
    g = gmc(stage, chunk(k, forward))
    mb = microbatch(k)
    last = PP * VPP - 1
    if optype == "forward-send":
        return None if g == last else ("F", g + 1, mb)
    if optype == "forward-recv":
        return None if g == 0 else ("F", g, mb)
    if optype == "backward-send":
        return None if g == 0 else ("B", g - 1, mb)
    return None if g == last else ("B", g, mb)


class Step:
    def __init__(self, rng, step):
        self.rng = rng
        self.step = step
        self.rows = []
        self.xfer = {}
        self.posted = {}

    def gap(self):
        return self.rng.uniform(1e-5, 1e-4)

    def compute_time(self, dp, stage, kind):
        base = 0.020 if kind == "F" else 0.040
        if stage == PP - 1:
            base *= 1.3
        if (dp, stage) == (1, 1):
            base *= 1.2
        return base * self.rng.lognormvariate(0.0, 0.05)

    def transfer(self, key, mean):
        if key not in self.xfer:
            self.xfer[key] = mean * self.rng.lognormvariate(0.0, 0.2)
        return self.xfer[key]

    def row(self, dp, stage, optype, start, end, mc=-1, g=-1, mb=-1):
        self.rows.append(dict(dp_rank=dp, stage=stage, rank=stage * DP + dp, step=self.step,
                              optype=optype, start_ts=start, duration=end - start,
                              mc=mc, gmc=g, mb_id=mb))

    def collective(self, key, posts, mean):
        """End of a collective whose members post at `posts`."""
        return max(posts) + self.transfer(key, mean)

    def all_gathers(self):
        """The parameter all-gathers, chunk by chunk on each stage's dp
        stream, across the dp replicas; returns their ends."""
        ends = {}
        for stage in range(PP):
            free = [self.gap() * 5 for _ in range(DP)]
            for c in range(VPP):
                posts = [free[d] + self.gap() for d in range(DP)]
                end = self.collective(("ag", stage, c), posts, 0.010)
                for d in range(DP):
                    self.row(d, stage, "params-all-gather", posts[d], end, mc=c)
                    ends[(d, stage, c)] = end
                    free[d] = end
        return ends

    def pipeline(self, ag_end):
        """Runs every rank's compute stream; returns each rank's free time."""
        progs = {(d, s): program(s) for d in range(DP) for s in range(PP)}
        pc = {r: 0 for r in progs}
        now = {r: self.gap() * 5 for r in progs}
        first_fwd = {r: set() for r in progs}
        pending = {}  # rank -> its posted batch: [(optype, k, key, start)]
        while any(pc[r] < len(progs[r]) for r in progs):
            moved = False
            for r in progs:
                d, s = r
                while pc[r] < len(progs[r]):
                    kind, arg = progs[r][pc[r]]
                    if kind in "FB":
                        forward = kind == "F"
                        c = chunk(arg, forward)
                        start = now[r] + self.gap()
                        if forward and c not in first_fwd[r]:
                            start = max(start, ag_end[(d, s, c)] + self.gap())
                            first_fwd[r].add(c)
                        end = start + self.compute_time(d, s, kind)
                        optype = "forward-compute" if forward else "backward-compute"
                        self.row(d, s, optype, start, end, mc=c, g=gmc(s, c), mb=microbatch(arg))
                        now[r] = end
                        pc[r] += 1
                        moved = True
                        continue
                    if r not in pending:
                        t0 = now[r] + self.gap()
                        batch = []
                        for optype, k in arg:
                            key = p2p_key(s, optype, k)
                            if key is not None:
                                side = "send" if optype.endswith("send") else "recv"
                                self.posted[(d, key, side)] = t0
                            batch.append((optype, k, key, t0))
                        pending[r] = batch
                        moved = True
                    ends = []
                    for optype, k, key, t0 in pending[r]:
                        if key is None:
                            ends.append(t0 + 1e-5)
                            continue
                        peer = "recv" if optype.endswith("send") else "send"
                        if (d, key, peer) not in self.posted:
                            ends = None
                            break
                        ends.append(max(t0, self.posted[(d, key, peer)]) + self.transfer((d, key), 0.001))
                    if ends is None:
                        break
                    for (optype, k, key, t0), end in zip(pending[r], ends):
                        self.row(d, s, optype, t0, end)
                    now[r] = max(ends)
                    del pending[r]
                    pc[r] += 1
                    moved = True
            assert moved, "the schedule deadlocked"
        return now

    def tail(self, free):
        """gc to optimizer, with the collectives across ranks."""
        t = {}
        for (d, s), f in free.items():
            start = f + self.gap()
            self.row(d, s, "gc", start, start, mb=0)
            start += self.gap()
            end = start + 5e-5 * self.rng.uniform(0.5, 1.5)
            self.row(d, s, "layernorm-grads-all-reduce", start, end)
            t[(d, s)] = end
        for d in range(DP):
            ends = (0, PP - 1)
            posts = {s: t[(d, s)] + self.gap() for s in ends}
            end = self.collective(("emb", d), list(posts.values()), 0.005)
            for s in ends:
                self.row(d, s, "embedding-grads-all-reduce", posts[s], end)
                t[(d, s)] = end
        for s in range(PP):
            for c in reversed(range(VPP)):
                posts = {d: t[(d, s)] + self.gap() for d in range(DP)}
                end = self.collective(("rs", s, c), list(posts.values()), 0.020)
                for d in range(DP):
                    self.row(d, s, "grads-reduce-scatter", posts[d], end, mc=c)
                    t[(d, s)] = end
        posts = {r: t[r] + self.gap() for r in t}
        end = self.collective(("clip",), list(posts.values()), 0.002)
        for (d, s), p in posts.items():
            self.row(d, s, "optimizer-clip-main-grad", p, end)
            start = end + self.gap()
            self.row(d, s, "optimizer", start, start + 0.015 * self.rng.lognormvariate(0.0, 0.05))

    def run(self):
        ag_end = self.all_gathers()
        free = self.pipeline(ag_end)
        self.tail(free)
        df = pd.DataFrame(self.rows)
        df["start_ts"] -= df.start_ts.min()
        return df


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out")
    parser.add_argument("--seed", type=int, default=61)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    df = pd.concat([Step(rng, s).run() for s in STEPS], ignore_index=True)
    # seq_id: the order of a rank's same-type ops in a step.
    df = df.sort_values(["step", "rank", "start_ts"], kind="stable").reset_index(drop=True)
    df["seq_id"] = df.groupby(["step", "rank", "optype"]).cumcount()
    types = ["backward-compute", "backward-recv", "backward-send", "embedding-grads-all-reduce",
             "forward-compute", "forward-recv", "forward-send", "gc", "grads-reduce-scatter",
             "layernorm-grads-all-reduce", "optimizer", "optimizer-clip-main-grad", "params-all-gather",
             "first-op"]
    out = pd.DataFrame({
        "dp_rank": df.dp_rank.astype("int8"),
        "stage": df.stage.astype("int8"),
        "rank": df["rank"].astype("int16"),
        "step": df.step.astype("int64"),
        "optype": pd.Categorical(df.optype, categories=types),
        "start_ts": df.start_ts.astype("float32"),
        "duration": df.duration.astype("float32"),
        "seq_id": df.seq_id.astype("int32"),
        "mc": df.mc.astype("int8"),
        "mb_id": df.mb_id.astype("int8"),
        "gmc": df.gmc.astype("int16"),
    })
    out.to_parquet(args.out, index=False)
    print(f"{args.out}: {len(out)} ops, the steps end at {out.groupby('step').apply(lambda g: (g.start_ts + g.duration).max()).round(4).to_dict()}")


if __name__ == "__main__":
    main()
