//! An independent simulator of hybrid-parallel training, data × pipeline ×
//! tensor parallel (issue 60's model), written from the model's text to
//! check `gcsim run --parallel` against.
//!
//! Layout dp = D, pp = P, tp = T: rank r = (d·P + i)·T + t is tensor index t
//! of stage i of replica d. Per iteration every rank is slow with
//! probability p_slow (its draws then times `slowdown`) and draws
//! X_{r,j} for each of its replica's m microbatches (m = M uncoded or
//! ignore, (s + 1)·M for frc and crc, a replica's load being s + 1); a
//! microbatch work law draws u_{d,j}, shared by the replica's stages. The
//! microbatch's compute on stage i is x = w_i · u_{d,j} · max_t X, its
//! forward x/(1 + R) and its backward R·x/(1 + R); under the interleaved
//! schedule (`--schedule interleaved:V`) each stage holds V model chunks,
//! virtual stages of P·V, whose ops take 1/V of those; the pipeline runs
//! as the event queue of `pipeline.rs`. Per stage the scheme's rule over the
//! replicas' done times gives t_i; a ring all-reduce among the rule's
//! participants (Patarasuk & Yuan 2009), with an agreement collective
//! where they are not all D, adds c; the iteration ends at max_i t_i + c
//! plus the optimizer's time. With K gradient buckets (`--buckets`) stage
//! i's bucket j = 1..K is ready on replica d at g − (1 − j/K)·b, g and b
//! the end and the duration of the stage's last op B(i, m − 1) (of chunk
//! 0); the rule
//! over the replicas gives t_j, and the buckets are summed one after
//! another, each costing c on a K-th of the message: e_j = max(t_j,
//! e_{j−1}) + c, and the stage ends at e_K (K = 1 is the line above).
//! Under `timeout` T each bucket is summed among the replicas whose bucket
//! is ready by min(T, the last one's), or, if none is by T, the first
//! one's alone; its c is that of those p replicas, and the data share of
//! the update is the mean over stages and buckets of p/D.
//! Means carry their standard errors; the
//! speedup is the uncoded job's mean (microbatches 0..M − 1 of the same
//! draws) over the scheme's.

mod bucket_checks;
mod checks;
mod flags;
mod interleaved_checks;
pub mod pipeline;
pub mod trial;

use rand_distr::{Distribution, Exp, LogNormal};
use rand_xoshiro::Xoshiro256PlusPlus;

pub use pipeline::{Pipeline, Schedule, Timeline, replica};

/// A law of one draw: a constant (for exact checks), exponential or log-normal.
#[derive(Debug, Clone, Copy)]
pub enum Law {
    Const(f64),
    Exp(Exp<f64>),
    LogNormal(LogNormal<f64>),
}

impl Law {
    fn sample(&self, rng: &mut Xoshiro256PlusPlus) -> f64 {
        match self {
            Law::Const(x) => *x,
            Law::Exp(d) => d.sample(rng),
            Law::LogNormal(d) => d.sample(rng),
        }
    }

    /// `exp:rate=1`, `lognormal:mu=0,sigma=0.5` or `const:x=3` (this
    /// reference's own, for exact checks), with optional
    /// `p_slow=..,slowdown=..`: the law and (p_slow, slowdown).
    pub fn parse(text: &str) -> (Law, Option<(f64, f64)>) {
        let (family, keys) = text.split_once(':').unwrap_or((text, ""));
        let key = |name: &str| -> Option<f64> {
            keys.split(',')
                .filter_map(|kv| kv.split_once('='))
                .find(|(k, _)| *k == name)
                .map(|(_, v)| v.parse().unwrap_or_else(|_| panic!("{text}: {name}")))
        };
        let need = |name: &str| key(name).unwrap_or_else(|| panic!("{text}: no {name}"));
        let law = match family {
            "const" => Law::Const(need("x")),
            "exp" => Law::Exp(Exp::new(need("rate")).unwrap()),
            "lognormal" => Law::LogNormal(LogNormal::new(need("mu"), need("sigma")).unwrap()),
            other => panic!("the reference has no law {other}"),
        };
        let stragglers = key("p_slow").map(|p| (p, need("slowdown")));
        (law, stragglers)
    }
}

/// How the replicas' done times of one stage decide it (a replica is the
/// unit of work; Tandon et al. 2017 for frc and crc).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Scheme {
    Uncoded,
    Ignore(usize),
    Crc(usize),
    Frc(usize),
    /// A deadline T from the iteration's start.
    Timeout(f64),
}

