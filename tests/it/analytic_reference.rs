//! The exact iteration-time law against independent references: the
//! README's worked example (n = 100 exponential workers), high-precision (mpmath) evaluations of the closed forms,
//! direct binomial summation and exact expansions computed another way.
//! Brute-force Monte Carlo is in `analytic_monte_carlo.rs`.
#![allow(clippy::excessive_precision)] // reference values keep the digits they were computed to

use crate::common::{exp1, law, scheme};
use gcsim::analytic::iteration_law;
use gcsim::dist::{Base, Dist};
use gcsim::load::LoadModel;
use gcsim::scheme::{Params, Scheme, SchemeKind};

/// The worked example: n = 100 exponential workers, μ = 1, `fixed` load, crc
/// at s = 0, 20 and 50: mean iteration times 5.187, 1.590 and 0.688 to the
/// printed digits, and H_100, H_100 − H_20, H_100 − H_50 (mpmath) to 1e-12.
#[test]
fn worked_example_numbers() {
    let uncoded = law(&exp1(), LoadModel::Fixed, &scheme(SchemeKind::Uncoded, 100, 0)).mean();
    let s20 = law(&exp1(), LoadModel::Fixed, &scheme(SchemeKind::Crc, 100, 20)).mean();
    let s50 = law(&exp1(), LoadModel::Fixed, &scheme(SchemeKind::Crc, 100, 50)).mean();
    assert_eq!(format!("{uncoded:.3} {s20:.3} {s50:.3}"), "5.187 1.590 0.688");
    assert_eq!(format!("{:.2} {:.2}", uncoded / s20, uncoded / s50), "3.26 7.54");
    assert!((uncoded - 5.187_377_517_639_620_260_805).abs() < 1e-12);
    assert!((s20 - 1.589_637_860_495_938_349_321).abs() < 1e-12);
    assert!((s50 - 0.688_172_179_310_195_203_244_6).abs() < 1e-12);
}

/// The other closed forms (rate μ = 2, the shifted exponential, straggler
/// mixtures) and the load-model maps (scaled, affine, additive), to 1e-12.
#[test]
fn closed_form_variants() {
    let h = |n: u64, j: u64| ((j + 1)..=n).map(|i| 1.0 / i as f64).sum::<f64>();
    let crc = scheme(SchemeKind::Crc, 100, 20);
    let cases = [
        (Dist::exp(2.0).unwrap(), LoadModel::Fixed, h(100, 20) / 2.0),
        (Dist::exp(2.0).unwrap(), LoadModel::Scaled, 21.0 * h(100, 20) / 2.0),
        (
            Dist::shifted_exp(1.5, 2.0).unwrap(),
            LoadModel::Fixed,
            1.5 + h(100, 20) / 2.0,
        ),
        (
            Dist::shifted_exp(1.5, 2.0).unwrap(),
            LoadModel::Scaled,
            21.0 * (1.5 + h(100, 20) / 2.0),
        ),
        (
            Dist::exp(2.0).unwrap(),
            LoadModel::Affine { unit_time: 0.25 },
            0.25 * 21.0 + h(100, 20) / 2.0,
        ),
        // A mixture with p_slow = 1 is the base law scaled by slowdown.
        (
            exp1().with_stragglers(1.0, 4.0).unwrap(),
            LoadModel::Fixed,
            4.0 * h(100, 20),
        ),
        (exp1().with_stragglers(0.0, 4.0).unwrap(), LoadModel::Fixed, h(100, 20)),
        // Additive with load 1 is the base law itself.
        (exp1(), LoadModel::Additive, h(100, 20)),
    ];
    for (i, (d, load, want)) in cases.into_iter().enumerate() {
        let sch = if load == LoadModel::Additive {
            scheme(SchemeKind::Ignore, 100, 20)
        } else {
            crc
        };
        let got = law(&d, load, &sch).mean();
        assert!(
            (got - want).abs() < 1e-12 * want,
            "case {i} {d} {load}: {got} vs {want}"
        );
    }
    // frc: H_g/(rμ) under fixed, H_g/μ under scaled (n = 100, s = 4: g = 20, r = 5).
    let frc = scheme(SchemeKind::Frc, 100, 4);
    let got = law(&Dist::exp(2.0).unwrap(), LoadModel::Fixed, &frc).mean();
    assert!((got - h(20, 0) / 10.0).abs() < 1e-12);
    let got = law(&Dist::exp(2.0).unwrap(), LoadModel::Scaled, &frc).mean();
    assert!((got - h(20, 0) / 2.0).abs() < 1e-12);
    // Pareto, against 30-digit mpmath evaluations of the Γ-ratio formula.
    let pareto = [
        (100, 100, 1.05, 1_644.123_221_967_822_760_371_96),
        (100, 97, 0.26, 47_026_520.187_673_131_283_035_81),
        (100_000, 99_990, 2.5, 39.337_649_634_399_264_221_32),
    ];
    for (n, k, alpha, want) in pareto {
        let sch = scheme(SchemeKind::Mds, n, n - k);
        let got = law(&Dist::pareto(1.0, alpha).unwrap(), LoadModel::Fixed, &sch).mean();
        assert!(
            (got - want).abs() < 1e-11 * want,
            "n={n} k={k} α={alpha}: {got} vs {want}"
        );
    }
    // Large n: H_{10⁵} − H_10 (mpmath).
    let got = law(&exp1(), LoadModel::Fixed, &scheme(SchemeKind::Crc, 100_000, 10)).mean();
    assert!((got - 9.161_177_875_895_173_979_109).abs() < 1e-12 * got);
}

