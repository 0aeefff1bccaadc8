//! A validated study: one cluster, one law, one load model, the schemes to
//! compare, the communication model and decoder, and how many trials with
//! which seed. The one place that knows a study's exact law.

use std::sync::Arc;

use crate::analytic::{ComputationLaw, ExactLaw, classes::ClassLaw, groups::GroupLaw, iteration_law};
use crate::codes::custom::CustomMatrix;
use crate::codes::{Code, CodeError, Generator};
use crate::collective::Aggregation;
use crate::comm::{Comm, Link, Transfer};
use crate::dist::Dist;
use crate::load::LoadModel;
use crate::parallel::Parallel;
use crate::scheme::{Params, Rule, Scheme, SchemeKind, Strategy};

pub use crate::comm::Decoder;
pub use crate::workers::Workers;
pub use aggregation::{Conflict, summed};
pub use error::StudyError;
pub use parallel::ParallelConflict;

/// Most worker draws one trial may hold in memory (additive loads draw one
/// value per unit of work per worker): 2²⁴ values, 128 MiB per thread.
pub const MAX_DRAWS_PER_TRIAL: u64 = 1 << 24;

/// Most worker draws a whole study may make: about a day on two cores.
pub const MAX_TOTAL_DRAWS: u64 = 20_000_000_000_000;

/// Most configurations one study compares.
pub const MAX_CONFIGS: usize = 10_000;

/// Most consecutive iterations one trial may run.
pub const MAX_ITERATIONS: u64 = 10_000_000;

/// Everything one simulation needs, validated. Serialised (in shard files)
/// as every field, and read back through the same validation.
#[derive(Debug, Clone, PartialEq)]
pub struct Study {
    n: usize,
    workers: Workers,
    load_model: LoadModel,
    schemes: Vec<Scheme>,
    trials: u64,
    seed: u64,
    comm: Comm,
    decoder: Decoder,
    generator: Option<Generator>,
    /// The user's encoding matrix, for `custom` schemes.
    custom: Option<Arc<CustomMatrix>>,
    /// Consecutive iterations per trial: a trial's value is their total time.
    iterations: u64,
    /// How gradients are summed: at a master, or by a collective.
    aggregation: Aggregation,
    /// The hybrid-parallel layout, where the workers are its ranks and the
    /// schemes code across its replicas.
    parallel: Option<Arc<Parallel>>,
}

impl Study {
    /// Validates a study of `n` i.i.d. workers of law `dist`. Every scheme
    /// must be built for the same `n`.
    pub fn new(
        n: usize,
        dist: Dist,
        load_model: LoadModel,
        schemes: Vec<Scheme>,
        trials: u64,
        seed: u64,
    ) -> Result<Self, StudyError> {
        Self::with_workers(n, Workers::Iid(dist), load_model, schemes, trials, seed)
    }

    /// Validates a study of `n` workers described by `workers`.
    pub fn with_workers(
        n: usize,
        workers: Workers,
        load_model: LoadModel,
        schemes: Vec<Scheme>,
        trials: u64,
        seed: u64,
    ) -> Result<Self, StudyError> {
        if n == 0 {
            return Err(StudyError::NoWorkers);
        }
        if trials == 0 {
            return Err(StudyError::NoTrials);
        }
        if schemes.is_empty() {
            return Err(StudyError::Empty);
        }
        if schemes.len() > MAX_CONFIGS {
            return Err(StudyError::TooManyConfigs(schemes.len()));
        }
        assert!(
            schemes.iter().all(|s| s.n() == n),
            "schemes are built for the study's n"
        );
        if let Workers::Classes { classes, .. } = &workers {
            let total: usize = classes.iter().map(|c| c.0).sum();
            if total != n {
                return Err(StudyError::ClassCount { classes: total, n });
            }
        }
        if matches!(workers, Workers::Replay(_)) && load_model == LoadModel::Additive {
            return Err(StudyError::ReplayAdditive);
        }
        let study = Self {
            n,
            workers,
            load_model,
            schemes,
            trials,
            seed,
            comm: Comm::default(),
            decoder: Decoder::Threshold,
            generator: None,
            custom: None,
            iterations: 1,
            aggregation: Aggregation::Master,
            parallel: None,
        };
        if n as u64 > MAX_DRAWS_PER_TRIAL {
            return Err(StudyError::TooManyWorkers(n));
        }
        // approx-regular's error is simulated with its matrix under either
        // decoder (a custom code's matrix is the user's, checked with it).
        for s in study.schemes.iter().filter(|s| s.kind() == SchemeKind::ApproxRegular) {
            Code::new(s, seed).map_err(|reason| StudyError::ApproxCode {
                scheme: s.to_string(),
                reason,
            })?;
        }
        let per_trial = study.draws_per_trial();
        if per_trial > MAX_DRAWS_PER_TRIAL {
            return Err(StudyError::TrialTooLarge {
                load: study.max_load(),
                n,
                draws: per_trial,
            });
        }
        study.check_messages()?;
        study.check_work()?;
        Ok(study)
    }

