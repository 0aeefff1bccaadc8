//! The worker laws the order-statistic sampler writes as increasing
//! functions of a standard exponential: one law for i.i.d. workers
//! ([`Standard`]), one per class for a heterogeneous cluster
//! ([`super::classes::ClassLaws`]), and per slot where each configuration's law differs:
//! additive loads over exponential units ([`erlang_loads`]) and exponential
//! transfers on dedicated links ([`hypoexponential_arrivals`]).

use super::*;
use crate::comm::Link;
use crate::dist::{HazardQuantile, MAX_ERLANG_SHAPE};

/// Whether `study`'s loads are additive over i.i.d. exponential or
/// shifted-exponential units (no straggler mixture) and every
/// configuration's load, the baseline's too, is a whole number of units
/// from 1 to [`MAX_ERLANG_SHAPE`]: a worker's time at load ℓ is then
/// ℓ·shift + Gamma(ℓ, μ), an increasing function of a standard exponential
/// (see [`HazardQuantile::erlang`]), and every configuration reads an order
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

/// Whether `study`'s messages take exponential (or shifted-exponential)
/// transfer times on dedicated links, from exponential or
/// shifted-exponential workers under a monotone load: each arrival is then
/// a constant plus the sum of two independent exponentials, the worker's
/// (its mean scaled by the load under `scaled`) and the transfer's (its
/// mean times the message size), an increasing function of one standard
/// exponential (see [`HazardQuantile::hypoexponential`]). Arrivals are
/// independent across workers, so a k-of-n rule reads an order statistic
/// of them and frc's groups the largest of the group minima, as of worker
/// times without messages.
pub(super) fn hypoexponential_arrivals(study: &Study) -> bool {
    let comm = study.comm();
    let exponential = |workers: &Workers| {
        matches!(
            Standard::of(workers),
            Some(Standard::Exp { .. } | Standard::ShiftedExp { .. })
        )
    };
    comm.link == Link::Dedicated
        && matches!(comm.transfer, Transfer::Random(d) if exponential(&Workers::Iid(d)))
        && study.load_model().is_monotone()
        && exponential(study.workers())
        && study.schemes().iter().all(|s| s.message() > 0.0)
}

/// A slot's time as `offset + scale·quantile(E)` of a standard exponential
/// E, where the slots' laws differ by more than the load model's map.
#[derive(Debug, Clone)]
pub(super) struct SlotLaw {
    pub(super) offset: f64,
    pub(super) scale: f64,
    pub(super) quantile: Arc<HazardQuantile>,
}

