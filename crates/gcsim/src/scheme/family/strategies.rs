//! The strategies that send uncoded results on a timeline of their own:
//! speculative copies (Dean & Ghemawat 2008) and the K-batch and
//! asynchronous SGD of Dutta et al. (2018).

use std::fmt;

use super::super::build::Build;
use super::super::facts::{Builder, Colour, Facts, Marker, Ops, Style, code, strategy, style};
use super::super::search::Scan;
use super::super::{Params, SPECULATE_AFTER, SPECULATE_FACTOR, SchemeError, Shape, Strategy};
use super::Def;
use crate::param::Param;

/// Speculative copies (the MapReduce and Spark rule): once a share of the
/// tasks is done, the unfinished ones are relaunched on idle workers (see
/// [`Strategy::Speculative`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Speculative {
    /// Q in (0, 1].
    pub after: f64,
    /// F in [1, 10⁶].
    pub factor: f64,
}

pub(super) const SPECULATIVE: Facts = Facts {
    uncoded_when_all_awaited: false,
    ..strategy(code(
        "speculative",
        "Speculative copies (MapReduce, Spark): after the fastest Q·n tasks, at F times that, unfinished tasks are relaunched on idle workers",
        &[Param::SpeculateAfter, Param::SpeculateFactor],
        style(Colour::SkyBlue, Marker::Square),
        Ops {
            build: build_speculative,
            grid: |ranges| {
                Ok(vec![Params {
                    speculate_after: ranges.speculate_after,
                    speculate_factor: ranges.speculate_factor,
                    ..Params::default()
                }])
            },
            // One candidate, at the defaults of --speculate-after and --speculate-factor.
            search: |_, _| Scan::one(Params::default()),
        },
    ))
};

fn build_speculative(b: &Build) -> Result<Shape, SchemeError> {
    let after = b.params.speculate_after.unwrap_or(SPECULATE_AFTER);
    let factor = b.params.speculate_factor.unwrap_or(SPECULATE_FACTOR);
    if !(after > 0.0 && after <= 1.0) {
        return Err(b.bad_value(
            Param::SpeculateAfter,
            after,
            "a share of the tasks in (0, 1], e.g. 0.75",
        ));
    }
    if !(factor.is_finite() && (1.0..=1e6).contains(&factor)) {
        return Err(b.bad_value(
            Param::SpeculateFactor,
            factor,
            "a number from 1 to 1e6 (copies start at F times the time the share was done)",
        ));
    }
    Ok(Shape::Speculative(Speculative { after, factor }))
}

impl Def for Speculative {
    fn threshold(&self, n: usize) -> usize {
        n
    }
    fn load(&self, _: usize) -> f64 {
        1.0
    }
    fn exact_gradient(&self) -> bool {
        true
    }
    fn strategy(&self) -> Option<Strategy> {
        Some(Strategy::Speculative {
            after: self.after,
            factor: self.factor,
        })
    }
    fn params(&self) -> Params {
        Params {
            speculate_after: Some(self.after),
            speculate_factor: Some(self.factor),
            ..Params::default()
        }
    }
    fn describe(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "speculative Q={} F={}", self.after, self.factor)
    }
}

/// K-batch-sync SGD: workers compute mini-batches back to back; the
/// iteration ends at the K-th mini-batch in all (see
/// [`Strategy::KBatchSync`]; inexact).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct KBatchSync {
    /// K in 1..=n.
    pub k: usize,
}

pub(super) const K_BATCH_SYNC: Facts = Facts {
    inexact: true,
    ..strategy(code(
        "k-batch-sync",
        "K-batch-sync SGD (Dutta et al. 2018): mini-batches back to back, the iteration ends at the K-th in all (--k, or --s as K=n-s; inexact)",
        &[Param::K, Param::S],
        style(Colour::Green, Marker::Circle),
        Ops {
            build: |b| Ok(Shape::KBatchSync(KBatchSync { k: b.k_or_s()? })),
            grid: |ranges| ranges.k_or_s(),
            // Load 1 whatever K: the whole list, K = n first.
            search: |n, _| Scan::every_s(n),
        },
    ))
};

impl Def for KBatchSync {
    fn threshold(&self, _: usize) -> usize {
        self.k
    }
    fn load(&self, _: usize) -> f64 {
        1.0
    }
    fn exact_gradient(&self) -> bool {
        false
    }
    fn strategy(&self) -> Option<Strategy> {
        Some(Strategy::KBatchSync { k: self.k })
    }
    fn params(&self) -> Params {
        Params::with_k(self.k)
    }
    fn describe(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "k-batch-sync K={}", self.k)
    }
}

/// Asynchronous SGD (see [`Strategy::Async`]): K-async (`BATCH` false),
/// an update from the first K gradients of distinct workers, the others
/// going on with a stale model; or K-batch-async (`BATCH` true), an update
/// from any K mini-batches, every worker computing back to back on the
/// model it last pulled.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Async<const BATCH: bool> {
    /// K in 1..=n.
    pub k: usize,
}

/// K-async SGD.
pub type KAsync = Async<false>;

/// K-batch-async SGD.
pub type KBatchAsync = Async<true>;

/// The facts of an asynchronous strategy.
const fn asynchronous(name: &'static str, help: &'static str, style: Style, build: Builder) -> Facts {
    Facts {
        inexact: true,
        uncoded_when_all_awaited: false,
        ..strategy(code(
            name,
            help,
            &[Param::K, Param::S],
            style,
            Ops {
                build,
                grid: |ranges| ranges.k_or_s(),
                // Each candidate a long run of updates: K = n, ⌈n/2⌉, ⌈n/4⌉, …, 1.
                search: |n, _| {
                    let ks = std::iter::successors(Some(n), |&k| (k > 1).then(|| k.div_ceil(2)));
                    vec![Scan::rising(ks.map(Params::with_k))]
                },
            },
        ))
    }
}

pub(super) const K_ASYNC: Facts = asynchronous(
    "k-async",
    "K-async SGD (Dutta et al. 2018): an update per K gradients of distinct workers, the others go on with a stale model (--k, or --s as K=n-s; asynchronous)",
    style(Colour::SkyBlue, Marker::TriangleUp),
    |b| Ok(Shape::KAsync(KAsync { k: b.k_or_s()? })),
);

pub(super) const K_BATCH_ASYNC: Facts = asynchronous(
    "k-batch-async",
    "K-batch-async SGD (Dutta et al. 2018): an update per K mini-batches from any workers, each computing back to back (--k, or --s as K=n-s; asynchronous)",
    style(Colour::Green, Marker::Square),
    |b| Ok(Shape::KBatchAsync(KBatchAsync { k: b.k_or_s()? })),
);

impl<const BATCH: bool> Def for Async<BATCH> {
    fn threshold(&self, _: usize) -> usize {
        self.k
    }
    fn load(&self, _: usize) -> f64 {
        1.0
    }
    fn exact_gradient(&self) -> bool {
        false
    }
    fn strategy(&self) -> Option<Strategy> {
        Some(Strategy::Async {
            k: self.k,
            batch: BATCH,
        })
    }
    fn params(&self) -> Params {
        Params::with_k(self.k)
    }
    fn describe(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = if BATCH { "k-batch-async" } else { "k-async" };
        write!(f, "{name} K={}", self.k)
    }
}