impl Scheme {
    pub fn name(self) -> &'static str {
        match self {
            Scheme::Uncoded => "uncoded",
            Scheme::Ignore(_) => "ignore",
            Scheme::Crc(_) => "crc",
            Scheme::Frc(_) => "frc",
            Scheme::Timeout(_) => "timeout",
        }
    }

    /// A replica's load: its microbatches are load × M.
    fn load(self) -> usize {
        match self {
            Scheme::Uncoded | Scheme::Ignore(_) | Scheme::Timeout(_) => 1,
            Scheme::Crc(s) | Scheme::Frc(s) => s + 1,
        }
    }

    /// The stage's time from its replicas' done times (reordered in place):
    /// the largest (uncoded), the (D − s)-th smallest (ignore, crc), or the
    /// largest over groups of s + 1 consecutive replicas of the group's
    /// smallest (frc).
    pub fn rule(self, g: &mut [f64]) -> f64 {
        let d = g.len();
        match self {
            Scheme::Timeout(_) => self.decide(g).0,
            Scheme::Uncoded => g.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            Scheme::Ignore(s) | Scheme::Crc(s) => *g.select_nth_unstable_by(d - s - 1, f64::total_cmp).1,
            Scheme::Frc(s) => g
                .chunks(s + 1)
                .map(|group| group.iter().copied().fold(f64::INFINITY, f64::min))
                .fold(f64::NEG_INFINITY, f64::max),
        }
    }

    /// The replicas the rule waits for, who take part in the collective.
    pub fn participants(self, d: usize) -> usize {
        match self {
            Scheme::Uncoded => d,
            Scheme::Ignore(s) | Scheme::Crc(s) => d - s,
            Scheme::Frc(s) => d / (s + 1),
            Scheme::Timeout(_) => panic!("a deadline's participants vary"),
        }
    }

    /// The stage's time and the replicas summed, from the replicas' done
    /// times (sorted in place). A deadline T: with g sorted, the replicas
    /// done by T if any is (all of them when the last is, at the last's
    /// time), else the first alone at its time, with any tied with it.
    pub fn decide(self, g: &mut [f64]) -> (f64, usize) {
        let Scheme::Timeout(t) = self else {
            return (self.rule(g), self.participants(g.len()));
        };
        g.sort_by(f64::total_cmp);
        let by_t = g.partition_point(|&x| x <= t);
        if by_t == g.len() {
            (g[g.len() - 1], g.len())
        } else if by_t > 0 {
            (t, by_t)
        } else {
            (g[0], g.partition_point(|&x| x <= g[0]))
        }
    }
}

/// A ring all-reduce of each stage's gradient among its replicas.
#[derive(Debug, Clone, Copy)]
pub struct Ring {
    /// S, the whole model's gradient in bytes.
    pub bytes: f64,
    /// Bytes per second.
    pub bandwidth: f64,
    /// α, seconds per message.
    pub latency: f64,
}

impl Ring {
    /// A stage's collective among p of the d replicas: an agreement (the
    /// ring's α terms) where p < d, then each tensor rank's ring on its
    /// 1/shards share: 2(p − 1)α + 2((p − 1)/p)·share/bandwidth. A stage's
    /// whole gradient has shards = P·T; one of its K buckets P·T·K.
    pub fn cost(&self, p: usize, d: usize, shards: usize) -> f64 {
        let steps = 2.0 * (p - 1) as f64;
        let agreement = if p < d { steps * self.latency } else { 0.0 };
        let share = self.bytes / shards as f64;
        agreement + steps * self.latency + steps / p as f64 * share / self.bandwidth
    }
}

/// One hybrid-parallel job, as the flags of `gcsim run --parallel` give it.
#[derive(Debug, Clone)]
pub struct Job {
    pub dp: usize,
    pub pp: usize,
    pub tp: usize,
    pub microbatches: usize,
    pub schedule: Schedule,
    pub backward_ratio: f64,
    pub p2p: f64,
    pub stage_work: Vec<f64>,
    pub microbatch_work: Option<Law>,
    pub worker: Law,
    /// (p_slow, slowdown).
    pub stragglers: Option<(f64, f64)>,
    pub scheme: Scheme,
    pub ring: Option<Ring>,
    /// K, the buckets each stage's gradient is summed in.
    pub buckets: usize,
    pub optimizer: f64,
}
