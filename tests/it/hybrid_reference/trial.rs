//! One iteration's draws, its evaluation, and the estimates over trials.

use rand::{RngExt, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

use super::{Job, Pipeline, Scheme, Timeline, replica};

/// One iteration's random numbers.
#[derive(Debug, Clone)]
pub struct Draws {
    /// X_{r,j} at `x[r * m + j]`, a slow rank's already times its slowdown.
    pub x: Vec<f64>,
    /// u_{d,j} at `u[d * m + j]` (all 1 without a microbatch work law).
    pub u: Vec<f64>,
}

/// One iteration's outcome.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Trial {
    /// The scheme's iteration time.
    pub time: f64,
    /// The uncoded job's on the same draws (microbatches 0..M − 1).
    pub baseline: f64,
    /// The mean over stages and buckets of the share of replicas summed.
    pub share: f64,
    /// The scheme's pipelines' idle share, averaged over the replicas.
    pub bubble: f64,
}

/// Means over trials, each with the standard deviation of its per-trial
/// terms, so that its standard error is `sd / √trials`.
#[derive(Debug, Clone, Copy)]
pub struct Estimate {
    pub trials: usize,
    pub mean: f64,
    pub std_err: f64,
    pub bubble: f64,
    pub bubble_sd: f64,
    pub share: f64,
    pub share_sd: f64,
    /// The uncoded mean over the scheme's, on the same draws.
    pub speedup: f64,
    /// The delta method's per-trial deviation of the speedup.
    pub speedup_sd: f64,
}

/// The mean and the standard deviation (n − 1) of `v`.
fn mean_sd(v: &[f64]) -> (f64, f64) {
    let n = v.len() as f64;
    let mean = v.iter().sum::<f64>() / n;
    let var = v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
    (mean, var.sqrt())
}

impl Job {
    /// m, the microbatches a replica runs: its load times M.
    pub fn microbatches_run(&self) -> usize {
        self.scheme.load() * self.microbatches
    }

    /// Rank r of tensor index t of stage i of replica d.
    pub fn rank(&self, d: usize, i: usize, t: usize) -> usize {
        (d * self.pp + i) * self.tp + t
    }

    /// One iteration's draws: each rank's straggler state, then its m
    /// draws, then the replicas' microbatch work.
    pub fn draw(&self, rng: &mut Xoshiro256PlusPlus) -> Draws {
        let m = self.microbatches_run();
        let ranks = self.dp * self.pp * self.tp;
        let mut x = Vec::with_capacity(ranks * m);
        for _ in 0..ranks {
            let factor = match self.stragglers {
                Some((p_slow, slowdown)) if rng.random::<f64>() < p_slow => slowdown,
                _ => 1.0,
            };
            x.extend((0..m).map(|_| factor * self.worker.sample(rng)));
        }
        let u = match &self.microbatch_work {
            Some(law) => (0..self.dp * m).map(|_| law.sample(rng)).collect(),
            None => vec![1.0; self.dp * m],
        };
        Draws { x, u }
    }

    /// Replica d's compute x_{i,j} = w_i · u_{d,j} · max_t X_{rank(d,i,t), j}
    /// for its first `mm` microbatches, at `[i * mm + j]`.
    fn compute(&self, draws: &Draws, d: usize, mm: usize) -> Vec<f64> {
        let m = self.microbatches_run();
        let mut c = Vec::with_capacity(self.pp * mm);
        for i in 0..self.pp {
            for j in 0..mm {
                let slowest = (0..self.tp)
                    .map(|t| draws.x[self.rank(d, i, t) * m + j])
                    .fold(f64::NEG_INFINITY, f64::max);
                c.push(self.stage_work[i] * draws.u[d * m + j] * slowest);
            }
        }
        c
    }

    /// Every replica's timeline over its first `pipe.microbatches` microbatches.
    pub(super) fn timelines(&self, pipe: &Pipeline, draws: &Draws) -> Vec<Timeline> {
        (0..self.dp)
            .map(|d| replica(pipe, &self.compute(draws, d, pipe.microbatches)))
            .collect()
    }

    /// The iteration's end under `scheme`, the latest stage's last
    /// bucket's sum then the optimizer, and the mean share of replicas
    /// summed.
    fn end(&self, scheme: Scheme, timelines: &[Timeline]) -> (f64, f64) {
        let bucket = |p: usize| {
            self.ring.map_or(0.0, |ring| {
                let shards = self.pp * self.tp * self.buckets;
                ring.cost(p, self.dp, shards)
            })
        };
        let (mut latest, mut summed) = (f64::NEG_INFINITY, 0);
        for i in 0..self.pp {
            let (end, p) = self.stage_sums(scheme, timelines, i, bucket);
            latest = latest.max(end);
            summed += p;
        }
        let share = summed as f64 / (self.pp * self.buckets * self.dp) as f64;
        (latest + self.optimizer, share)
    }

