//! The group law against its special cases and against a sum over every
//! pattern of slow groups.

use super::*;
use crate::scheme::{Params, SchemeKind};

fn scheme(kind: SchemeKind, n: usize, s: usize) -> Scheme {
    Scheme::with_tolerance(kind, n, s).unwrap()
}

fn grouped(base: Dist, size: usize, p: f64, slowdown: f64) -> Dist {
    base.with_groups(size, p, slowdown).unwrap()
}

fn close(a: f64, b: f64, rel: f64) -> bool {
    (a - b).abs() <= rel * a.abs().max(b.abs())
}

#[test]
fn weights_follow_the_whole_and_partial_groups() {
    let (p, q) = (0.2, 0.8);
    let g = |size| Groups { size, p, slowdown: 3.0 };
    // n = 12, G = 4: m = 4J, J ~ Bin(3, P).
    let w = weights(12, g(4));
    let expected = [
        (0, q * q * q),
        (4, 3.0 * p * q * q),
        (8, 3.0 * p * p * q),
        (12, p * p * p),
    ];
    assert_eq!(w.len(), expected.len());
    for ((m, x), (em, ex)) in w.iter().zip(expected) {
        assert!(*m == em && close(*x, ex, 1e-15), "{m}: {x} vs {ex}");
    }
    // n = 12, G = 5: two whole groups and a partial one of 2.
    let w = weights(12, g(5));
    let expected = [
        (0, q * q * q),
        (2, q * q * p),
        (5, 2.0 * p * q * q),
        (7, 2.0 * p * q * p),
        (10, p * p * q),
        (12, p * p * p),
    ];
    assert_eq!(w.len(), expected.len());
    for ((m, x), (em, ex)) in w.iter().zip(expected) {
        assert!(*m == em && close(*x, ex, 1e-15), "{m}: {x} vs {ex}");
    }
    // A group larger than the cluster: all slow or none.
    assert_eq!(weights(12, g(20)), vec![(0, q), (12, p)]);
    // Negligible weights are dropped, the rest sum to 1.
    let w = weights(1000, g(1));
    assert!(w.len() < 400 && w[0].0 > 0 && w.last().unwrap().0 < 1000);
    assert!((w.iter().map(|t| t.1).sum::<f64>() - 1.0).abs() < 1e-15);
}

/// Groups of one worker are an own straggler mixture of the same P and F.
#[test]
fn groups_of_one_are_a_straggler_mixture() {
    let (p, f) = (0.2, 3.0);
    let base = Dist::exp(1.5).unwrap();
    let with_groups = grouped(base, 1, p, f);
    let mixture = base.with_stragglers(p, f).unwrap();
    for model in [LoadModel::Fixed, LoadModel::Scaled] {
        for s in [scheme(SchemeKind::Crc, 10, 3), scheme(SchemeKind::Ignore, 10, 2)] {
            let law = GroupLaw::new(&with_groups, &model, &s, false).unwrap();
            let iid = iteration_law(&mixture, &model, &s).unwrap();
            for q in [0.01, 0.3, 0.5, 0.9, 0.999] {
                let t = iid.quantile(q);
                assert!(close(law.cdf(t), iid.cdf(t), 1e-12), "{s} {model}: F({t})");
                assert!(close(law.sf(t), iid.sf(t), 1e-12), "{s} {model}: S({t})");
            }
            assert!(close(law.mean(), iid.mean(), 1e-12), "{s} {model}: mean");
            assert!(close(law.quantile(0.99), iid.quantile(0.99), 1e-11), "{s} {model}: p99");
        }
    }
}

#[test]
fn groups_never_slow_are_no_groups() {
    let base = Dist::pareto(1.0, 2.5).unwrap().with_stragglers(0.1, 4.0).unwrap();
    for s in [scheme(SchemeKind::Crc, 12, 3), scheme(SchemeKind::Uncoded, 12, 0)] {
        let law = GroupLaw::new(&grouped(base, 5, 0.0, 3.0), &LoadModel::Scaled, &s, false).unwrap();
        let iid = iteration_law(&base, &LoadModel::Scaled, &s).unwrap();
        assert_eq!(law.terms.len(), 1);
        for t in [1.0, 3.0, 10.0] {
            assert_eq!(law.cdf(t), iid.cdf(t));
        }
        assert_eq!(law.mean(), iid.mean());
    }
}