    /// The whole study's draws within [`MAX_TOTAL_DRAWS`] (which also keeps
    /// trials × iterations, the streams' index, far from overflow).
    fn check_work(&self) -> Result<(), StudyError> {
        let per_trial = self.draws_per_trial() * self.iterations;
        let draws = per_trial as u128 * self.trials as u128;
        if draws > MAX_TOTAL_DRAWS as u128 {
            return Err(StudyError::TooMuchWork {
                draws,
                trials: self.trials,
                per_trial,
            });
        }
        Ok(())
    }

    /// The same study with each trial `iterations` consecutive iterations
    /// (1 to [`MAX_ITERATIONS`]), whose total time is the trial's value.
    pub fn with_iterations(self, iterations: u64) -> Result<Self, StudyError> {
        if !(1..=MAX_ITERATIONS).contains(&iterations) {
            return Err(StudyError::Iterations(iterations));
        }
        let study = Self { iterations, ..self };
        study.check_work()?;
        Ok(study)
    }

    /// Consecutive iterations per trial.
    pub fn iterations(&self) -> u64 {
        self.iterations
    }

    /// Number of workers.
    pub fn n(&self) -> usize {
        self.n
    }

    /// The same study with a communication and decoding model.
    pub fn with_comm(self, comm: Comm) -> Self {
        Self { comm, ..self }
    }

    /// The same study with another decoder; under [`Decoder::Rank`] every
    /// configuration's code must be constructible.
    pub fn with_decoder(self, decoder: Decoder) -> Result<Self, StudyError> {
        let study = Self { decoder, ..self };
        study.check_codes()?;
        Ok(study)
    }

    /// The same study with the generator of the codes that have several
    /// (comm-efficient and mds; Gaussian where none is given). It chooses the
    /// code of the rank decoder, so it needs one.
    pub fn with_generator(self, generator: Option<Generator>) -> Result<Self, StudyError> {
        let study = Self { generator, ..self };
        study.check_codes()?;
        Ok(study)
    }

    /// The same study with the user's matrix of its `custom` schemes, whose
    /// shapes must be the matrix's.
    pub fn with_custom(self, custom: Option<CustomMatrix>) -> Result<Self, StudyError> {
        let study = Self {
            custom: custom.map(Arc::new),
            ..self
        };
        study.check_codes()?;
        Ok(study)
    }

    /// The same study on other workers (a bootstrap replicate of its
    /// trace), with `trials` trials from `seed`; everything else is kept.
    pub fn replicate(&self, workers: Workers, trials: u64, seed: u64) -> Result<Self, StudyError> {
        let base = match &self.parallel {
            Some(p) => Self::hybrid(p.as_ref().clone(), workers, self.schemes.clone(), trials, seed)?,
            None => Self::with_workers(self.n, workers, self.load_model, self.schemes.clone(), trials, seed)?,
        };
        let study = Self {
            comm: self.comm,
            decoder: self.decoder,
            generator: self.generator,
            custom: self.custom.clone(),
            iterations: self.iterations,
            aggregation: self.aggregation,
            ..base
        };
        study.check_work()?;
        Ok(study)
    }

