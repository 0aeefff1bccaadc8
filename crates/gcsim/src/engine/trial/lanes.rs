//! A pipeline [`Program`] evaluated for every replica of a trial at once.
//!
//! The replicas run the same program on their own computes, so each op is
//! one step over a row of lanes (one lane per replica): its indices are
//! looked up once per op, not once per op and replica, and the lanes'
//! independent recursions fill the processor's pipelines where one
//! replica's recursion alone waits on each op's latency. Each lane does
//! the arithmetic [`Program::run`] does for that replica, in the same
//! order, so the times are the same to the bit.

use std::collections::HashMap;

use crate::parallel::{Op, Program};

#[cfg(target_arch = "x86_64")]
mod avx2;

/// One op with its indices precomputed.
#[derive(Debug, Clone, Copy)]
struct Step {
    /// The stage that runs it.
    stage: u32,
    /// Its compute's row: stage · stride + microbatch.
    compute: u32,
    /// Its end's row: F(s, j) at s·m + j, B(s, j) at S·m + s·m + j, for
    /// virtual stage s of S = P·V (s = i with one chunk per stage).
    end: u32,
    /// The row of the end it waits for; the zero row 2·S·m for the first
    /// virtual stage's forward.
    input: u32,
    /// Whether its input crosses a link (the transfer time added).
    link: bool,
    /// Whether it is a backward pass.
    backward: bool,
}

/// A program's ops in evaluation order, with their rows.
#[derive(Debug, Clone)]
pub(super) struct Lanes {
    stages: usize,
    /// V: the model chunks per stage, each doing 1/V of its compute.
    chunks: usize,
    microbatches: usize,
    steps: Vec<Step>,
    /// Where the steps are a smaller program's on top of a larger one's
    /// times (see [`Lanes::on_top_of`]): what they start from.
    opening: Option<Opening>,
}

/// How a smaller program starts from a larger one's evaluation: per stage,
/// the row of the end of the last op the two share (the stage is free from
/// then), where it has one; the rows the ends hold: the larger program's,
/// its zero row, then one per op of the smaller one's own; and each op's
/// row among them, at the row it has in the program run alone.
#[derive(Debug, Clone)]
struct Opening {
    starts: Vec<Option<u32>>,
    rows: usize,
    at: Vec<u32>,
}

/// The row of the end of op (virtual stage `s`, microbatch `j`, `backward`)
/// in a program of `virtual_stages` virtual stages and `m` microbatches:
/// F(s, j) at s·m + j, B(s, j) at S·m + s·m + j; the zero row is 2·S·m.
fn end_row((s, j, backward): (usize, usize, bool), virtual_stages: usize, m: usize) -> usize {
    usize::from(backward) * virtual_stages * m + s * m + j
}

/// The op that `op`, on virtual stage `s` of `virtual_stages`, waits for, as
/// (virtual stage, microbatch, backward), and whether its input crosses a
/// link; `None` for the first virtual stage's forward, which waits for
/// nothing.
fn input_of(op: &Op, s: usize, virtual_stages: usize) -> (Option<(usize, usize, bool)>, bool) {
    let j = op.microbatch as usize;
    match (op.backward, s) {
        (false, 0) => (None, false),
        (false, _) => (Some((s - 1, j, false)), true),
        (true, s) if s + 1 == virtual_stages => (Some((s, j, false)), false),
        (true, _) => (Some((s + 1, j, true)), true),
    }
}

/// The times one evaluation of [`Lanes`] leaves, replica d in lane d of
/// each row of `lanes` values.
#[derive(Debug, Clone, Default)]
pub(crate) struct LaneTimes {
    /// Per op, its end, at the op's row (see [`Lanes::forward_end`]).
    ends: Vec<f64>,
    /// Per stage i, the end of its last op, at row i.
    pub(super) free: Vec<f64>,
    /// Per stage i, the total duration of its ops, at row i.
    pub(super) busy: Vec<f64>,
}