/// One group of all n: the law with every time ×F (rate μ/F) with
/// probability P, the law without otherwise.
#[test]
fn one_group_of_all_is_a_mixture_of_two_iid_laws() {
    let (p, f, mu) = (0.3, 2.5, 1.5);
    let with_groups = grouped(Dist::exp(mu).unwrap(), 12, p, f);
    for s in [
        scheme(SchemeKind::Crc, 12, 3),
        scheme(SchemeKind::Uncoded, 12, 0),
        scheme(SchemeKind::Frc, 12, 2),
    ] {
        let model = LoadModel::Affine { unit_time: 0.5 };
        let law = GroupLaw::new(&with_groups, &model, &s, false).unwrap();
        let fast = iteration_law(&Dist::exp(mu).unwrap(), &model, &s).unwrap();
        let slow = iteration_law(&Dist::exp(mu / f).unwrap(), &model, &s).unwrap();
        for t in [1.0, 2.0, 4.0, 9.0] {
            let expected = (1.0 - p) * fast.cdf(t) + p * slow.cdf(t);
            assert!(close(law.cdf(t), expected, 1e-14), "{s}: F({t})");
        }
        let expected = (1.0 - p) * fast.mean() + p * slow.mean();
        assert!(close(law.mean(), expected, 1e-14), "{s}: mean");
        let x = law.quantile(0.99);
        assert!((law.cdf(x) - 0.99).abs() < 1e-13, "{s}: p99");
    }
}

/// P(at least k of independent workers with finish probabilities `f` are
/// done): the Poisson-binomial tail.
fn at_least(f: &[f64], k: usize) -> f64 {
    let mut done = vec![1.0];
    for &fi in f {
        let mut next = vec![0.0; done.len() + 1];
        for (j, &x) in done.iter().enumerate() {
            next[j] += x * (1.0 - fi);
            next[j + 1] += x * fi;
        }
        done = next;
    }
    done[k..].iter().sum()
}

/// P(T ≤ t) summed over all 2^groups patterns of slow groups, each
/// worker's CDF in its group's state: no counting of slow workers.
fn by_patterns(dist: &Dist, model: &LoadModel, scheme: &Scheme, t: f64) -> f64 {
    let g = dist.groups().unwrap();
    let n = scheme.n();
    let count = n.div_ceil(g.size);
    let own = dist.independent();
    let x = match *model {
        LoadModel::Fixed => t,
        LoadModel::Scaled => t / scheme.load(),
        LoadModel::Affine { unit_time } => t - unit_time * scheme.load(),
        LoadModel::Additive => unreachable!(),
    };
    (0..1u32 << count)
        .map(|pattern| {
            let slow = |w: usize| pattern >> (w / g.size) & 1 == 1;
            let slow_groups = pattern.count_ones() as i32;
            let weight = g.p.powi(slow_groups) * (1.0 - g.p).powi(count as i32 - slow_groups);
            let f: Vec<f64> = (0..n)
                .map(|w| own.cdf(if slow(w) { x / g.slowdown } else { x }))
                .collect();
            let given = match scheme.rule() {
                Rule::KOfN(k) => at_least(&f, k),
                Rule::Groups { size } => f
                    .chunks(size)
                    .map(|c| 1.0 - c.iter().map(|fi| 1.0 - fi).product::<f64>())
                    .product(),
            };
            weight * given
        })
        .sum()
}

