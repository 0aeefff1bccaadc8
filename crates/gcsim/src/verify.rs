//! `gcsim verify`: the Monte Carlo engine against every exact answer.
//!
//! For each configuration of a built-in grid (every distribution × load
//! model × scheme whose iteration time has an exact law, plus crc on
//! n = 100 exponential workers at s = 0, 20, 50) the engine's estimates are compared with the
//! theory, the study's exact law ([`Study::exact_law`]):
//!
//! - the mean by z = (x̄ − E(T)) / SE(x̄);
//! - p50 and p99 by z = (F(x̂_q) − q) / √(q(1−q)/N): the exact CDF at the
//!   estimated quantile is Beta(⌈qN⌉, N−⌈qN⌉+1)-distributed, with that mean
//!   and standard deviation up to O(1/N). Where the law has an atom (the
//!   deadline of `timeout`), q's distance from [F(x̂−), F(x̂)] takes the
//!   place of F(x̂) − q: the sample quantile sits on the atom exactly when q
//!   is inside the jump.
//!
//! With M z-checks, each fails when |z| exceeds Φ⁻¹(1 − α/(2M)) with
//! α = 10⁻³ (Bonferroni), so a correct engine fails the whole grid with
//! probability below 10⁻³, while an engine that waits for one worker too many
//! is off by tens of standard errors.

use statrs::distribution::{ContinuousCDF, Normal};

use crate::analytic::iteration_law;
use crate::collective::Aggregation;
use crate::dist::Dist;
use crate::engine::Outcome;
use crate::load::LoadModel;
use crate::scheme::{Params, Scheme, SchemeKind};
use crate::study::Study;

/// The family-wise false-alarm probability of the whole grid.
pub(crate) const FAMILY_ALPHA: f64 = 1e-3;

/// One study of the grid: a cluster, a law, a load model and its schemes.
#[derive(Debug, Clone)]
pub struct Case {
    /// Workers.
    pub n: usize,
    /// The worker law.
    pub dist: Dist,
    /// The load model.
    pub model: LoadModel,
    /// The schemes, simulated together on common draws.
    pub schemes: Vec<Scheme>,
    /// How the gradients are summed.
    pub aggregation: Aggregation,
}

/// A number that the theory or the literature prints, to check as printed.
#[derive(Debug, Clone, PartialEq)]
pub struct Printed {
    /// What it is.
    pub what: String,
    /// The value as printed.
    pub printed: f64,
    /// Half a unit of the last printed digit.
    pub tolerance: f64,
    /// The exact value gcsim computes.
    pub exact: f64,
}

/// The outcome of one check.
#[derive(Debug, Clone, PartialEq)]
pub struct Check {
    /// The configuration: law, load model, scheme and parameters; `a = b`
    /// where configurations share the law and, on common draws, the estimate.
    pub config: String,
    /// `mean`, `p50` or `p99`.
    pub stat: &'static str,
    /// The exact value.
    pub exact: f64,
    /// The Monte Carlo estimate.
    pub estimate: f64,
    /// The z-score, or `None` for an infinite mean (checked by the reported
    /// mean being infinite too).
    pub z: Option<f64>,
    /// Whether the check passed.
    pub pass: bool,
}

/// Everything `verify` found.
#[derive(Debug, Clone, PartialEq)]
pub struct Verdicts {
    /// Monte Carlo against exact values.
    pub checks: Vec<Check>,
    /// Exact values against their worked, rounded values for n = 100
    /// exponential workers (E(T) = H_n − H_{n−k}, as the guide's tutorial
    /// prints them).
    pub printed: Vec<(Printed, bool)>,
    /// The |z| beyond which a check fails.
    pub threshold: f64,
    /// Trials per configuration.
    pub trials: u64,
}

impl Verdicts {
    /// Checks that passed.
    pub fn passed(&self) -> usize {
        self.checks.iter().filter(|c| c.pass).count() + self.printed.iter().filter(|p| p.1).count()
    }

    /// Checks that failed.
    pub fn failed(&self) -> usize {
        self.checks.len() + self.printed.len() - self.passed()
    }
}