    fn check_codes(&self) -> Result<(), StudyError> {
        let customs = self.schemes.iter().filter(|s| s.kind() == SchemeKind::Custom);
        match &self.custom {
            None if customs.clone().next().is_some() => {
                return Err(StudyError::NoCustomMatrix);
            }
            Some(m) if customs.clone().next().is_none() => {
                return Err(StudyError::CustomMatrix(format!(
                    "{} is read only for the custom scheme, which is not among the schemes",
                    m.source
                )));
            }
            Some(m) => {
                let shape = m.shape();
                for s in customs {
                    if s.n() != shape.n || s.partitions() != shape.partitions || s.d() != Some(shape.max_support) {
                        return Err(StudyError::CustomMatrix(format!(
                            "{} is {} x {} with at most {} nonzeros in a row, but the custom scheme is {} x {} with {}",
                            m.source,
                            shape.n,
                            shape.partitions,
                            shape.max_support,
                            s.n(),
                            s.partitions(),
                            s.d().unwrap_or(0)
                        )));
                    }
                    Self::check_decodable(m, s)?;
                }
            }
            None => {}
        }
        match (self.decoder, self.generator) {
            // A generator none of the schemes takes is refused as such,
            // whatever the decoder, rather than asking for the rank decoder.
            (Decoder::Threshold, Some(_)) if !self.schemes.iter().any(|s| s.kind().facts().generator) => {
                Err(StudyError::GeneratorDoesNotAct(self.schemes[0].kind()))
            }
            (Decoder::Threshold, Some(_)) => Err(StudyError::GeneratorWithoutRank),
            (Decoder::Threshold, None) => Ok(()),
            (Decoder::Rank, _) => {
                self.check_rank_acts()?;
                for s in self.schemes.iter().chain(std::iter::once(&self.baseline())) {
                    self.code(s).map_err(StudyError::Code)?;
                }
                Ok(())
            }
        }
    }

    /// The real code of `scheme` that the rank decoder uses: the study's
    /// generator where the scheme takes one, built from the study's seed.
    pub fn code(&self, scheme: &Scheme) -> Result<Code, CodeError> {
        if scheme.kind() == SchemeKind::Custom {
            let m = self.custom.as_ref().ok_or(CodeError::Custom)?;
            return Ok(Code::of_custom(scheme, m));
        }
        match self.generator {
            Some(g) if scheme.kind().facts().generator => Code::with_generator(scheme, g, self.seed),
            _ => Code::new(scheme, self.seed),
        }
    }

    /// The generator of the codes that have several, if one was chosen.
    pub fn generator(&self) -> Option<Generator> {
        self.generator
    }

    /// How the master decides that it can decode.
    pub fn decoder(&self) -> Decoder {
        self.decoder
    }

    /// The communication and decoding model.
    pub fn comm(&self) -> &Comm {
        &self.comm
    }

    /// The law of every worker, when they are i.i.d. of a parametric law.
    pub fn dist(&self) -> Option<&Dist> {
        match &self.workers {
            Workers::Iid(d) => Some(d),
            _ => None,
        }
    }

    /// Who the workers are.
    pub fn workers(&self) -> &Workers {
        &self.workers
    }

    /// The exact mean staleness of an asynchronous scheme on i.i.d.
    /// exponential workers whose results take no time to travel (see
    /// [`crate::analytic::staleness`]); `None` otherwise.
    pub(crate) fn exact_staleness(&self, scheme: &Scheme) -> Option<f64> {
        match &self.workers {
            Workers::Iid(d) if !self.comm.transfers() => crate::analytic::staleness(d, &self.load_model, scheme),
            _ => None,
        }
    }

    /// The exact law of `scheme`'s iteration time, where the theory gives
    /// one: i.i.d. parametric workers, or classes of workers under a
    /// one-draw load model, or i.i.d. workers with group slowdowns under a
    /// one-draw load model (a mixture over the slow groups, see
    /// [`crate::analytic::groups`]), or K-batch and K-async strategies on
    /// exponential workers of a straggler mixture (a mixture over the slow
    /// workers); under communication only where it shifts every
    /// arrival by the same constant (a dedicated link with a constant
    /// transfer time), the law of computation shifted by τ·message plus the
    /// decoding time. None under the rank decoder, which is simulated, and
    /// for a trial of several iterations (whose total has no exact law
    /// here; see [`Study::exact_mean`] and [`Study::exact_iteration_law`]).
    pub fn exact_law(&self, scheme: &Scheme) -> Option<ExactLaw> {
        if self.iterations > 1 {
            return None;
        }
        self.exact_iteration_law(scheme)
    }

    /// The exact mean of a trial's value: the iterations' total. Each
    /// iteration's state starts from (persistence) or is drawn from the
    /// stationary law, so every iteration has the law of one, and the mean
    /// of the total is `iterations` times its mean, whatever the
    /// correlation between iterations.
    pub fn exact_mean(&self, scheme: &Scheme) -> Option<f64> {
        let law = self.exact_iteration_law(scheme)?;
        Some(self.iterations as f64 * law.mean())
    }

