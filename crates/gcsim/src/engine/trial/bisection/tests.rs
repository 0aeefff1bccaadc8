//! The top block drawn by its ends: its law, its bits against the event
//! walk, and where the pilot chooses it.

use super::*;
use crate::comm::{Comm, Link};
use crate::dist::Dist;
use crate::scheme::{Params, SchemeKind};

/// crc at n = 100 with each tolerance of `s` (every one in the top
/// block), and where `more`, comm-efficient crc (split messages: a queue
/// of their own) and a timeout (a deadline), on a link of transfer time
/// `tau`, under `model`.
fn study(law: &str, model: LoadModel, (tau, link): (f64, Link), s: &[usize], more: bool, trials: u64) -> Study {
    let scheme = |kind, params| Scheme::new(kind, 100, params).unwrap();
    let mut schemes: Vec<Scheme> = s
        .iter()
        .map(|&s| {
            let params = Params {
                s: Some(s),
                ..Default::default()
            };
            scheme(SchemeKind::Crc, params)
        })
        .collect();
    if more {
        let split = Params {
            s: Some(2),
            m: Some(3),
            ..Default::default()
        };
        let timeout = Params {
            timeout: Some(5.0),
            ..Default::default()
        };
        schemes.extend([
            scheme(SchemeKind::CommEfficient, split),
            scheme(SchemeKind::Timeout, timeout),
        ]);
    }
    let comm = Comm::new(Some(tau), None, link, 0.0).unwrap();
    Study::new(100, law.parse::<Dist>().unwrap(), model, schemes, trials, 1)
        .unwrap()
        .with_comm(comm)
}

/// The plan of `study` on `path`, its top block drawn lazily or not.
fn plan(study: &Study, path: RulePath, lazy: bool) -> TrialPlan {
    let mut plan = TrialPlan::with(study, path, Sampling::Bisection);
    Arc::make_mut(plan.bisection.as_mut().unwrap()).lazy_top = lazy;
    plan
}

fn lazy(plan: &TrialPlan) -> bool {
    plan.bisection.as_ref().unwrap().lazy_top
}

/// The top block drawn by its ends and its middle has the law of the
/// spacings' top block: each rank's mean within 5 standard errors of
/// the difference, over 20 000 trials of each (other seeds), for three
/// laws; for exponential workers also within 5 standard errors of its
/// exact mean, H_n − H_(n−r). A link so fast that the queue reaches
/// the middle in every trial, whose drawing the event walk forces.
#[test]
fn the_lazy_top_block_has_the_law_of_the_spacings() {
    let trials = 20_000;
    for law in ["exp:rate=1", "pareto:scale=1,shape=3", "weibull:scale=1,shape=4"] {
        let study = study(law, LoadModel::Fixed, (1e-3, Link::Shared), &[1, 20], false, trials);
        let moments = |lazy: bool, seed: u64| {
            let plan = plan(&study, RulePath::Events, lazy);
            let (mut scratch, mut out) = (plan.scratch(), vec![0.0; plan.slots()]);
            let mut sums = vec![(0.0, 0.0); 100];
            for t in 0..trials {
                plan.run(seed, t, &mut scratch, &mut out);
                for (s, &x) in sums.iter_mut().zip(&scratch.times) {
                    *s = (s.0 + x, s.1 + x * x);
                }
            }
            let t = trials as f64;
            sums.into_iter()
                .map(|(a, b)| (a / t, (b / t - (a / t) * (a / t)) / t))
                .collect::<Vec<_>>()
        };
        let (by_ends, by_spacings) = (moments(true, 1), moments(false, 2));
        let k0 = 100 - top_block(100) + 1;
        for r in k0..=100 {
            let ((m, v), (m2, v2)) = (by_ends[r - 1], by_spacings[r - 1]);
            let z = (m - m2) / (v + v2).sqrt();
            assert!(z.abs() < 5.0, "{law} rank {r}: {m} against {m2} ({z:.2} s.e.)");
            if law.starts_with("exp") {
                let exact: f64 = (100 - r + 1..=100).map(|i| 1.0 / i as f64).sum();
                let z = (m - exact) / v.sqrt();
                assert!(z.abs() < 5.0, "{law} rank {r}: {m} against {exact} ({z:.2} s.e.)");
            }
        }
    }
}