fn scheme(kind: SchemeKind, n: usize, s: Option<usize>, m: Option<usize>, k: Option<usize>) -> Scheme {
    Scheme::new(
        kind,
        n,
        Params {
            s,
            m,
            k,
            ..Params::default()
        },
    )
    .expect("the built-in grid holds valid schemes")
}

fn timeout(n: usize, t: f64) -> Scheme {
    Scheme::new(
        SchemeKind::Timeout,
        n,
        Params {
            timeout: Some(t),
            ..Params::default()
        },
    )
    .expect("the built-in grid holds valid schemes")
}

/// The built-in grid: five laws (exponential, shifted exponential, Pareto
/// with finite variance, Pareto with an infinite mean, a straggler mixture)
/// × four load models × all six code schemes on n = 20, the worked example on
/// n = 100, the same laws and load models under two `timeout` deadlines
/// on their own draws, K-batch-sync on exponential workers, the
/// asynchronous strategies on n = 6, group slowdowns on n = 12, and the
/// strategies on a straggler mixture. Configurations without an exact law
/// are left out when run.
pub fn grid() -> Vec<Case> {
    let n = 20;
    let schemes = vec![
        scheme(SchemeKind::Uncoded, n, None, None, None),
        scheme(SchemeKind::Ignore, n, Some(3), None, None),
        scheme(SchemeKind::Frc, n, Some(3), None, None),
        scheme(SchemeKind::Crc, n, Some(3), None, None),
        scheme(SchemeKind::Crc, n, Some(n - 1), None, None),
        scheme(SchemeKind::CommEfficient, n, Some(3), Some(2), None),
        scheme(SchemeKind::Mds, n, None, None, Some(10)),
        scheme(SchemeKind::Mds, n, None, None, Some(1)),
    ];
    let dists = [
        Dist::exp(1.0),
        Dist::shifted_exp(1.0, 2.0),
        Dist::pareto(1.0, 4.5),
        Dist::pareto(1.0, 0.8),
        Dist::exp(1.0).and_then(|d| d.with_stragglers(0.05, 8.0)),
    ];
    let models = [
        LoadModel::Fixed,
        LoadModel::Scaled,
        LoadModel::Additive,
        LoadModel::Affine { unit_time: 0.5 },
    ];
    let mut cases = Vec::new();
    for dist in &dists {
        for model in models {
            cases.push(Case {
                aggregation: Aggregation::Master,
                n,
                dist: dist.clone().expect("valid built-in law"),
                model,
                schemes: schemes.clone(),
            });
        }
    }
    let big = 100;
    cases.push(Case {
        aggregation: Aggregation::Master,
        n: big,
        dist: Dist::exp(1.0).expect("valid"),
        model: LoadModel::Fixed,
        schemes: [0, 20, 50]
            .map(|s| scheme(SchemeKind::Crc, big, Some(s), None, None))
            .to_vec(),
    });
    cases.extend(deadline_cases(n, &dists, models));
    cases.extend(strategy_cases(n));
    cases.extend(group_cases());
    cases.extend(slow_worker_cases());
    cases.extend(collective::cases());
    cases
}

/// Timeout at two deadlines, under every law and load model of the grid.
fn deadline_cases(n: usize, dists: &[Result<Dist, crate::dist::DistError>], models: [LoadModel; 4]) -> Vec<Case> {
    let mut cases = Vec::new();
    // The deadline of timeout, on its own draws (a deadline takes the draw
    // path): where each branch is common. At the worker's 95% quantile all
    // 20 finish by T in 36% of trials; at its 5% quantile none does in 36%.
    for dist in dists {
        let dist = dist.clone().expect("valid built-in law");
        for model in models {
            // (Under `additive` a load of 1 is one draw.)
            let at = |q: f64| match model {
                LoadModel::Additive => dist.quantile(q),
                m => m.apply(1.0, dist.quantile(q)),
            };
            cases.push(Case {
                aggregation: Aggregation::Master,
                n,
                dist,
                model,
                schemes: [0.95, 0.05].map(|q| timeout(n, at(q))).to_vec(),
            });
        }
    }
    cases
}