    /// Stage i's last bucket's sum ends at e_K: bucket j = 1..K is ready on
    /// replica d at r_{d,j} = g_{d,i} − (1 − j/K)·b_{d,i} (g and b its last
    /// op's end and duration), the scheme's rule over the replicas' r_{d,j}
    /// gives t_j, and e_j = max(t_j, e_{j−1}) + c, e_0 = −∞: one bucket's
    /// sum at a time, each costing c.
    pub(super) fn stage_end(&self, scheme: Scheme, timelines: &[Timeline], i: usize, c: f64) -> f64 {
        self.stage_sums(scheme, timelines, i, |_| c).0
    }

    /// Stage i's end as [`Self::stage_end`], a bucket among p replicas
    /// costing `cost(p)`, and the replicas summed over its buckets.
    fn stage_sums(
        &self,
        scheme: Scheme,
        timelines: &[Timeline],
        i: usize,
        cost: impl Fn(usize) -> f64,
    ) -> (f64, usize) {
        let k = self.buckets;
        let (mut end, mut summed) = (f64::NEG_INFINITY, 0);
        for j in 1..=k {
            let lag = 1.0 - j as f64 / k as f64;
            let mut ready: Vec<f64> = timelines.iter().map(|t| t.done[i] - lag * t.last[i]).collect();
            let (t, p) = scheme.decide(&mut ready);
            end = t.max(end) + cost(p);
            summed += p;
        }
        (end, summed)
    }

    pub(super) fn pipeline(&self, microbatches: usize) -> Pipeline {
        Pipeline::new(self.schedule, self.pp, microbatches, self.backward_ratio, self.p2p)
    }

    /// One iteration on `draws`: the scheme's time and bubble, and the
    /// uncoded job's time on its first M microbatches.
    pub fn evaluate(&self, draws: &Draws) -> Trial {
        self.evaluate_on(
            &self.pipeline(self.microbatches_run()),
            &self.pipeline(self.microbatches),
            draws,
        )
    }

    fn evaluate_on(&self, pipe: &Pipeline, base_pipe: &Pipeline, draws: &Draws) -> Trial {
        let timelines = self.timelines(pipe, draws);
        let bubble = timelines.iter().map(Timeline::bubble).sum::<f64>() / self.dp as f64;
        let (time, share) = self.end(self.scheme, &timelines);
        let baseline = if pipe.microbatches == base_pipe.microbatches {
            self.end(Scheme::Uncoded, &timelines).0
        } else {
            self.end(Scheme::Uncoded, &self.timelines(base_pipe, draws)).0
        };
        Trial {
            time,
            baseline,
            share,
            bubble,
        }
    }

    /// `trials` iterations from one xoshiro256++ stream seeded with `seed`.
    pub fn simulate(&self, trials: usize, seed: u64) -> Estimate {
        if let Scheme::Frc(s) = self.scheme {
            assert_eq!(self.dp % (s + 1), 0, "frc needs s + 1 to divide dp");
        }
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
        let (pipe, base_pipe) = (self.pipeline(self.microbatches_run()), self.pipeline(self.microbatches));
        let outcomes: Vec<Trial> = (0..trials)
            .map(|_| self.evaluate_on(&pipe, &base_pipe, &self.draw(&mut rng)))
            .collect();
        let column = |f: fn(&Trial) -> f64| outcomes.iter().map(f).collect::<Vec<f64>>();
        let (mean, sd) = mean_sd(&column(|t| t.time));
        let (bubble, bubble_sd) = mean_sd(&column(|t| t.bubble));
        let (share, share_sd) = mean_sd(&column(|t| t.share));
        let (base, _) = mean_sd(&column(|t| t.baseline));
        let speedup = base / mean;
        let influence: Vec<f64> = outcomes
            .iter()
            .map(|t| (t.baseline - speedup * t.time) / mean)
            .collect();
        Estimate {
            trials,
            mean,
            std_err: sd / (trials as f64).sqrt(),
            bubble,
            bubble_sd,
            share,
            share_sd,
            speedup,
            speedup_sd: mean_sd(&influence).1,
        }
    }
}
