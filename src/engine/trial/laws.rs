//! The worker laws the order-statistic sampler writes as increasing
//! functions of a standard exponential: one law for i.i.d. workers
//! ([`Standard`]), one per class for a heterogeneous cluster
//! ([`ClassLaws`]), and additive loads over exponential units
//! ([`erlang_loads`]).

use super::*;
use crate::dist::MAX_ERLANG_SHAPE;

/// Whether `study`'s loads are additive over i.i.d. exponential or
/// shifted-exponential units (no straggler mixture) and every
/// configuration's load, the baseline's too, is a whole number of units
/// from 1 to [`MAX_ERLANG_SHAPE`]: a worker's time at load ℓ is then
/// ℓ·shift + Gamma(ℓ, μ), an increasing function of a standard exponential
/// (see [`crate::dist::ErlangQuantile`]), and every configuration reads an order
/// statistic of one set of standard exponentials.
pub(super) fn erlang_loads(study: &Study) -> bool {
    let whole = |l: f64| l.fract() == 0.0 && (1.0..=f64::from(MAX_ERLANG_SHAPE)).contains(&l);
    matches!(study.load_model(), LoadModel::Additive)
        && matches!(
            Standard::of(study.workers()),
            Some(Standard::Exp { .. } | Standard::ShiftedExp { .. })
        )
        && study
            .schemes()
            .iter()
            .chain(std::iter::once(&study.baseline()))
            .all(|s| whole(s.load()))
}

/// A heterogeneous cluster whose every class has a [`Standard`] law: each
/// class's order statistics are drawn by Rényi's representation and the
/// classes' sorted runs merged, with no sort.
#[derive(Debug, Clone)]
pub(super) struct ClassLaws {
    /// `(count, law, 1/(m−i+1) for i = 1..m)` per class, in order.
    pub(super) classes: Vec<(usize, Standard, Vec<f64>)>,
    /// Random placement per trial.
    pub(super) shuffle: bool,
    /// Where each class's run starts in the trial's times, and n at the end.
    pub(super) starts: Vec<usize>,
}

impl ClassLaws {
    pub(super) fn of(workers: &Workers) -> Option<Self> {
        let Workers::Classes { classes, shuffle } = workers else {
            return None;
        };
        let classes = classes
            .iter()
            .map(|&(m, d)| {
                let law = Standard::of(&Workers::Iid(d))?;
                Some((m, law, (1..=m).map(|i| 1.0 / (m - i + 1) as f64).collect()))
            })
            .collect::<Option<Vec<_>>>()?;
        let starts = std::iter::once(0)
            .chain(classes.iter().scan(0, |at, (m, _, _)| {
                *at += m;
                Some(*at)
            }))
            .collect();
        Some(Self {
            classes,
            starts,
            shuffle: *shuffle,
        })
    }
}

/// An i.i.d. worker law written as an increasing function g of a standard
/// exponential E, so that g(E_(k)) is the law's k-th order statistic.
#[derive(Debug, Clone)]
pub(super) enum Standard {
    /// E/μ.
    Exp { inv_rate: f64 },
    /// shift + E/μ.
    ShiftedExp { shift: f64, inv_rate: f64 },
    /// x_m·e^(E/α).
    Pareto { scale: f64, inv_shape: f64 },
    /// λ·E^(1/k).
    Weibull { scale: f64, inv_shape: f64 },
    /// e^(μ + σ·Φ⁻¹(1 − e^(−E))), Φ⁻¹ by Wichura's AS 241 in E directly
    /// (see [`crate::dist::normal_of_exponential`]).
    LogNormal { mu: f64, sigma: f64 },
    /// The bootstrap from a trace: its ⌊M·U⌋-th smallest value (0-based) for
    /// U = 1 − e^(−E), uniform on [0, 1): each of the M values with
    /// probability 1/M (see [`Empirical`]).
    Empirical(Arc<Empirical>),
}

impl Standard {
    /// The representation of `workers`' law, if it has one.
    pub(super) fn of(workers: &Workers) -> Option<Self> {
        match workers {
            Workers::Iid(d) if d.groups().is_none() && d.stragglers().is_none_or(|(p, f)| p == 0.0 || f == 1.0) => {
                match d.base() {
                    Base::Exp { rate } => Some(Self::Exp { inv_rate: 1.0 / rate }),
                    Base::ShiftedExp { shift, rate } => Some(Self::ShiftedExp {
                        shift,
                        inv_rate: 1.0 / rate,
                    }),
                    Base::Pareto { scale, shape } => Some(Self::Pareto {
                        scale,
                        inv_shape: 1.0 / shape,
                    }),
                    Base::Weibull { scale, shape } => Some(Self::Weibull {
                        scale,
                        inv_shape: 1.0 / shape,
                    }),
                    Base::LogNormal { mu, sigma } => Some(Self::LogNormal { mu, sigma }),
                }
            }
            Workers::Trace(trace) => {
                let mut sorted = trace.all().to_vec();
                sorted.sort_unstable_by(f64::total_cmp);
                Some(Self::Empirical(Arc::new(Empirical::new(sorted))))
            }
            Workers::Iid(_) | Workers::Classes { .. } | Workers::Replay(_) => None,
        }
    }

    #[inline(always)]
    pub(super) fn apply(&self, e: f64) -> f64 {
        match self {
            Self::Exp { inv_rate } => e * inv_rate,
            Self::ShiftedExp { shift, inv_rate } => shift + e * inv_rate,
            Self::Pareto { scale, inv_shape } => scale * (e * inv_shape).exp(),
            Self::Weibull { scale, inv_shape } => scale * e.powf(*inv_shape),
            Self::LogNormal { mu, sigma } => (mu + sigma * crate::dist::normal_of_exponential(e)).exp(),
            // A call: inlined, the table's body would keep the compiler from
            // specialising the per-law loops of the other laws (the
            // bootstrap's own loop inlines it).
            Self::Empirical(table) => table.apply_outlined(e),
        }
    }
}