/// K-batch-sync and the asynchronous strategies on exponential workers.
fn strategy_cases(n: usize) -> Vec<Case> {
    let mut cases = Vec::new();
    // K-batch-sync on exponential workers: the K-th of the n workers'
    // Poisson streams of mini-batches, Gamma(K, nμ).
    for model in [LoadModel::Fixed, LoadModel::Scaled, LoadModel::Additive] {
        cases.push(Case {
            aggregation: Aggregation::Master,
            n,
            dist: Dist::exp(2.0).expect("valid"),
            model,
            schemes: [1, 7, 20]
                .map(|k| scheme(SchemeKind::KBatchSync, n, None, None, Some(k)))
                .to_vec(),
        });
    }
    // The asynchronous strategies on exponential workers: K-async's time
    // per update is the K-th of n Exp(μ) (every worker computing afresh by
    // memorylessness); K-batch-async's is Gamma(K, nμ), as K-batch-sync's.
    // Each trial simulates about 8n gradients, so on 6 workers; a gradient
    // is one draw under `fixed` and one unit under `additive`.
    for model in [LoadModel::Fixed, LoadModel::Additive] {
        let kinds = [SchemeKind::KAsync, SchemeKind::KBatchAsync];
        cases.push(Case {
            aggregation: Aggregation::Master,
            n: 6,
            dist: Dist::exp(2.0).expect("valid"),
            model,
            schemes: kinds
                .into_iter()
                .flat_map(|kind| [2, 5].map(|k| scheme(kind, 6, None, None, Some(k))))
                .collect(),
        });
    }
    cases
}

/// Correlated group slowdowns.
fn group_cases() -> Vec<Case> {
    let mut cases = Vec::new();
    // Correlated group slowdowns: 12 workers in groups of 5 (the last of
    // 2) or of 4 (frc's pairs within them), each group 3 times slower with
    // probability 0.2; the exact law mixes over the workers in slow groups.
    // Last, so that the cases before keep their seeds.
    let grouped = |base: Result<Dist, _>, size| {
        base.and_then(|d| d.with_groups(size, 0.2, 3.0))
            .expect("valid built-in law")
    };
    let g = 12;
    cases.push(Case {
        aggregation: Aggregation::Master,
        n: g,
        dist: grouped(Dist::exp(1.0), 5),
        model: LoadModel::Fixed,
        schemes: vec![
            scheme(SchemeKind::Uncoded, g, None, None, None),
            scheme(SchemeKind::Ignore, g, Some(2), None, None),
            scheme(SchemeKind::Crc, g, Some(3), None, None),
            scheme(SchemeKind::Mds, g, None, None, Some(6)),
        ],
    });
    cases.push(Case {
        aggregation: Aggregation::Master,
        n: g,
        dist: grouped(Dist::exp(1.0).and_then(|d| d.with_stragglers(0.1, 5.0)), 4),
        model: LoadModel::Scaled,
        schemes: vec![
            scheme(SchemeKind::Uncoded, g, None, None, None),
            scheme(SchemeKind::Frc, g, Some(1), None, None),
            scheme(SchemeKind::Crc, g, Some(3), None, None),
            scheme(SchemeKind::CommEfficient, g, Some(3), Some(2), None),
        ],
    });
    cases
}

/// The strategies on straggler mixtures, whose slow workers are slow for
/// every mini-batch and gradient of the iteration: the exact law mixes
/// over the number of slow workers (see
/// [`crate::analytic::groups::GroupLaw::slow_workers`]). Last, so that the
/// cases before keep their seeds.
fn slow_worker_cases() -> Vec<Case> {
    let mixture = || {
        Dist::exp(2.0)
            .and_then(|d| d.with_stragglers(0.2, 4.0))
            .expect("valid built-in law")
    };
    let n = 20;
    let kinds = [SchemeKind::KAsync, SchemeKind::KBatchAsync];
    vec![
        Case {
            aggregation: Aggregation::Master,
            n,
            dist: mixture(),
            model: LoadModel::Fixed,
            schemes: [1, 7, 20]
                .map(|k| scheme(SchemeKind::KBatchSync, n, None, None, Some(k)))
                .to_vec(),
        },
        Case {
            aggregation: Aggregation::Master,
            n: 6,
            dist: mixture(),
            model: LoadModel::Fixed,
            schemes: kinds
                .into_iter()
                .flat_map(|kind| [2, 5].map(|k| scheme(kind, 6, None, None, Some(k))))
                .collect(),
        },
    ]
}