/// Infinite means are decided by the tail index: k of n is finite iff
/// α(n−k+1) > 1, groups of r iff rα > 1; never NaN.
#[test]
fn infinite_means_follow_the_tail_index() {
    let d = Dist::pareto(1.0, 0.5).unwrap();
    let n = 10;
    for k in 1..=n {
        let m = law(&d, LoadModel::Fixed, &scheme(SchemeKind::Mds, n, n - k)).mean();
        let finite = 0.5 * (n - k + 1) as f64 > 1.0;
        assert_eq!(m.is_finite(), finite, "k={k}: {m}");
        assert!(!m.is_nan());
    }
    // α(n−k+1) = 1 exactly is infinite.
    let m = law(
        &Dist::pareto(1.0, 0.25).unwrap(),
        LoadModel::Fixed,
        &scheme(SchemeKind::Crc, 10, 3),
    )
    .mean();
    assert_eq!(m, f64::INFINITY);
    // Mixtures keep the index: groups of r = 2 with α = 0.5 sit on the boundary.
    let mix = Dist::pareto(1.0, 0.5).unwrap().with_stragglers(0.1, 3.0).unwrap();
    assert_eq!(
        law(&mix, LoadModel::Fixed, &scheme(SchemeKind::Frc, 10, 1)).mean(),
        f64::INFINITY
    );
    let m = law(&mix, LoadModel::Fixed, &scheme(SchemeKind::Frc, 10, 4)).mean();
    assert!(m.is_finite() && m > 1.0, "{m}");
    // Scaled and affine keep infinity.
    let inf = law(&d, LoadModel::Scaled, &scheme(SchemeKind::Uncoded, 10, 0)).mean();
    assert_eq!(inf, f64::INFINITY);
}

/// The k-of-n CDF against the direct binomial sum
/// `Σ_{j=k}^{n} C(n,j) F^j (1−F)^(n−j)` (n = 30, every k, 1e-12).
#[test]
fn cdf_matches_direct_binomial_sum() {
    let n = 30;
    for d in [
        exp1(),
        Dist::pareto(1.0, 1.5).unwrap(),
        exp1().with_stragglers(0.2, 5.0).unwrap(),
    ] {
        for k in 1..=n {
            let l = law(&d, LoadModel::Fixed, &scheme(SchemeKind::Mds, n, n - k));
            for p in [0.01, 0.2, 0.5, 0.8, 0.99] {
                let t = d.quantile(p);
                let f = d.cdf(t);
                let mut direct = 0.0;
                let mut choose = 1.0f64;
                for j in 0..=n {
                    if j >= k {
                        direct += choose * f.powi(j as i32) * (1.0 - f).powi((n - j) as i32);
                    }
                    choose = choose * (n - j) as f64 / (j + 1) as f64;
                }
                let got = l.cdf(t);
                assert!((got - direct).abs() < 1e-12, "{d} k={k} t={t}: {got} vs {direct}");
            }
        }
    }
}