    /// The exact law of one iteration's time (see [`Study::exact_law`]).
    pub fn exact_iteration_law(&self, scheme: &Scheme) -> Option<ExactLaw> {
        if self.parallel.is_some() {
            // A pipeline's time is a max-plus expression of many draws.
            return None;
        }
        if self.decoder == Decoder::Rank || self.per_worker_loads(scheme).is_some() || scheme.rank_decoded() {
            // The laws are those of the recovery rules; the real codes'
            // rank condition is simulated.
            return None;
        }
        let arrival = self.comm.constant_shift(scheme.message())?;
        if arrival != 0.0 && matches!(scheme.strategy(), Some(Strategy::Async { .. })) {
            // A transfer time is not a shift of the time between updates.
            return None;
        }
        // A collective of one bucket ends its cost after the rule is met;
        // of several, a piecewise-linear function of that time, simulated.
        // Under a deadline the cost is that of the workers in by it, a
        // binomial count: not a shift, simulated (see
        // `Study::no_exact_law_under_collective`).
        let collective = match self.aggregation.collective() {
            Some(c) if c.buckets > 1 => return None,
            Some(_) => self.bucket_cost(scheme)?,
            None => 0.0,
        };
        let shift = arrival + self.comm.decode_time + collective;
        // A deadline is on the arrivals: T − τ·message on the computation.
        let iid = |d| {
            let law = iteration_law(d, &self.load_model, scheme)?;
            Some(match scheme.deadline() {
                Some(t) => law.with_deadline(t - arrival),
                None => law,
            })
        };
        let computation = match &self.workers {
            Workers::Iid(d) if d.groups().is_some() => {
                let infinite = self.mean_is_infinite(scheme);
                GroupLaw::new(d, &self.load_model, scheme, infinite).map(ComputationLaw::Groups)
            }
            // A slow worker's mini-batches are all slow: a mixture over the
            // number of slow workers (see `GroupLaw::slow_workers`).
            Workers::Iid(d)
                if matches!(
                    scheme.strategy(),
                    Some(Strategy::KBatchSync { .. } | Strategy::Async { .. })
                ) =>
            {
                GroupLaw::slow_workers(d, &self.load_model, scheme)
                    .map(ComputationLaw::Groups)
                    .or_else(|| iid(d).map(ComputationLaw::Iid))
            }
            Workers::Iid(d) => iid(d).map(ComputationLaw::Iid),
            w @ Workers::Classes { .. } => {
                let infinite = self.mean_is_infinite(scheme);
                ClassLaw::new(w, &self.load_model, scheme, infinite).map(ComputationLaw::Classes)
            }
            Workers::Trace(_) | Workers::Replay(_) => None,
        }?;
        Some(ExactLaw::new(computation, shift))
    }

    /// Whether the iteration time of `scheme` has an infinite mean, from the
    /// tail indices α of the workers' times and of the transfer time alone
    /// (so it holds for every load model): the k-th order statistic of n
    /// independent arrivals has tail index the sum of the n−k+1 smallest
    /// indices; frc's maximum of group minima, the smallest sum over a group
    /// (David & Nagaraja 2003, §4.5). A worker's arrival on a dedicated link
    /// is its time plus its own transfer, index min(α_worker, α_transfer).
    /// On a shared link every delivery waits for a transfer and for the
    /// transfers queued before it, and no longer than the computations plus
    /// all transfers, so the index is min(computation's, α_transfer).
    /// Only Pareto laws have polynomial tails.
    pub fn mean_is_infinite(&self, scheme: &Scheme) -> bool {
        // A user's code has no rule whose tail index is known, but it waits
        // at least for the first arrival: infinite from there on is certain;
        // otherwise its sample mean is reported as it is.
        // A deadline stops at the first arrival at the latest past T.
        // K-batch-sync waits for every worker only when each has a heavy
        // draw (one fast worker completes any K mini-batches in time); a
        // speculative task is late only when its copy is too, where every
        // late task gets a copy (Q·n ≥ n/2 and Q·n < n); multi-message's
        // partitions are each held by s+1 workers. The asynchronous
        // strategies' long-run time per update is infinite where a worker's
        // mean is (each update needs K more gradients, and a worker's
        // gradients come at rate 1/E[X]). A partial code waits for every
        // worker's own part.
        let n = self.n;
        let rule = match scheme.strategy() {
            Some(Strategy::KBatchSync { .. }) => Rule::KOfN(1),
            Some(Strategy::Speculative { after, .. }) => {
                let a = Strategy::results_before_copies(after, n);
                Rule::KOfN(if a < n && 2 * a >= n { n - 1 } else { n })
            }
            Some(Strategy::MultiMessage { s }) => Rule::KOfN(n - s),
            Some(Strategy::Async { .. }) => Rule::KOfN(n),
            Some(Strategy::Partial { s, parts }) if parts == s + 1 => scheme.rule(),
            Some(Strategy::Partial { .. }) => Rule::KOfN(n),
            None if scheme.rank_decoded() || scheme.deadline().is_some() => Rule::KOfN(1),
            None => scheme.rule(),
        };
        let transfer = match &self.comm.transfer {
            Transfer::Random(d) => d.tail_index(),
            Transfer::Constant(_) => f64::INFINITY,
        };
        let arrival = |i: usize| match self.comm.link {
            Link::Dedicated => self.workers.tail_index(i).min(transfer),
            Link::Shared => self.workers.tail_index(i),
        };
        // P(T > t) decays like t^(−index) with index the smallest sum of tail
        // indices over the sets of workers whose lateness delays T: the n−k+1
        // heaviest-tailed workers for k of n; one whole group for frc.
        let index = match rule {
            Rule::KOfN(k) => {
                let mut alphas: Vec<f64> = (0..n).map(arrival).collect();
                alphas.sort_by(f64::total_cmp);
                alphas[..n - k + 1].iter().sum::<f64>()
            }
            Rule::Groups { size } => (0..n / size)
                .map(|g| (g * size..(g + 1) * size).map(arrival).sum::<f64>())
                .fold(f64::INFINITY, f64::min),
        };
        let index = match self.comm.link {
            Link::Dedicated => index,
            Link::Shared => index.min(transfer),
        };
        index <= 1.0
    }