/// The worked numbers of n = 100 exponential workers, as computed by the analytic layer.
pub(crate) fn printed_numbers() -> Vec<Printed> {
    let dist = Dist::exp(1.0).expect("valid");
    let mean = |s: usize| {
        let scheme = scheme(SchemeKind::Crc, 100, Some(s), None, None);
        iteration_law(&dist, &LoadModel::Fixed, &scheme)
            .expect("exponential k-of-n is exact")
            .mean()
    };
    let (u, s20, s50) = (mean(0), mean(20), mean(50));
    let p = |what: &str, printed: f64, tolerance: f64, exact: f64| Printed {
        what: what.to_string(),
        printed,
        tolerance,
        exact,
    };
    vec![
        p("n=100 exp uncoded mean", 5.187, 5e-4, u),
        p("n=100 exp crc s=20 mean", 1.590, 5e-4, s20),
        p("n=100 exp crc s=20 speedup", 3.26, 5e-3, u / s20),
        p("n=100 exp crc s=50 mean", 0.688, 5e-4, s50),
        p("n=100 exp crc s=50 speedup", 7.54, 5e-3, u / s50),
    ]
}

/// How far `q` is from the CDF's values at an estimated quantile: from
/// `below` = F(x̂−) up to `at` = F(x̂), signed (0 inside a jump).
fn quantile_gap(below: f64, at: f64, q: f64) -> f64 {
    if q < below {
        below - q
    } else if q > at {
        at - q
    } else {
        0.0
    }
}

/// Whether every case admits `trials` trials (the study's limits on work),
/// checked before any case runs.
pub fn admits(cases: &[Case], trials: u64) -> Result<(), crate::study::StudyError> {
    for case in cases {
        Study::new(case.n, case.dist, case.model, case.schemes.clone(), trials, 0)?
            .with_aggregation(case.aggregation)?;
    }
    Ok(())
}

/// One check before the family's threshold is known.
struct Pending {
    config: String,
    stat: &'static str,
    exact: f64,
    estimate: f64,
    z: Option<f64>,
}

/// The mean, p50 and p99 checks of one configuration against its exact
/// law, with their z-scores: the mean's by its standard error, a
/// percentile's by the binomial spread of the empirical CDF at it.
fn pending_checks(
    config: &str,
    law: &crate::analytic::ExactLaw,
    summary: &crate::engine::Summary,
    reported: f64,
    trials: u64,
) -> Vec<Pending> {
    let mean = law.mean();
    let mut checks = vec![Pending {
        config: config.to_string(),
        stat: "mean",
        exact: mean,
        estimate: reported,
        z: match summary.mean.std_err {
            Some(se) if mean.is_finite() && reported.is_finite() && se > 0.0 => Some((reported - mean) / se),
            _ => None,
        },
    }];
    for (stat, q, qi) in [("p50", 0.5, 0), ("p99", 0.99, 2)] {
        let x = summary.quantiles[qi];
        checks.push(Pending {
            config: config.to_string(),
            stat,
            exact: law.quantile(q),
            estimate: x,
            z: Some(quantile_gap(law.cdf_below(x), law.cdf(x), q) / (q * (1.0 - q) / trials as f64).sqrt()),
        });
    }
    checks
}