/// frc's group formula at its edges: r = 1 is uncoded, r = n is the fastest
/// worker (crc with s = n − 1, k = 1). CDF to 1e-13, survival to 1e-13
/// relative, mean to 1e-9.
#[test]
fn group_edge_cases_reduce_to_order_statistics() {
    let n = 12;
    for d in [
        exp1(),
        Dist::pareto(1.0, 2.0).unwrap(),
        exp1().with_stragglers(0.1, 6.0).unwrap(),
    ] {
        for (frc_s, other) in [
            (0, scheme(SchemeKind::Uncoded, n, 0)),
            (n - 1, scheme(SchemeKind::Crc, n, n - 1)),
        ] {
            let g = law(&d, LoadModel::Fixed, &scheme(SchemeKind::Frc, n, frc_s));
            let o = law(&d, LoadModel::Fixed, &other);
            for p in [0.05, 0.5, 0.95, 0.999_999] {
                let t = d.quantile(p);
                assert!((g.cdf(t) - o.cdf(t)).abs() < 1e-13, "{d} s={frc_s} t={t}");
                let tol = 1e-13 * o.sf(t).max(1e-300);
                assert!((g.sf(t) - o.sf(t)).abs() < tol, "{d} s={frc_s} t={t}");
            }
            assert!((g.mean() - o.mean()).abs() < 1e-9 * o.mean(), "{d} s={frc_s}");
        }
    }
}

/// `cdf + sf = 1` (1e-14), and the quantile inverts the CDF: it brackets q
/// within 1e-12 relative in t, and hits q to 1e-9 relative where no offset
/// eats the digits of t, across laws,
/// rules, load models and extreme k (k = 1, k = n, s = 0, s = n − 1).
#[test]
fn quantile_inverts_cdf_and_cdf_plus_sf_is_one() {
    let dists = [
        exp1(),
        Dist::shifted_exp(2.0, 0.5).unwrap(),
        Dist::pareto(1.0, 1.2).unwrap(),
        exp1().with_stragglers(0.05, 8.0).unwrap(),
        Dist::pareto(2.0, 0.7).unwrap().with_stragglers(0.3, 4.0).unwrap(),
    ];
    let loads = [
        LoadModel::Fixed,
        LoadModel::Scaled,
        LoadModel::Affine { unit_time: 0.145 },
    ];
    let schemes = [
        scheme(SchemeKind::Uncoded, 50, 0),
        scheme(SchemeKind::Crc, 50, 0),
        scheme(SchemeKind::Crc, 50, 49),
        scheme(SchemeKind::Ignore, 50, 10),
        scheme(SchemeKind::Mds, 50, 49),
        scheme(SchemeKind::Frc, 50, 4),
        scheme(SchemeKind::Frc, 50, 49),
        scheme(SchemeKind::Mds, 100_000, 50_000),
    ];
    for d in &dists {
        for load in loads {
            for sch in &schemes {
                let l = law(d, load, sch);
                for q in [1e-9, 1e-3, 0.1, 0.5, 0.9, 0.99, 0.999_999] {
                    let t = l.quantile(q);
                    assert!(t.is_finite() && t >= l.support_min(), "{d} {load} {sch} q={q}: {t}");
                    let (c, s) = (l.cdf(t), l.sf(t));
                    assert!((c + s - 1.0).abs() < 1e-14, "{d} {load} {sch} t={t}");
                    // The quantile brackets q within 1e-12 relative in t.
                    let (lo, hi) = (t * (1.0 - 1e-12), t * (1.0 + 1e-12));
                    let tight = if q < 0.5 {
                        l.cdf(lo) <= q && q <= l.cdf(hi)
                    } else {
                        l.sf(lo) >= 1.0 - q && 1.0 - q >= l.sf(hi)
                    };
                    assert!(tight, "{d} {load} {sch} q={q}: t={t} not tight");
                    // Without an offset the probability itself is hit to 1e-9
                    // relative (an offset leaves fewer digits to t − offset).
                    if load != (LoadModel::Affine { unit_time: 0.145 }) && d.support_min() == 0.0 {
                        let err = if q < 0.5 {
                            (c - q).abs() / q
                        } else {
                            (s - (1.0 - q)).abs() / (1.0 - q)
                        };
                        assert!(err < 1e-9, "{d} {load} {sch} q={q}: cdf {c}, sf {s}");
                    }
                }
                assert_eq!(l.quantile(0.0), l.support_min());
                assert_eq!(l.quantile(1.0), f64::INFINITY);
            }
        }
    }
}

