//! Times the closed-form sweep of the analytic law at n = 10⁶ (k = n−1000..=n)
//! and a few integrated means at n = 10⁴.
//!
//! `cargo run --release --example analytic_timing`

use std::time::Instant;

use gcsim::analytic::iteration_law;
use gcsim::dist::Dist;
use gcsim::load::LoadModel;
use gcsim::scheme::Scheme;

fn main() {
    mds_sweep_at_a_million();
    mixtures_at_ten_thousand();
    additive_at_ten_thousand();
}

/// The closed-form mean and p99 of mds at n = 10⁶ for the last 1001 k.
fn mds_sweep_at_a_million() {
    let n = 1_000_000;
    for (name, dist) in [
        ("exp", Dist::exp(1.0).unwrap()),
        ("pareto", Dist::pareto(1.0, 2.0).unwrap()),
    ] {
        let (mut mean_times, mut q_times) = (Vec::new(), Vec::new());
        let start = Instant::now();
        for k in n - 1000..=n {
            let scheme = Scheme::mds(n, k).unwrap();
            let law = iteration_law(&dist, &LoadModel::Fixed, &scheme).unwrap();
            let t = Instant::now();
            let m = law.mean();
            mean_times.push(t.elapsed().as_secs_f64() * 1e3);
            let t = Instant::now();
            let q = law.quantile(0.99);
            q_times.push(t.elapsed().as_secs_f64() * 1e3);
            assert!(m.is_finite() && q.is_finite());
        }
        // Median, 99th percentile and maximum per call, in ms; a maximum of a
        // few ms on a busy machine is a preempted call, not the computation.
        let summary = |v: &mut Vec<f64>| {
            v.sort_by(f64::total_cmp);
            format!(
                "{:.4} / {:.4} / {:.3}",
                v[v.len() / 2],
                v[v.len() * 99 / 100],
                v[v.len() - 1]
            )
        };
        println!(
            "{name} n=1e6 sweep of 1001 k: total {:.3} s; per call median / p99 / max (ms): mean {}, quantile(0.99) {}",
            start.elapsed().as_secs_f64(),
            summary(&mut mean_times),
            summary(&mut q_times)
        );
    }
}

/// Integrated means and p99s of crc and frc on straggler mixtures, n = 10⁴.
fn mixtures_at_ten_thousand() {
    let n = 10_000;
    for (name, dist) in [
        (
            "exp mixture",
            Dist::exp(1.0).unwrap().with_stragglers(0.05, 8.0).unwrap(),
        ),
        (
            "pareto mixture",
            Dist::pareto(1.0, 1.5).unwrap().with_stragglers(0.05, 8.0).unwrap(),
        ),
    ] {
        for scheme in [
            Scheme::crc(n, 0),
            Scheme::crc(n, 20),
            Scheme::crc(n, 5000),
            Scheme::frc(n, 19),
        ] {
            let scheme = scheme.unwrap();
            let law = iteration_law(&dist, &LoadModel::Fixed, &scheme).unwrap();
            let t = Instant::now();
            let m = law.mean();
            let tm = t.elapsed().as_secs_f64();
            let t = Instant::now();
            let q = law.quantile(0.99);
            let tq = t.elapsed().as_secs_f64();
            println!(
                "{name} {scheme} n=1e4: mean {m:.12} in {:.2} ms, p99 {q:.6} in {:.3} ms",
                tm * 1e3,
                tq * 1e3
            );
        }
    }
}

/// The additive load model's mean for crc on exponential workers, n = 10⁴.
fn additive_at_ten_thousand() {
    let n = 10_000;
    let dist = Dist::exp(1.0).unwrap();
    for s in [0, 9, 99] {
        let scheme = Scheme::crc(n, s).unwrap();
        let law = iteration_law(&dist, &LoadModel::Additive, &scheme).unwrap();
        let t = Instant::now();
        let m = law.mean();
        println!(
            "additive exp {scheme} n=1e4: mean {m:.12} in {:.2} ms",
            t.elapsed().as_secs_f64() * 1e3
        );
    }
}