    /// Each worker's load where it differs between workers (a custom code
    /// whose rows have different supports), in units of the uncoded share:
    /// row i's nonzeros × n/P.
    pub(crate) fn per_worker_loads(&self, scheme: &Scheme) -> Option<Vec<f64>> {
        let m = self.custom.as_ref().filter(|_| scheme.kind() == SchemeKind::Custom)?;
        if m.is_regular() {
            return None;
        }
        let unit = scheme.n() as f64 / scheme.partitions() as f64;
        Some(m.supports().iter().map(|&c| c as f64 * unit).collect())
    }

    /// Whether the master decodes `scheme` with its real code: a custom
    /// code without s, or an exact scheme under the rank decoder.
    pub(crate) fn decodes_by_code(&self, scheme: &Scheme) -> bool {
        scheme.rank_decoded()
            || (self.decoder == Decoder::Rank && scheme.exact_gradient() && scheme.strategy().is_none())
    }

    /// The load model.
    pub fn load_model(&self) -> &LoadModel {
        &self.load_model
    }

    /// The same study with only the schemes `keep` accepts (`None` if
    /// that leaves none), on the same draws: a trial's worker times depend
    /// on the schemes only through the most units of work drawn under
    /// `additive`.
    pub(crate) fn restricted(&self, keep: impl Fn(&Scheme) -> bool) -> Option<Study> {
        let schemes: Vec<Scheme> = self.schemes.iter().copied().filter(|s| keep(s)).collect();
        (!schemes.is_empty()).then(|| Study {
            schemes,
            ..self.clone()
        })
    }

    /// The configurations, in output order.
    pub fn schemes(&self) -> &[Scheme] {
        &self.schemes
    }

    /// Number of trials.
    pub fn trials(&self) -> u64 {
        self.trials
    }

    /// The master seed.
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// The uncoded scheme on this cluster: the baseline of every speedup.
    pub fn baseline(&self) -> Scheme {
        Scheme::new(SchemeKind::Uncoded, self.scheme_n(), Params::default()).expect("uncoded is valid for every n >= 1")
    }

    /// The largest per-worker load of any configuration (at least 1, the baseline's).
    pub fn max_load(&self) -> f64 {
        self.schemes.iter().map(Scheme::load).fold(1.0, f64::max)
    }

    /// Worker draws per trial: n, or n per unit of the largest load under
    /// `additive` (saturating: a product past `u64::MAX` is over every limit).
    pub fn draws_per_trial(&self) -> u64 {
        if let Some(draws) = self.parallel_draws() {
            return draws;
        }
        let units = match self.load_model {
            LoadModel::Additive => self.max_load().ceil() as u64,
            _ => 1,
        };
        (self.n as u64).saturating_mul(units)
    }
}

mod aggregation;
mod checks;
mod error;
mod parallel;
mod record;

#[cfg(test)]
mod tests;
