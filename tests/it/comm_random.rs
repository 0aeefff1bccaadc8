//! Random transfer times (`--comm-dist`) against an independent reference.
//!
//! On a dedicated link the arrival of worker i is X_i + C_i·message with
//! independent C_i, so arrivals are i.i.d. and the iteration time is their
//! k-th order statistic: P(T ≤ t) = P(Binomial(n, F_A(t)) ≥ k), with F_A the
//! law of one arrival. For X ~ Exp(a) and C·message ~ Exp(b), F_A is the
//! hypoexponential law F_A(t) = 1 − (b·e^(−at) − a·e^(−bt))/(b − a). A
//! transfer time shared by all workers of a trial (instead of one per
//! message) moves the mean by many standard errors.

use gcsim::comm::{Comm, Link};
use gcsim::dist::Dist;
use gcsim::engine::{self, Silent};
use gcsim::load::LoadModel;
use gcsim::scheme::{Params, Scheme, SchemeKind};
use gcsim::study::Study;

/// P(Binomial(n, p) ≥ k).
fn binomial_tail(n: usize, k: usize, p: f64) -> f64 {
    if p >= 1.0 {
        return 1.0;
    }
    let mut term = (1.0 - p).powi(n as i32); // P(B = 0)
    let mut below = 0.0;
    for j in 0..k {
        below += term;
        term *= (n - j) as f64 / (j + 1) as f64 * p / (1.0 - p);
    }
    (1.0 - below).clamp(0.0, 1.0)
}

/// E[T] = ∫ P(T > t) dt for the k-th of n i.i.d. hypoexponential arrivals,
/// by the trapezoid rule on a fine grid (error far below the test's SE).
fn exact_mean(n: usize, k: usize, a: f64, b: f64) -> f64 {
    let cdf = |t: f64| 1.0 - (b * (-a * t).exp() - a * (-b * t).exp()) / (b - a);
    let (h, end) = (1e-4, 60.0);
    let steps = (end / h) as usize;
    let sf = |t: f64| 1.0 - binomial_tail(n, k, cdf(t));
    let mut sum = 0.5 * (sf(0.0) + sf(end));
    for i in 1..steps {
        sum += sf(i as f64 * h);
    }
    sum * h
}

#[test]
fn random_transfers_on_a_dedicated_link_match_the_order_statistic_law() {
    let n = 12;
    let schemes: Vec<Scheme> = [0, 2, 5]
        .iter()
        .map(|&s| {
            Scheme::new(
                SchemeKind::Crc,
                n,
                Params {
                    s: Some(s),
                    ..Params::default()
                },
            )
            .unwrap()
        })
        .collect();
    let comm = Comm::new(None, Some(Dist::exp(2.0).unwrap()), Link::Dedicated, 0.0).unwrap();
    let study = Study::new(
        n,
        Dist::exp(1.0).unwrap(),
        LoadModel::Fixed,
        schemes.clone(),
        200_000,
        11,
    )
    .unwrap()
    .with_comm(comm);
    let rows = gcsim::report::rows(&study, &engine::simulate(&study, &Silent));
    for (s, row) in schemes.iter().zip(&rows) {
        let exact = exact_mean(n, s.k(), 1.0, 2.0);
        let z = (row.mean - exact) / row.std_err.unwrap();
        assert!(
            z.abs() < 4.5,
            "crc s={}: {} vs exact {exact}: z = {z:.2}",
            s.s(),
            row.mean
        );
        assert_eq!(
            row.analytic_mean, None,
            "random transfers have no exact law in the rows"
        );
    }
}

/// The reference itself: with b → a large, arrivals are almost the workers'
/// own exponential times, whose k-th of n has mean H_n − H_{n−k}.
#[test]
fn the_reference_reduces_to_the_harmonic_numbers() {
    let harmonic = |m: usize| (1..=m).map(|i| 1.0 / i as f64).sum::<f64>();
    for k in [1, 6, 12] {
        let expected = harmonic(12) - harmonic(12 - k) + 1.0 / 1000.0;
        assert!((exact_mean(12, k, 1.0, 1000.0) - expected).abs() < 1e-4, "k={k}");
    }
}

/// One iteration on a shared link, written directly: messages are served
/// first come first served in order of finish; the master stops once
/// `k` have arrived.
fn shared_link_time(finish: &[f64], transfer: &[f64], message: f64, k: usize) -> f64 {
    let mut order: Vec<usize> = (0..finish.len()).collect();
    order.sort_by(|&a, &b| finish[a].total_cmp(&finish[b]));
    let mut free = 0.0f64;
    for (arrived, &w) in order.iter().enumerate() {
        free = free.max(finish[w]) + transfer[w] * message;
        if arrived + 1 == k {
            return free;
        }
    }
    unreachable!("k <= n")
}

#[test]
fn random_transfers_on_a_shared_link_match_a_direct_simulation() {
    use rand::SeedableRng;
    use rand_distr::{Distribution, Exp};
    let (n, trials) = (12, 200_000u64);
    let schemes: Vec<Scheme> = [1, 4]
        .iter()
        .map(|&s| {
            Scheme::new(
                SchemeKind::CommEfficient,
                n,
                Params {
                    s: Some(s),
                    m: Some(2),
                    k: None,
                    d: None,
                    ..Params::default()
                },
            )
            .unwrap()
        })
        .collect();
    let comm = Comm::new(None, Some(Dist::exp(2.0).unwrap()), Link::Shared, 0.0).unwrap();
    let study = Study::new(
        n,
        Dist::exp(1.0).unwrap(),
        LoadModel::Scaled,
        schemes.clone(),
        trials,
        5,
    )
    .unwrap()
    .with_comm(comm);
    let rows = gcsim::report::rows(&study, &engine::simulate(&study, &Silent));
    // The reference draws with its own generator: agreement is in law.
    let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(99);
    let (work, transfer) = (Exp::new(1.0).unwrap(), Exp::new(2.0).unwrap());
    for (s, row) in schemes.iter().zip(&rows) {
        let (mut sum, mut sum2) = (0.0, 0.0);
        for _ in 0..trials {
            let finish: Vec<f64> = (0..n).map(|_| s.load() * work.sample(&mut rng)).collect();
            let c: Vec<f64> = (0..n).map(|_| transfer.sample(&mut rng)).collect();
            let t = shared_link_time(&finish, &c, s.message(), s.k());
            sum += t;
            sum2 += t * t;
        }
        let mean = sum / trials as f64;
        let se = ((sum2 / trials as f64 - mean * mean) / trials as f64).sqrt();
        let z = (row.mean - mean) / (row.std_err.unwrap().powi(2) + se * se).sqrt();
        assert!(z.abs() < 4.5, "{s}: {} vs direct {mean}: z = {z:.2}", row.mean);
    }
}