impl Lanes {
    /// The steps of `program`, whose computes are rows `stride` (≥ m) apart
    /// per stage. Each op waits for the op [`Program::run`] has it wait
    /// for (the tests hold the two to the same bits on both schedules).
    pub(super) fn new(program: &Program, stride: usize) -> Self {
        let (p, v, m) = (program.stages(), program.chunks(), program.microbatches());
        assert!(stride >= m, "a compute row per microbatch");
        let virtual_stages = p * v;
        let row = |s: usize, j: usize, backward: bool| end_row((s, j, backward), virtual_stages, m) as u32;
        let steps = program
            .order()
            .iter()
            .map(|op| {
                let (i, j) = (op.stage as usize, op.microbatch as usize);
                let s = op.chunk as usize * p + i;
                let (input, link) = input_of(op, s, virtual_stages);
                Step {
                    stage: i as u32,
                    compute: (i * stride + j) as u32,
                    end: row(s, j, op.backward),
                    input: input.map_or((2 * virtual_stages * m) as u32, |(s, j, b)| row(s, j, b)),
                    link,
                    backward: op.backward,
                }
            })
            .collect();
        Self {
            stages: p,
            chunks: v,
            microbatches: m,
            steps,
            opening: None,
        }
    }

    /// The steps of `small` to run after `big`'s in the same lanes (two
    /// programs of one schedule and number of stages, computes `stride`
    /// rows apart per stage as for [`Self::new`]): only the ops of `small`
    /// it does not share with `big`. An op is shared where it lies in the
    /// opening its stage runs alike in both programs and the op it waits
    /// for is shared too (or it waits for none): it then starts and ends at
    /// the same time in both, to the bit, and its end is read from `big`'s.
    ///
    /// What it buys: under a scheme across replicas each replica runs ℓ·M
    /// microbatches beside the baseline's M. Under 1F1B the two programs
    /// differ only in each stage's last few backwards, so the baseline's
    /// pipelines cost those steps instead of a whole evaluation:
    /// `bench/hybrid.sh frc` (16 microbatches beside 8) takes 0.91 of the
    /// CPU time it took with both programs evaluated whole (one thread,
    /// `perf stat -r 15`, three runs in turn).
    pub(super) fn on_top_of(small: &Program, big: &Program, stride: usize) -> Self {
        let (p, v) = (small.stages(), small.chunks());
        assert!(
            p == big.stages() && v == big.chunks() && stride >= big.microbatches().max(small.microbatches()),
            "two programs of one pipeline"
        );
        let virtual_stages = p * v;
        let key = |op: &Op| {
            (
                op.chunk as usize * p + op.stage as usize,
                op.microbatch as usize,
                op.backward,
            )
        };
        let by_stage = |program: &Program| -> Vec<Vec<Op>> {
            (0..p)
                .map(|i| {
                    program
                        .order()
                        .iter()
                        .filter(|op| op.stage as usize == i)
                        .copied()
                        .collect()
                })
                .collect()
        };
        let (ours, theirs) = (by_stage(small), by_stage(big));
        let position: HashMap<_, _> = ours
            .iter()
            .flat_map(|ops| ops.iter().enumerate().map(|(k, op)| (key(op), k)))
            .collect();
        let is_shared = |shared: &[usize], (s, j, b): (usize, usize, bool)| position[&(s, j, b)] < shared[s % p];
        // Per stage, how many of its first ops run alike in both programs.
        let alike: Vec<usize> = ours
            .iter()
            .zip(&theirs)
            .map(|(a, b)| a.iter().zip(b).take_while(|(x, y)| x == y).count())
            .collect();
        // Per stage, how many of its first ops are shared: in evaluation
        // order (each op after its stage's previous op and after its
        // input), an op is shared where it runs alike, its stage's previous
        // op is shared, and so is its input.
        let mut shared = vec![0; p];
        for op in small.order() {
            let i = op.stage as usize;
            let k = position[&key(op)];
            let (input, _) = input_of(op, key(op).0, virtual_stages);
            if shared[i] == k && k < alike[i] && input.is_none_or(|x| is_shared(&shared, x)) {
                shared[i] += 1;
            }
        }
        let m = big.microbatches();
        let big_row = |k| end_row(k, virtual_stages, m) as u32;
        let zero = 2 * virtual_stages * m;
        let mut own = HashMap::new();
        let mut steps = Vec::new();
        for op in small.order().iter().filter(|op| !is_shared(&shared, key(op))) {
            let (input, link) = input_of(op, key(op).0, virtual_stages);
            let input = match input {
                None => zero as u32,
                Some(k) if is_shared(&shared, k) => big_row(k),
                Some(k) => own[&k],
            };
            let end = (zero + 1 + steps.len()) as u32;
            own.insert(key(op), end);
            steps.push(Step {
                stage: op.stage,
                compute: (op.stage as usize * stride + op.microbatch as usize) as u32,
                end,
                input,
                link,
                backward: op.backward,
            });
        }
        let starts = (0..p)
            .map(|i| shared[i].checked_sub(1).map(|k| big_row(key(&ours[i][k]))))
            .collect();
        let ms = small.microbatches();
        let mut at = vec![0; 2 * virtual_stages * ms];
        for op in small.order() {
            let k = key(op);
            at[end_row(k, virtual_stages, ms)] = own.get(&k).copied().unwrap_or_else(|| big_row(k));
        }
        Self {
            stages: p,
            chunks: v,
            microbatches: ms,
            opening: Some(Opening {
                starts,
                rows: zero + 1 + steps.len(),
                at,
            }),
            steps,
        }
    }