/// The upper tail keeps relative accuracy where 1 − cdf has none left.
#[test]
fn survival_is_accurate_in_the_tail() {
    // Uncoded exponential: P(max > t) = 1 − (1 − e^(−t))^n.
    let l = law(&exp1(), LoadModel::Fixed, &scheme(SchemeKind::Uncoded, 1000, 0));
    let t = 60.0f64;
    let want = -(1000.0 * (-(-t).exp()).ln_1p()).exp_m1();
    assert!((l.sf(t) - want).abs() < 1e-13 * want, "{} vs {want}", l.sf(t));
    assert_eq!(l.cdf(t), 1.0);
    // k = 1 of 1000 near the minimum: P(min ≤ t) = 1 − e^(−1000t).
    let l = law(&exp1(), LoadModel::Fixed, &scheme(SchemeKind::Crc, 1000, 999));
    let want = -(-1000.0 * 1e-12f64).exp_m1();
    assert!((l.cdf(1e-12) - want).abs() < 1e-12 * want, "{} vs {want}", l.cdf(1e-12));
}

/// The heaviest tail in range (Pareto shape 0.1) keeps its quantiles finite
/// and exact: `scale·(1 − p)^(−1/shape)`.
#[test]
fn quantiles_of_the_heaviest_tail_are_finite() {
    let l = law(
        &Dist::pareto(1.0, 0.1).unwrap(),
        LoadModel::Fixed,
        &scheme(SchemeKind::Uncoded, 1, 0),
    );
    assert!((l.quantile(0.99) - 1e20).abs() < 1e-9 * 1e20, "{}", l.quantile(0.99));
    assert!((l.quantile(0.5) - 1024.0).abs() < 1e-9 * 1024.0);
    assert!(l.quantile(f64::NAN).is_nan());
}

/// Configurations without an exact law.
#[test]
fn none_where_no_exact_law() {
    let crc = scheme(SchemeKind::Crc, 20, 3);
    let add = LoadModel::Additive;
    assert!(iteration_law(&Dist::pareto(1.0, 2.0).unwrap(), &add, &crc).is_none());
    // A straggler mixture under additive has one: a slow worker's ℓ units
    // are all slow (see `exact_laws_under_the_slow_state`).
    assert!(iteration_law(&exp1().with_stragglers(0.1, 3.0).unwrap(), &add, &crc).is_some());
    let mds = scheme(SchemeKind::Mds, 20, 8); // load 20/12
    assert!(iteration_law(&exp1(), &add, &mds).is_none());
    assert!(iteration_law(&exp1(), &add, &scheme(SchemeKind::Mds, 20, 10)).is_some());
    assert!(iteration_law(&exp1(), &add, &crc).is_some());
}

