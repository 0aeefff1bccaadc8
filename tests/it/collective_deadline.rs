//! `timeout` under an all-reduce collective: the workers in by the
//! deadline sum their gradients, a count that varies from trial to trial.
//! Checked against a per-trial simulation written here by cases, its limit
//! (a deadline never reached is the uncoded ring) and its `--analytic`
//! refusal.

use assert_cmd::Command;
use rand::SeedableRng;
use rand_distr::{Distribution, Exp1};
use rand_xoshiro::Xoshiro256PlusPlus;

use super::collectives::{column, csv, ring};

/// n = 16 exponential workers, a ring of 400 MB in K = 4 buckets at 1 GB/s,
/// α = 1 ms.
const N: usize = 16;
const K: usize = 4;
const ALPHA: f64 = 1e-3;
const BANDWIDTH: f64 = 1e9;
const BYTES: f64 = 4e8;

fn sweep(timeouts: &str, buckets: &str) -> (Vec<String>, Vec<Vec<String>>) {
    csv(&[
        "sweep",
        "--n",
        "16",
        "--scheme",
        "uncoded,timeout",
        "--timeout",
        timeouts,
        "--aggregation",
        "ring",
        "--latency",
        "1e-3",
        "--bandwidth",
        "1GB/s",
        "--gradient-size",
        "400MB",
        "--buckets",
        buckets,
        "--time-unit",
        "s",
        "--trials",
        "40000",
        "--seed",
        "7",
    ])
}

/// One iteration under deadline `t`: when the collective starts and among
/// how many. All in by t: at the slowest, among n. None in by t: at the
/// first finish, alone. Otherwise at t, among those in.
fn start_and_participants(times: &[f64], t: f64) -> (f64, usize) {
    let in_by_t = times.iter().filter(|&&x| x <= t).count();
    if in_by_t == times.len() {
        (times.iter().copied().fold(f64::NEG_INFINITY, f64::max), in_by_t)
    } else if in_by_t == 0 {
        (times.iter().copied().fold(f64::INFINITY, f64::min), 1)
    } else {
        (t, in_by_t)
    }
}

/// Mean and standard error of `values`.
fn mean_se(values: &[f64]) -> (f64, f64) {
    let m = values.iter().sum::<f64>() / values.len() as f64;
    let var = values.iter().map(|v| (v - m) * (v - m)).sum::<f64>() / (values.len() - 1) as f64;
    (m, (var / values.len() as f64).sqrt())
}

/// The iteration's end, the collective's time, the participants and the
/// bytes all ranks send, per trial of `trials` on draws of our own: a
/// participant in by the start s has produced bucket j by j·s/K; bucket
/// j's collective starts once it is produced and bucket j − 1's has
/// ended, and costs an agreement among the p (where p < n) and a ring of
/// S/K bytes.
fn reference(t: f64, buckets: usize, trials: usize) -> [Vec<f64>; 4] {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(31);
    let mut out: [Vec<f64>; 4] = Default::default();
    for _ in 0..trials {
        let times: Vec<f64> = (0..N).map(|_| Exp1.sample(&mut rng)).collect();
        let (start, p) = start_and_participants(&times, t);
        let agreement = if p < N { ring(p, 0.0, ALPHA, BANDWIDTH) } else { 0.0 };
        let cost = agreement + ring(p, BYTES / buckets as f64, ALPHA, BANDWIDTH);
        let mut end = f64::NEG_INFINITY;
        for j in 1..=buckets {
            end = end.max(start * j as f64 / buckets as f64) + cost;
        }
        out[0].push(end);
        out[1].push(end - start / buckets as f64);
        out[2].push(p as f64);
        // A ring's rank sends 2(p − 1)/p of the bytes.
        out[3].push(2.0 * (p as f64 - 1.0) * BYTES);
    }
    out
}

/// Deadlines where most trials have no worker in (0.02), some in (1) and
/// often all in (3), with one bucket and with four: the mean agrees with
/// the reference within 4.5 standard errors, and so do the participants,
/// the collective's time and the bytes sent (those counted over gcsim's
/// first 20 000 trials, or exact).
#[test]
fn timeout_sums_the_workers_in_by_the_deadline() {
    let trials = 40_000;
    for buckets in [1, K] {
        let (h, rows) = sweep("0.02,1,3", &buckets.to_string());
        for (row, t) in rows[1..].iter().zip([0.02, 1.0, 3.0]) {
            assert_eq!(column(&h, row, "timeout"), t);
            let [end, coll, p, sent] = reference(t, buckets, trials);
            let z = |name: &str, values: &[f64], gcsim_se: f64| {
                let (m, se) = mean_se(values);
                let got = column(&h, row, name);
                let z = (got - m) / (se * se + gcsim_se * gcsim_se).sqrt();
                assert!(z.abs() < 4.5, "T={t} K={buckets} {name}: gcsim {got} vs {m} (z {z})");
            };
            z("mean", &end, column(&h, row, "std_err"));
            // Counted over 20 000 trials (the participants exactly): at
            // most the reference's own error at 20 000.
            let counted = |v: &[f64]| mean_se(v).1 * (trials as f64 / 20_000.0).sqrt();
            z("participants", &p, counted(&p));
            z("collective_time", &coll, counted(&coll));
            z("bytes_per_iteration", &sent, counted(&sent));
        }
    }
}

/// A deadline never reached waits for every worker: the uncoded ring,
/// byte for byte on the same draws (the collective's time, a mean over
/// trials where uncoded's is its constant cost, to rounding).
#[test]
fn a_deadline_never_reached_is_the_uncoded_ring() {
    for buckets in ["1", "4"] {
        let (h, rows) = sweep("1e9", buckets);
        for col in ["mean", "p50", "p99", "participants", "bytes_per_iteration"] {
            assert_eq!(column(&h, &rows[0], col), column(&h, &rows[1], col), "{col}");
        }
        let (a, b) = (
            column(&h, &rows[0], "collective_time"),
            column(&h, &rows[1], "collective_time"),
        );
        assert!((a - b).abs() < 1e-12 * a, "collective_time {a} vs {b}");
        assert_eq!(column(&h, &rows[1], "participants"), N as f64);
        // Each of the 16 ranks of a ring sends 2·15/16 of the 400 MB.
        assert_eq!(column(&h, &rows[0], "bytes_per_iteration"), 2.0 * 15.0 * BYTES);
    }
}

/// `--analytic` refuses a deadline under a collective and says why.
#[test]
fn analytic_refuses_a_deadline_under_a_collective() {
    let out = Command::cargo_bin("gcsim")
        .unwrap()
        .args([
            "run",
            "--n",
            "16",
            "--scheme",
            "timeout",
            "--timeout",
            "1",
            "--aggregation",
            "ring",
            "--bandwidth",
            "1GB/s",
            "--gradient-size",
            "400MB",
            "--time-unit",
            "s",
            "--analytic",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("--analytic: no exact law for timeout T=1 under --aggregation ring (a deadline's collective sums the workers in by --timeout"),
        "{err}"
    );
}