#[test]
fn mixture_over_m_is_the_sum_over_patterns() {
    let base = Dist::exp(1.0).unwrap();
    let laws = [
        grouped(base, 4, 0.2, 3.0),
        grouped(base, 5, 0.2, 3.0),
        grouped(base.with_stragglers(0.1, 5.0).unwrap(), 5, 0.3, 2.0),
        grouped(Dist::shifted_exp(0.5, 2.0).unwrap(), 4, 0.2, 3.0),
    ];
    let schemes = [
        scheme(SchemeKind::Uncoded, 12, 0),
        scheme(SchemeKind::Crc, 12, 3),
        scheme(SchemeKind::Ignore, 12, 2),
        scheme(SchemeKind::Frc, 12, 1),
        scheme(SchemeKind::Frc, 12, 3),
    ];
    let models = [
        LoadModel::Fixed,
        LoadModel::Scaled,
        LoadModel::Affine { unit_time: 0.5 },
    ];
    let mut compared = 0;
    for dist in &laws {
        for model in &models {
            for s in &schemes {
                let Some(law) = GroupLaw::new(dist, model, s, false) else {
                    // frc of groups of 2 and 4 within slowdown groups of 4 only.
                    assert!(
                        matches!(s.rule(), Rule::Groups { size } if dist.groups().unwrap().size % size != 0),
                        "{dist} {model} {s}"
                    );
                    continue;
                };
                for q in [0.05, 0.5, 0.95, 0.999] {
                    let t = law.quantile(q);
                    let direct = by_patterns(dist, model, s, t);
                    assert!((direct - q).abs() < 1e-12, "{dist} {model} {s}: F(Q({q})) = {direct}");
                }
                compared += 1;
            }
        }
    }
    assert_eq!(compared, 4 * 3 * 3 + 2 * 3 * 2);
}

#[test]
fn none_where_the_law_is_not_a_mixture_of_class_laws() {
    let dist = grouped(Dist::exp(1.0).unwrap(), 4, 0.2, 3.0);
    let crc = scheme(SchemeKind::Crc, 12, 3);
    assert!(GroupLaw::new(&dist, &LoadModel::Additive, &crc, false).is_none());
    assert!(GroupLaw::new(&Dist::exp(1.0).unwrap(), &LoadModel::Fixed, &crc, false).is_none());
    // frc's groups of 3 straddle slowdown groups of 4, not one of 20.
    let frc = scheme(SchemeKind::Frc, 12, 2);
    assert!(GroupLaw::new(&dist, &LoadModel::Fixed, &frc, false).is_none());
    let all = grouped(Dist::exp(1.0).unwrap(), 20, 0.2, 3.0);
    assert!(GroupLaw::new(&all, &LoadModel::Fixed, &frc, false).is_some());
    let timeout = Scheme::new(
        SchemeKind::Timeout,
        12,
        Params {
            timeout: Some(2.0),
            ..Params::default()
        },
    )
    .unwrap();
    assert!(GroupLaw::new(&dist, &LoadModel::Fixed, &timeout, false).is_none());
    let k_async = Scheme::new(
        SchemeKind::KAsync,
        12,
        Params {
            k: Some(4),
            ..Params::default()
        },
    )
    .unwrap();
    assert!(GroupLaw::new(&dist, &LoadModel::Fixed, &k_async, false).is_none());
    // 144 terms on 500 workers, over the work bound; one term (P = 0) is not.
    let big = scheme(SchemeKind::Crc, 500, 3);
    let ones = grouped(Dist::exp(1.0).unwrap(), 1, 0.2, 3.0);
    assert!(GroupLaw::new(&ones, &LoadModel::Fixed, &big, false).is_none());
    let never = grouped(Dist::exp(1.0).unwrap(), 1, 0.0, 3.0);
    assert!(GroupLaw::new(&never, &LoadModel::Fixed, &big, false).is_some());
}

#[test]
fn an_infinite_mean_is_infinite() {
    let dist = grouped(Dist::pareto(1.0, 0.8).unwrap(), 4, 0.2, 3.0);
    let law = GroupLaw::new(&dist, &LoadModel::Fixed, &scheme(SchemeKind::Uncoded, 12, 0), true).unwrap();
    assert_eq!(law.mean(), f64::INFINITY);
    assert!(law.quantile(0.99).is_finite());
}