/// Integrated means against exact values computed another way, to 1e-10:
/// one worker (the law's own mean), additive Gamma workers (polynomial
/// expansion of the survival power), and the maximum of n = 10 exponential
/// mixtures by the expansion
/// `E[max] = Σ_j C(n,j)(−1)^(j+1) Σ_i C(j,i) a^i b^(j−i) / (μi + μ(j−i)/σ)`
/// of `∫ 1 − F^n` with `1 − F(y) = a·e^(−μy) + b·e^(−μy/σ)`.
#[test]
fn integrated_means_match_independent_exact_values() {
    let one = scheme(SchemeKind::Uncoded, 1, 0);
    for d in [
        exp1().with_stragglers(0.05, 8.0).unwrap(),
        Dist::shifted_exp(1.0, 2.0).unwrap().with_stragglers(0.3, 3.0).unwrap(),
        Dist::pareto(1.0, 1.5).unwrap().with_stragglers(0.05, 8.0).unwrap(),
        Dist::pareto(2.0, 1.01).unwrap().with_stragglers(0.5, 2.0).unwrap(),
    ] {
        let got = law(&d, LoadModel::Fixed, &one).mean();
        assert!((got - d.mean()).abs() < 1e-10 * d.mean(), "{d}: {got} vs {}", d.mean());
    }
    // Additive, ℓ = 3 units of 0.5 + Exp(2): Y = 1.5 + G, P(G > t) = u(t) =
    // e^(−2t)(1 + 2t + 2t²). With I_m = ∫ u^m = Σ_i c_i i!/(2m)^(i+1) (c the
    // coefficients of (1 + 2t + 2t²)^m): min of 3 is 1.5 + I_3, max of 3 is
    // 1.5 + 3I_1 − 3I_2 + I_3.
    let poly_pow = |m: usize| {
        let mut c = vec![1.0f64];
        for _ in 0..m {
            let mut next = vec![0.0; c.len() + 2];
            for (i, &ci) in c.iter().enumerate() {
                next[i] += ci;
                next[i + 1] += 2.0 * ci;
                next[i + 2] += 2.0 * ci;
            }
            c = next;
        }
        c
    };
    let integral = |m: usize| -> f64 {
        let rate = 2.0 * m as f64;
        let mut factorial = 1.0;
        let mut sum = 0.0;
        for (i, ci) in poly_pow(m).into_iter().enumerate() {
            if i > 0 {
                factorial *= i as f64;
            }
            sum += ci * factorial / rate.powi(i as i32 + 1);
        }
        sum
    };
    let unit = Dist::shifted_exp(0.5, 2.0).unwrap();
    let fastest = Scheme::new(
        SchemeKind::Mds,
        3,
        Params {
            k: Some(1),
            ..Params::default()
        },
    )
    .unwrap();
    assert_eq!(fastest.load(), 3.0);
    let got = law(&unit, LoadModel::Additive, &fastest).mean();
    let want = 1.5 + integral(3);
    assert!((got - want).abs() < 1e-10 * want, "min: {got} vs {want}");
    let slowest = scheme(SchemeKind::Frc, 3, 2); // one group of 3 at load 3: also the minimum
    let got = law(&unit, LoadModel::Additive, &slowest).mean();
    assert!((got - want).abs() < 1e-10 * want, "frc r=3: {got} vs {want}");
    let crc = scheme(SchemeKind::Crc, 3, 2); // k = 1, load 3
    assert_eq!(
        law(&unit, LoadModel::Additive, &crc).mean(),
        law(&unit, LoadModel::Additive, &fastest).mean()
    );
    let all = Scheme::new(
        SchemeKind::Mds,
        3,
        Params {
            k: Some(3),
            ..Params::default()
        },
    )
    .unwrap();
    assert_eq!(all.load(), 1.0);
    let got = law(&Dist::exp(2.0).unwrap(), LoadModel::Additive, &all).mean();
    let want = (1.0 + 0.5 + 1.0 / 3.0) / 2.0;
    assert!((got - want).abs() < 1e-10 * want, "max of 3 Exp(2): {got} vs {want}");
    let frc_one = scheme(SchemeKind::Frc, 3, 0); // load 1, groups of 1: the maximum
    let got = law(&unit, LoadModel::Additive, &frc_one).mean();
    assert!((got - (0.5 + want)).abs() < 1e-10 * want, "{got}");
    // comm-efficient with s = 0, m = 3 on 3 workers: load 3, all 3 needed.
    let max3 = 1.5 + 3.0 * integral(1) - 3.0 * integral(2) + integral(3);
    let ce = Scheme::new(
        SchemeKind::CommEfficient,
        3,
        Params {
            s: Some(0),
            m: Some(3),
            k: None,
            d: None,
            ..Params::default()
        },
    )
    .unwrap();
    assert_eq!((ce.load(), ce.k()), (3.0, 3));
    let got = law(&unit, LoadModel::Additive, &ce).mean();
    assert!((got - max3).abs() < 1e-10 * max3, "max: {got} vs {max3}");

    let (mu, p, sd, n) = (1.5f64, 0.05f64, 8.0f64, 10u32);
    let (a, b) = (1.0 - p, p);
    let choose = |n: u32, j: u32| (1..=j).fold(1.0, |c, i| c * f64::from(n - j + i) / f64::from(i));
    let mut want = 0.0;
    for j in 1..=n {
        let sign = if j % 2 == 1 { 1.0 } else { -1.0 };
        let inner: f64 = (0..=j)
            .map(|i| {
                choose(j, i) * a.powi(i as i32) * b.powi((j - i) as i32)
                    / (mu * f64::from(i) + mu * f64::from(j - i) / sd)
            })
            .sum();
        want += sign * choose(n, j) * inner;
    }
    let d = Dist::exp(mu).unwrap().with_stragglers(p, sd).unwrap();
    let got = law(&d, LoadModel::Fixed, &scheme(SchemeKind::Uncoded, n as usize, 0)).mean();
    assert!((got - want).abs() < 1e-10 * want, "{got} vs {want}");
}