/// Each slot's law (slots of the same law share its table) where `study`
/// takes order statistics under Erlang loads or with hypoexponential
/// arrivals; empty otherwise. `loads` and `messages` are per slot.
pub(super) fn slot_laws(study: &Study, loads: &[f64], messages: &[f64]) -> Vec<SlotLaw> {
    let units = |workers: &Workers| match Standard::of(workers) {
        Some(Standard::Exp { inv_rate }) => Some((0.0, inv_rate)),
        Some(Standard::ShiftedExp { shift, inv_rate }) => Some((shift, inv_rate)),
        _ => None,
    };
    let Some((shift, inv_rate)) = units(study.workers()) else {
        return Vec::new();
    };
    let model = *study.load_model();
    let mut distinct: Vec<Arc<HazardQuantile>> = Vec::new();
    let mut shared = |q: HazardQuantile| match distinct.iter().find(|d| d.is(&q)) {
        Some(d) => d.clone(),
        None => {
            distinct.push(Arc::new(q));
            distinct[distinct.len() - 1].clone()
        }
    };
    if erlang_loads(study) {
        return loads
            .iter()
            .map(|&l| SlotLaw {
                offset: shift * l,
                scale: inv_rate,
                quantile: shared(HazardQuantile::erlang(l as u32)),
            })
            .collect();
    }
    let transfer = match study.comm().transfer {
        Transfer::Random(d) if hypoexponential_arrivals(study) => units(&Workers::Iid(d)),
        _ => None,
    };
    let Some((transfer_shift, transfer_mean)) = transfer else {
        return Vec::new();
    };
    loads
        .iter()
        .zip(messages)
        .map(|(&l, &message)| {
            // The worker's exponential part after the load model, whose map
            // is x ↦ a·x + b: its mean a/μ, and a·shift + b with the transfer's
            // shift into the constant.
            let scale = model.apply(l, 1.0) - model.apply(l, 0.0);
            let worker_mean = scale * inv_rate;
            let message_mean = message * transfer_mean;
            let (slow, fast) = (worker_mean.max(message_mean), worker_mean.min(message_mean));
            SlotLaw {
                offset: model.apply(l, shift) + message * transfer_shift,
                scale: slow,
                // At the time scales' extremes (1e±100, times loads) the
                // ratio stays finite; the clamp only guards the table's
                // precondition.
                quantile: shared(HazardQuantile::hypoexponential((slow / fast).min(f64::MAX))),
            }
        })
        .collect()
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
    /// λ·E^(1/k), where the table does not serve the power.
    Weibull { scale: f64, inv_shape: f64 },
    /// λ times E^(1/k) read from its table (see [`HazardQuantile::power`]).
    WeibullTable { scale: f64, table: Arc<HazardQuantile> },
    /// e^(μ + σ·Φ⁻¹(1 − e^(−E))), Φ⁻¹ by Wichura's AS 241 in E directly
    /// (see [`crate::dist::normal_of_exponential`]), for σ above
    /// [`crate::dist::MAX_TABLE_SIGMA`].
    LogNormal { mu: f64, sigma: f64 },
    /// e^μ times e^(σ·Φ⁻¹(1 − e^(−E))) read from its table (see
    /// [`HazardQuantile::log_normal`]), for σ up to
    /// [`crate::dist::MAX_TABLE_SIGMA`].
    LogNormalTable { scale: f64, table: Arc<HazardQuantile> },
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
                    Base::Weibull { scale, shape } => {
                        let table = HazardQuantile::power(1.0 / shape);
                        // The table holds every binade or none (its error is
                        // the same in each): binade 0 says which.
                        Some(if table.tabulates(1.0) {
                            Self::WeibullTable {
                                scale,
                                table: Arc::new(table),
                            }
                        } else {
                            Self::Weibull {
                                scale,
                                inv_shape: 1.0 / shape,
                            }
                        })
                    }
                    Base::LogNormal { mu, sigma } if sigma <= crate::dist::MAX_TABLE_SIGMA => {
                        Some(Self::LogNormalTable {
                            scale: mu.exp(),
                            table: Arc::new(HazardQuantile::log_normal(sigma)),
                        })
                    }
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

    /// Runs `w` with this law's transform E ↦ g(E) as a closure of its
    /// own type: one copy of `w` per law, the transform inlined in it, and
    /// no dispatch on the law per value. Every law's formula is here, once.
    #[inline(always)]
    pub(super) fn with_law<W: OverLaw>(&self, w: W) -> W::Out {
        match self {
            // e·1 is e, bit for bit: the standard exponential itself, whose
            // passes over a slice in place then compile to nothing.
            Self::Exp { inv_rate: 1.0 } => w.run(|e| e),
            &Self::Exp { inv_rate } => w.run(move |e| e * inv_rate),
            &Self::ShiftedExp { shift, inv_rate } => w.run(move |e| shift + e * inv_rate),
            &Self::Pareto { scale, inv_shape } => w.run(move |e| scale * (e * inv_shape).exp()),
            &Self::Weibull { scale, inv_shape } => w.run(move |e| scale * e.powf(inv_shape)),
            Self::WeibullTable { scale, table } => w.run(|e| scale * table.at(e)),
            &Self::LogNormal { mu, sigma } => {
                w.run(move |e| (mu + sigma * crate::dist::normal_of_exponential(e)).exp())
            }
            Self::LogNormalTable { scale, table } => w.run(|e| scale * table.at(e)),
            Self::Empirical(table) => w.run_empirical(table),
        }
    }

    /// g(e), the law's value at one standard exponential.
    #[inline(always)]
    pub(super) fn apply(&self, e: f64) -> f64 {
        struct At(f64);
        impl OverLaw for At {
            type Out = f64;
            #[inline(always)]
            fn run(self, law: impl Fn(f64) -> f64) -> f64 {
                law(self.0)
            }
        }
        match self {
            // A call: inlined, the table's body would keep the compiler from
            // specialising the callers' per-law code of the other laws.
            Self::Empirical(table) => table.apply_outlined(e),
            _ => self.with_law(At(e)),
        }
    }

    /// `dst[i] ← apply(src[i])` in one loop per law with its transform
    /// inlined (the same operations, so the same bits), instead of a
    /// dispatch on the law per value.
    pub(super) fn apply_all(&self, src: &[f64], dst: &mut [f64]) {
        struct Each<'a>(&'a [f64], &'a mut [f64]);
        impl OverLaw for Each<'_> {
            type Out = ();
            #[inline(always)]
            fn run(self, law: impl Fn(f64) -> f64) {
                self.1.iter_mut().zip(self.0).for_each(|(d, &e)| *d = law(e));
            }
            fn run_empirical(self, table: &Empirical) {
                self.1.copy_from_slice(self.0);
                table.apply_in_place(self.1);
            }
        }
        self.with_law(Each(src, dst));
    }
}