/// Where no queue reaches the middle, a trial draws only the ends: each
/// within 5 standard errors of its exact mean over 200 000 trials of
/// exponential workers, H_n − H_(n−k₀) for E_(k₀) and H_n for E_(n) (a
/// largest of one exponential too many or too few above E_(k₀), a mean
/// 1/51 off, is 6.8 standard errors away).
#[test]
fn the_ends_alone_have_their_exact_means() {
    let trials = 200_000;
    let study = study("exp:rate=1", LoadModel::Fixed, (1.0, Link::Shared), &[0], false, trials);
    let plan = plan(&study, RulePath::Fast, true);
    let (mut scratch, mut out) = (plan.scratch(), vec![0.0; plan.slots()]);
    let k0 = 100 - top_block(100) + 1;
    let mut sums = [(0.0, 0.0); 2];
    for t in 0..trials {
        plan.run(3, t, &mut scratch, &mut out);
        assert_ne!(scratch.lower.middle, scratch.lower.now, "trial {t} drew the middle");
        for (s, r) in sums.iter_mut().zip([k0, 100]) {
            let x = scratch.lower.x[r];
            *s = (s.0 + x, s.1 + x * x);
        }
    }
    let harmonic = |from: usize| (from..=100).map(|i| 1.0 / i as f64).sum::<f64>();
    for ((sum, squares), exact) in sums.into_iter().zip([harmonic(100 - k0 + 1), harmonic(1)]) {
        let (t, mean) = (trials as f64, sum / trials as f64);
        let z = (mean - exact) / ((squares / t - mean * mean) / t).sqrt();
        assert!(z.abs() < 5.0, "{mean} against {exact} ({z:.2} s.e.)");
    }
}

/// With the top block drawn lazily the fast path, which skips the middle
/// where the baseline's queue is already later than the slowest finish,
/// gives the bits of the event walk over every rank: transfer times from
/// one where every queue reaches the middle to one where none does,
/// with split messages (a queue of their own) and deadlines.
#[test]
fn the_lazy_top_block_gives_the_event_walks_bits() {
    for law in ["exp:rate=1", "pareto:scale=1,shape=2.5"] {
        for tau in [1e-3, 0.02, 0.05, 0.1, 0.3, 2.0] {
            let study = study(law, LoadModel::Fixed, (tau, Link::Shared), &[0, 3, 49], true, 2000);
            let (fast, walk) = (plan(&study, RulePath::Fast, true), plan(&study, RulePath::Events, true));
            let (mut a, mut b) = (fast.scratch(), walk.scratch());
            let (mut x, mut y) = (vec![0.0; fast.slots()], vec![0.0; walk.slots()]);
            let mut skipped = 0;
            for t in 0..2000 {
                fast.run(9, t, &mut a, &mut x);
                walk.run(9, t, &mut b, &mut y);
                assert_eq!(x, y, "{law} tau={tau} trial {t}");
                skipped += usize::from(a.lower.middle != a.lower.now);
            }
            // The cases span both branches, and trials of each in one run.
            match tau {
                1e-3 => assert_eq!(skipped, 0, "{law}"),
                0.3 => assert!(skipped > 0 && skipped < 2000, "{law}: {skipped}"),
                2.0 if law.starts_with("exp") => assert_eq!(skipped, 2000),
                _ => {}
            }
        }
    }
}

/// The pilot draws the top block lazily where the shared link is the
/// bottleneck under `fixed` loads, on the event walk as on the fast
/// path (so the two give the same bits), and not with a fast link, a
/// dedicated one or loads that scale the finishes.
#[test]
fn the_pilot_draws_lazily_where_the_link_is_the_bottleneck() {
    let decide = |law: &str, model: LoadModel, tau: f64, link: Link| {
        let study = study(law, model, (tau, link), &[0, 10, 50], false, 100);
        let fast = TrialPlan::with(&study, RulePath::Fast, Sampling::Bisection);
        let walk = TrialPlan::with(&study, RulePath::Events, Sampling::Bisection);
        assert_eq!(lazy(&fast), lazy(&walk), "{law} {model} tau={tau} {link}");
        lazy(&fast)
    };
    assert!(decide("exp:rate=1", LoadModel::Fixed, 0.3, Link::Shared));
    assert!(decide("pareto:scale=1,shape=3", LoadModel::Fixed, 0.3, Link::Shared));
    assert!(!decide("exp:rate=1", LoadModel::Fixed, 0.01, Link::Shared));
    // Pareto's tail of shape 1.1 reaches past a_(k₀−1) ≈ 15 in a third of the trials.
    assert!(!decide("pareto:scale=1,shape=1.1", LoadModel::Fixed, 0.3, Link::Shared));
    assert!(!decide("exp:rate=1", LoadModel::Fixed, 0.3, Link::Dedicated));
    assert!(!decide("exp:rate=1", LoadModel::Scaled, 0.3, Link::Shared));
}