/// Every scheme, tolerance and load model on 12 workers: the law exists
/// where promised, its mean is never NaN and lies between the fastest and
/// the slowest worker's means, and the quantiles increase.
#[test]
fn sweep_is_well_formed() {
    let n = 12;
    let dists = [
        exp1(),
        Dist::shifted_exp(1.0, 0.5).unwrap(),
        Dist::pareto(1.0, 0.7).unwrap(),
        exp1().with_stragglers(0.1, 5.0).unwrap(),
        Dist::pareto(1.0, 2.0).unwrap().with_stragglers(0.1, 5.0).unwrap(),
    ];
    let loads = [
        LoadModel::Fixed,
        LoadModel::Scaled,
        LoadModel::Additive,
        LoadModel::Affine { unit_time: 0.3 },
    ];
    let mut count = 0;
    for d in &dists {
        for load in loads {
            for kind in SchemeKind::ALL {
                for s in 0..n {
                    // Each scheme gets only the parameters it reads (uncoded: s = 0).
                    if kind == SchemeKind::Uncoded && s > 0 {
                        continue;
                    }
                    let params = Params {
                        s: Some(s),
                        m: (kind == SchemeKind::CommEfficient).then_some(1),
                        k: None,
                        d: None,
                        ..Params::default()
                    };
                    let Ok(sch) = Scheme::new(kind, n, params) else {
                        continue;
                    };
                    let pareto = matches!(d.base(), Base::Pareto { .. });
                    let exact_expected = match kind {
                        SchemeKind::MultiMessage
                        | SchemeKind::Speculative
                        | SchemeKind::PartialFrc
                        | SchemeKind::PartialCrc => false,
                        // Gamma(K, nμ), or the K-th of n: a mini-batch is
                        // one exponential draw.
                        SchemeKind::KBatchSync | SchemeKind::KAsync | SchemeKind::KBatchAsync => {
                            matches!(d.base(), Base::Exp { .. })
                                && d.stragglers().is_none()
                                && !matches!(load, LoadModel::Affine { .. })
                        }
                        _ => load != LoadModel::Additive || (!pareto && sch.load().fract() == 0.0),
                    };
                    let law = iteration_law(d, &load, &sch);
                    assert_eq!(law.is_some(), exact_expected, "{d} {load} {sch}");
                    let Some(l) = law else { continue };
                    let m = l.mean();
                    assert!(!m.is_nan() && m >= l.support_min(), "{d} {load} {sch}: mean {m}");
                    let qs: Vec<f64> = [0.01, 0.25, 0.5, 0.75, 0.99].iter().map(|&q| l.quantile(q)).collect();
                    assert!(qs.windows(2).all(|w| w[0] < w[1]), "{d} {load} {sch}: {qs:?}");
                    if m.is_finite() {
                        assert!(qs[0] < m, "{d} {load} {sch}: mean {m} below the 1% quantile {}", qs[0]);
                    }
                    count += 1;
                }
            }
        }
    }
    assert!(count > 300, "{count}");
}