    /// Evaluates the pipeline from time 0 in each of `lanes` lanes, as
    /// [`Program::run`] does: `compute[row · lanes + d]` is replica d's
    /// compute of that row (stage i's microbatch j at row i·stride + j),
    /// of which the forward takes the share `forward_share` and the
    /// backward the rest; `p2p` is the transfer between stages. The
    /// stages' busy times are summed only where `busy` asks for them
    /// (the trials whose pipeline totals are collected).
    ///
    /// With AVX2 (detected at run time) the same loops run four lanes to
    /// an instruction instead of two: the same arithmetic lane by lane (no
    /// fused multiply-add), so the same bits.
    pub(super) fn run(&self, compute: &[f64], lanes: usize, at: (f64, f64, bool), times: &mut LaneTimes) {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the processor has AVX2.
            return unsafe { self.run_avx2(compute, lanes, at, times) };
        }
        self.run_any::<false>(compute, lanes, at, times);
    }

    /// [`Self::run`] compiled for AVX2.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    fn run_avx2(&self, compute: &[f64], lanes: usize, at: (f64, f64, bool), times: &mut LaneTimes) {
        self.run_any::<true>(compute, lanes, at, times);
    }

    /// [`Self::run`] for the processor it is compiled for, with AVX2
    /// intrinsics where `AVX2` (only inlined into [`Self::run_avx2`]).
    #[inline(always)]
    fn run_any<const AVX2: bool>(
        &self,
        compute: &[f64],
        lanes: usize,
        (share, p2p, busy): (f64, f64, bool),
        times: &mut LaneTimes,
    ) {
        assert!(
            !busy || self.opening.is_none(),
            "a program on top of another has no busy times of its own"
        );
        if busy {
            self.run_lanes::<true, AVX2>(compute, lanes, share, p2p, times);
        } else {
            self.run_lanes::<false, AVX2>(compute, lanes, share, p2p, times);
        }
    }

    /// [`Self::run`], summing the busy times where `BUSY`.
    #[inline(always)]
    fn run_lanes<const BUSY: bool, const AVX2: bool>(
        &self,
        compute: &[f64],
        lanes: usize,
        share: f64,
        p2p: f64,
        times: &mut LaneTimes,
    ) {
        // A few lanes' steps as fixed-length loops, unrolled.
        match lanes {
            1 => self.run_in::<1, BUSY, false>(compute, lanes, share, p2p, times),
            2 => self.run_in::<2, BUSY, false>(compute, lanes, share, p2p, times),
            4 => self.run_in::<4, BUSY, AVX2>(compute, lanes, share, p2p, times),
            8 => self.run_in::<8, BUSY, AVX2>(compute, lanes, share, p2p, times),
            16 => self.run_in::<16, BUSY, AVX2>(compute, lanes, share, p2p, times),
            _ => self.run_in::<0, BUSY, false>(compute, lanes, share, p2p, times),
        }
    }

    /// [`Self::run`] with `N` lanes, or `lanes` where `N` is 0; where
    /// `AVX2` (N a multiple of 4), each step four lanes to an intrinsic.
    #[inline(always)]
    fn run_in<const N: usize, const BUSY: bool, const AVX2: bool>(
        &self,
        compute: &[f64],
        lanes: usize,
        forward_share: f64,
        p2p: f64,
        times: &mut LaneTimes,
    ) {
        let n = if N == 0 { lanes } else { N };
        let (p, m) = (self.stages, self.microbatches);
        let LaneTimes { ends, free, busy } = times;
        free.clear();
        busy.clear();
        busy.resize(p * n, 0.0);
        match &self.opening {
            // Every op's row is written before it is read: only the zero
            // row needs its zeros.
            None => {
                let rows = 2 * p * self.chunks * m;
                ends.resize((rows + 1) * n, 0.0);
                ends[rows * n..].fill(0.0);
                free.resize(p * n, 0.0);
            }
            // The larger program's ends stay, and each stage is free from
            // the end of the last op it shares with it.
            Some(opening) => {
                ends.resize(opening.rows * n, 0.0);
                for start in &opening.starts {
                    match *start {
                        Some(row) => free.extend_from_slice(&ends[row as usize * n..][..n]),
                        None => free.resize(free.len() + n, 0.0),
                    }
                }
            }
        }
        for s in &self.steps {
            let (end, input) = (s.end as usize * n, s.input as usize * n);
            // The two rows are distinct: split the ends between them.
            let (out, ready) = if input < end {
                let (a, b) = ends.split_at_mut(end);
                (&mut b[..n], &a[input..input + n])
            } else {
                let (a, b) = ends.split_at_mut(input);
                (&mut a[end..end + n], &b[..n])
            };
            let x = &compute[s.compute as usize * n..][..n];
            let stage = s.stage as usize * n..(s.stage as usize + 1) * n;
            let (free, busy) = (&mut free[stage.clone()], &mut busy[stage]);
            let at = (forward_share, p2p, self.chunks as f64);
            #[cfg(target_arch = "x86_64")]
            if AVX2 {
                // SAFETY: AVX2 is only set within `run_avx2`, on a processor with AVX2.
                unsafe { avx2::step::<BUSY>((s.link, s.backward, self.chunks > 1), x, ready, out, free, busy, at) };
                continue;
            }
            match (s.link, s.backward, self.chunks > 1) {
                (false, false, false) => step::<false, false, false, BUSY>(x, ready, out, free, busy, at),
                (false, true, false) => step::<false, true, false, BUSY>(x, ready, out, free, busy, at),
                (true, false, false) => step::<true, false, false, BUSY>(x, ready, out, free, busy, at),
                (true, true, false) => step::<true, true, false, BUSY>(x, ready, out, free, busy, at),
                (false, false, true) => step::<false, false, true, BUSY>(x, ready, out, free, busy, at),
                (false, true, true) => step::<false, true, true, BUSY>(x, ready, out, free, busy, at),
                (true, false, true) => step::<true, false, true, BUSY>(x, ready, out, free, busy, at),
                (true, true, true) => step::<true, true, true, BUSY>(x, ready, out, free, busy, at),
            }
        }
    }

    /// The end of `op` in lane d of `times`.
    pub(super) fn end(&self, times: &LaneTimes, lanes: usize, op: &Op, d: usize) -> f64 {
        let (m, virtual_stages) = (self.microbatches, self.stages * self.chunks);
        let s = op.chunk as usize * self.stages + op.stage as usize;
        let row = end_row((s, op.microbatch as usize, op.backward), virtual_stages, m);
        let row = self.opening.as_ref().map_or(row, |o| o.at[row] as usize);
        times.ends[row * lanes + d]
    }
}