/// A computation over a law's transform (see [`Standard::with_law`]).
pub(super) trait OverLaw {
    type Out;
    /// The computation, given the transform E ↦ g(E).
    fn run(self, law: impl Fn(f64) -> f64) -> Self::Out;

    /// The computation for a trace's bootstrap, which a computation over a
    /// slice may take from [`Empirical::apply_in_place`] instead.
    #[inline(always)]
    fn run_empirical(self, table: &Empirical) -> Self::Out
    where
        Self: Sized,
    {
        self.run(|e| table.apply(e))
    }
}

/// Whether `workers` carry a state that every draw of an iteration keeps:
/// a straggler mixture that slows (0 < `p_slow`, `slowdown` > 1), whose
/// slow or normal state belongs to the worker for the whole iteration and
/// slows every draw it makes (its units of work, mini-batches, copies), or
/// persistence and groups (see [`crate::dist::Dist::is_stateful`]). A law
/// without one has no state: its draws are independent.
pub(super) fn stateful(workers: &Workers) -> bool {
    let law = |d: &crate::dist::Dist| d.is_stateful() || d.stragglers().is_some_and(|(p, f)| p > 0.0 && f > 1.0);
    match workers {
        Workers::Iid(d) => law(d),
        Workers::Classes { classes, .. } => classes.iter().any(|(_, d)| law(d)),
        Workers::Trace(_) | Workers::Replay(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    /// The loop per law gives each law's value bit for bit, for every law
    /// the order statistics take (both Weibull and both log-normal forms,
    /// a trace's bootstrap), at values across the range and at the edges.
    #[test]
    fn apply_all_is_apply_for_every_law() {
        let specs = [
            "exp:rate=2",
            "shifted-exp:shift=0.5,rate=1",
            "pareto:scale=1,shape=2.5",
            "weibull:scale=1,shape=4",
            "weibull:scale=1,shape=0.05",
            "lognormal:mu=0.3,sigma=1",
            "lognormal:mu=0,sigma=3",
        ];
        let mut laws: Vec<Standard> = specs
            .iter()
            .map(|s| Standard::of(&Workers::Iid(s.parse().unwrap())).unwrap())
            .collect();
        laws.push(Standard::Empirical(Arc::new(Empirical::new(vec![
            0.5, 1.0, 1.0, 2.0, 7.5,
        ]))));
        assert!(matches!(laws[3], Standard::WeibullTable { .. }) && matches!(laws[4], Standard::Weibull { .. }));
        assert!(matches!(laws[5], Standard::LogNormalTable { .. }) && matches!(laws[6], Standard::LogNormal { .. }));
        let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(4);
        let mut src: Vec<f64> = (0..2000)
            .map(|i| rand_distr::Distribution::<f64>::sample(&Exp1, &mut rng) * (1 + i % 20) as f64)
            .collect();
        src.extend([0.0, 1e-300, 2f64.powi(-9), 2f64.powi(7), 700.0]);
        for law in &laws {
            let mut dst = vec![0.0; src.len()];
            law.apply_all(&src, &mut dst);
            for (&e, &d) in src.iter().zip(&dst) {
                assert_eq!(d.to_bits(), law.apply(e).to_bits(), "{law:?} at {e}");
            }
        }
    }
}