/// Runs every case with `trials` trials from `seed` on `engine`, and judges.
pub fn run(cases: &[Case], trials: u64, seed: u64, engine: &dyn Fn(&Study) -> Outcome) -> Verdicts {
    let mut pending: Vec<Pending> = Vec::new();
    for (i, case) in cases.iter().enumerate() {
        let study = |schemes| {
            Study::new(
                case.n,
                case.dist,
                case.model,
                schemes,
                trials,
                seed.wrapping_add(i as u64),
            )
            .and_then(|s| s.with_aggregation(case.aggregation))
            .expect("the built-in grid is a valid study")
        };
        // The laws as every report takes them: the study's.
        let all = study(case.schemes.clone());
        let exact: Vec<(Scheme, _)> = case
            .schemes
            .iter()
            .filter_map(|s| all.exact_law(s).map(|law| (*s, law)))
            .collect();
        if exact.is_empty() {
            continue;
        }
        let study = study(exact.iter().map(|(s, _)| *s).collect());
        let outcome = engine(&study);
        // Under some load models two schemes have the same law (ignore,
        // crc and comm-efficient at equal k under `fixed`) and, on common
        // draws, the same estimates: such a check is one check, listed once
        // with every configuration it covers.
        let first_of_case = pending.len();
        for ((scheme, law), summary) in exact.iter().zip(&outcome.configs) {
            let config = match case.aggregation.collective() {
                Some(c) => format!(
                    "{} {} n={} {scheme} {}",
                    case.dist,
                    case.model,
                    case.n,
                    c.algorithm.name()
                ),
                None => format!("{} {} n={} {scheme}", case.dist, case.model, case.n),
            };
            // The mean as gcsim reports it: infinite where the tail index
            // says so (the sample mean of such a law never converges).
            let reported = if study.mean_is_infinite(scheme) {
                f64::INFINITY
            } else {
                summary.mean.mean
            };
            let checks = pending_checks(&config, law, summary, reported, trials);
            for check in checks {
                let same = pending[first_of_case..].iter_mut().find(|p: &&mut Pending| {
                    p.stat == check.stat
                        && p.exact.to_bits() == check.exact.to_bits()
                        && p.estimate.to_bits() == check.estimate.to_bits()
                });
                match same {
                    Some(p) => p.config.push_str(&format!(" = {scheme}")),
                    None => pending.push(check),
                }
            }
        }
    }
    let tests = pending.iter().filter(|p| p.z.is_some()).count().max(1);
    let threshold = Normal::standard().inverse_cdf(1.0 - FAMILY_ALPHA / (2.0 * tests as f64));
    let checks = pending
        .into_iter()
        .map(|p| Check {
            pass: match p.z {
                Some(z) => z.abs() <= threshold,
                // An infinite mean is checked by what gcsim reports: infinite
                // too, decided from the tail index, never a sample mean.
                None => p.exact.is_infinite() && p.estimate.is_infinite(),
            },
            config: p.config,
            stat: p.stat,
            exact: p.exact,
            estimate: p.estimate,
            z: p.z,
        })
        .collect();
    let printed = printed_numbers()
        .into_iter()
        .map(|p| {
            let ok = (p.exact - p.printed).abs() <= p.tolerance;
            (p, ok)
        })
        .collect();
    Verdicts {
        checks,
        printed,
        threshold,
        trials,
    }
}

mod collective;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{self, Silent};

    /// Every check is distinct (configurations with one law and one estimate
    /// are listed together), and the infinite means are checked by what
    /// gcsim reports, not passed by default.
    #[test]
    fn checks_are_distinct_and_infinite_means_are_checked() {
        let v = run(&grid(), 2000, 1, &|study| engine::simulate(study, &Silent));
        for (i, a) in v.checks.iter().enumerate() {
            for b in &v.checks[i + 1..] {
                let same_case = a.config.split(" n=").next() == b.config.split(" n=").next();
                assert!(
                    !(same_case
                        && a.stat == b.stat
                        && a.exact.to_bits() == b.exact.to_bits()
                        && a.estimate.to_bits() == b.estimate.to_bits()),
                    "{} repeats {}",
                    b.config,
                    a.config
                );
            }
        }
        let merged = v
            .checks
            .iter()
            .find(|c| c.config.contains("fixed n=20 ignore s=3 = crc s=3"));
        assert!(merged.is_some(), "ignore and crc at equal k share a law under fixed");
        let infinite: Vec<_> = v.checks.iter().filter(|c| c.exact.is_infinite()).collect();
        assert!(!infinite.is_empty());
        assert!(
            infinite
                .iter()
                .all(|c| c.z.is_none() && c.estimate.is_infinite() && c.pass)
        );
    }
}