/// One op in every lane: each starts when its stage is free and its input
/// has ended (plus `p2p` across a link), and lasts its forward share of
/// its compute, or the rest for a backward, over the stage's V chunks
/// where `CHUNKED` (as [`Program::duration`] divides it).
#[inline(always)]
fn step<const LINK: bool, const BACKWARD: bool, const CHUNKED: bool, const BUSY: bool>(
    x: &[f64],
    ready: &[f64],
    out: &mut [f64],
    free: &mut [f64],
    busy: &mut [f64],
    (forward_share, p2p, chunks): (f64, f64, f64),
) {
    let n = out.len();
    let (x, ready, free, busy) = (&x[..n], &ready[..n], &mut free[..n], &mut busy[..n]);
    for d in 0..n {
        let forward = x[d] * forward_share;
        let part = if BACKWARD { x[d] - forward } else { forward };
        let duration = if CHUNKED { part / chunks } else { part };
        let input = if LINK { ready[d] + p2p } else { ready[d] };
        // The later of the two, as `max` gives it for times (never NaN, no
        // −0): one compare-and-select (MAXPD), where `max`'s NaN handling
        // costs a few instructions more per lane.
        let start = if input > free[d] { input } else { free[d] };
        let end = start + duration;
        free[d] = end;
        if BUSY {
            busy[d] += duration;
        }
        out[d] = end;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parallel::Schedule;
    use crate::parallel::pipeline::Times;

    #[test]
    fn lanes_evaluate_pipelines_as_the_program_does_replica_by_replica() {
        // One buffer throughout: rows of any width left by the previous run.
        let mut lanes_times = LaneTimes::default();
        let schedules = [
            Schedule::GPipe,
            Schedule::OneFOneB,
            Schedule::Interleaved(2),
            Schedule::Interleaved(3),
        ];
        for schedule in schedules {
            for (p, m, stride, lanes) in [
                (1, 1, 1, 1),
                (3, 6, 6, 2),
                (4, 8, 8, 4),
                (5, 5, 6, 3),
                (2, 8, 8, 16),
                (8, 16, 16, 8),
            ] {
                // The interleaved schedule needs two stages and M a multiple of P.
                if schedule.chunks() > 1 && (p == 1 || m % p != 0) {
                    continue;
                }
                let program = Program::new(schedule, p, m);
                let steps = Lanes::new(&program, stride);
                let rows = p * stride;
                let compute: Vec<f64> = (0..rows * lanes)
                    .map(|k| ((k * 7919 % 1000) as f64 + 1.0) / 997.0)
                    .collect();
                for p2p in [0.0, 0.25] {
                    steps.run(&compute, lanes, (1.0 / 3.0, p2p, true), &mut lanes_times);
                    for d in 0..lanes {
                        let own: Vec<f64> = (0..rows).map(|r| compute[r * lanes + d]).collect();
                        let mut times = Times::default();
                        program.run(&own, stride, 1.0 / 3.0, p2p, &mut times);
                        let at = format!("{} P={p} m={m} lane {d} of {lanes}, p2p {p2p}", schedule.name());
                        for i in 0..p {
                            assert_eq!(
                                times.free[i].to_bits(),
                                lanes_times.free[i * lanes + d].to_bits(),
                                "{at}"
                            );
                            assert_eq!(
                                times.busy[i].to_bits(),
                                lanes_times.busy[i * lanes + d].to_bits(),
                                "{at}"
                            );
                        }
                        for op in program.order() {
                            assert_eq!(
                                program.end(&times, op).to_bits(),
                                steps.end(&lanes_times, lanes, op, d).to_bits(),
                                "{at}: {op:?}"
                            );
                        }
                    }
                }
            }
        }
    }

    /// A program run on top of a larger one leaves each stage free when
    /// the program run alone does, to the bit, on every schedule, with and
    /// without transfers; and it runs only the ops it does not share: under
    /// 1F1B each stage's last w = P − i − 1 backwards, under GPipe the
    /// backwards. On top of a program of another schedule, where a stage's
    /// opening alike in both waits for an op its neighbour does not share
    /// (1F1B's first backward on GPipe's), it still ends as alone.
    #[test]
    fn a_program_on_top_of_a_larger_one_ends_as_it_does_alone() {
        let mut big_times = LaneTimes::default();
        let mut alone = LaneTimes::default();
        let pairs = [
            (Schedule::GPipe, Schedule::GPipe),
            (Schedule::OneFOneB, Schedule::OneFOneB),
            (Schedule::Interleaved(2), Schedule::Interleaved(2)),
            (Schedule::Interleaved(3), Schedule::Interleaved(3)),
            (Schedule::OneFOneB, Schedule::GPipe),
            (Schedule::GPipe, Schedule::OneFOneB),
        ];
        for (schedule, under) in pairs {
            for (p, small, big, lanes) in [
                (1, 1, 2, 1),
                (4, 8, 16, 16),
                (4, 3, 5, 4),
                (3, 6, 12, 2),
                (5, 5, 15, 3),
                (2, 8, 24, 8),
                (8, 16, 32, 4),
            ] {
                if schedule.chunks() > 1 && (p == 1 || small % p != 0 || big % p != 0) {
                    continue;
                }
                let (small_program, big_program) = (Program::new(schedule, p, small), Program::new(under, p, big));
                let top = Lanes::on_top_of(&small_program, &big_program, big);
                let compute: Vec<f64> = (0..p * big * lanes)
                    .map(|k| ((k * 7919 % 1000) as f64 + 1.0) / 997.0)
                    .collect();
                for p2p in [0.0, 0.25] {
                    let at = (1.0 / 3.0, p2p, false);
                    Lanes::new(&small_program, big).run(&compute, lanes, at, &mut alone);
                    Lanes::new(&big_program, big).run(&compute, lanes, at, &mut big_times);
                    top.run(&compute, lanes, at, &mut big_times);
                    let case = format!(
                        "{} P={p} M={small} on {} M={big}, {lanes} lanes, p2p {p2p}",
                        schedule.name(),
                        under.name()
                    );
                    for (k, (a, b)) in alone.free.iter().zip(&big_times.free).enumerate() {
                        assert_eq!(
                            a.to_bits(),
                            b.to_bits(),
                            "{case}: stage {} lane {}",
                            k / lanes,
                            k % lanes
                        );
                    }
                    assert_eq!(alone.free.len(), big_times.free.len(), "{case}");
                    let whole = Lanes::new(&small_program, big);
                    for op in small_program.order() {
                        for d in 0..lanes {
                            let (a, b) = (whole.end(&alone, lanes, op, d), top.end(&big_times, lanes, op, d));
                            assert_eq!(a.to_bits(), b.to_bits(), "{case}: {op:?} lane {d}");
                        }
                    }
                }
                let own = match (schedule, under) {
                    (Schedule::OneFOneB, Schedule::OneFOneB) => Some((0..p).map(|i| (p - i - 1).min(small)).sum()),
                    (Schedule::GPipe, Schedule::GPipe) => Some(p * small),
                    _ => None,
                };
                if let Some(own) = own {
                    assert_eq!(top.steps.len(), own, "{} P={p} M={small} on M={big}", schedule.name());
                }
            }
        }
    }
}