/// Log-normal and Weibull workers go through the integrated mean and the
/// bracketed quantiles; checked against what is exact for them, to 1e-9:
/// - one worker: the law's own mean `exp(μ + σ²/2)` and `λ·Γ(1 + 1/k)`;
/// - the minimum of n Weibull(λ, k) is Weibull(λ·n^(−1/k), k) (frc with one
///   group of n);
/// - Weibull with shape 1 is the exponential with rate 1/λ: `(H_n − H_{n−k})·λ`;
/// - the maximum of n has quantile `F⁻¹(q^(1/n))`;
/// - `p_slow = 1` is the law scaled by `slowdown`: log-normal μ + ln c.
#[test]
fn lognormal_and_weibull_laws() {
    let rel = |a: f64, b: f64| (a - b).abs() / b.abs();
    for d in [
        Dist::lognormal(0.0, 0.25).unwrap(),
        Dist::lognormal(1.0, 2.0).unwrap(),
        Dist::weibull(2.0, 0.5).unwrap(),
        Dist::weibull(1.0, 3.0).unwrap(),
    ] {
        let one = law(&d, LoadModel::Fixed, &scheme(SchemeKind::Uncoded, 1, 0));
        assert!(rel(one.mean(), d.mean()) < 1e-9, "{d}: {} vs {}", one.mean(), d.mean());
        let max = law(&d, LoadModel::Fixed, &scheme(SchemeKind::Uncoded, 50, 0));
        for q in [0.01f64, 0.5, 0.99] {
            let want = d.quantile(q.powf(1.0 / 50.0));
            assert!(
                rel(max.quantile(q), want) < 1e-10,
                "{d} q={q}: {} vs {want}",
                max.quantile(q)
            );
        }
    }
    for (scale, shape) in [(2.0, 0.5), (1.0, 3.0), (0.3, 1.2)] {
        let d = Dist::weibull(scale, shape).unwrap();
        let min = law(&d, LoadModel::Fixed, &scheme(SchemeKind::Frc, 10, 9));
        let want = Dist::weibull(scale * 10f64.powf(-1.0 / shape), shape).unwrap().mean();
        assert!(rel(min.mean(), want) < 1e-9, "{d}: {} vs {want}", min.mean());
    }
    let h = |n: u64, j: u64| ((j + 1)..=n).map(|i| 1.0 / i as f64).sum::<f64>();
    let w1 = law(
        &Dist::weibull(0.5, 1.0).unwrap(),
        LoadModel::Scaled,
        &scheme(SchemeKind::Crc, 100, 20),
    );
    assert!(rel(w1.mean(), 21.0 * 0.5 * h(100, 20)) < 1e-9, "{}", w1.mean());
    let slow = Dist::lognormal(0.2, 0.7).unwrap().with_stragglers(1.0, 3.0).unwrap();
    let plain = Dist::lognormal(0.2 + 3f64.ln(), 0.7).unwrap();
    let crc = scheme(SchemeKind::Crc, 100, 10);
    let (a, b) = (law(&slow, LoadModel::Fixed, &crc), law(&plain, LoadModel::Fixed, &crc));
    assert!(rel(a.mean(), b.mean()) < 1e-12 && rel(a.quantile(0.99), b.quantile(0.99)) < 1e-12);
    // No exact law for additive loads of these units.
    let lognormal = Dist::lognormal(0.0, 1.0).unwrap();
    assert!(iteration_law(&lognormal, &LoadModel::Additive, &crc).is_none());
}
