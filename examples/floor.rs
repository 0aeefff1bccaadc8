//! The sampling floor: the time to draw n × trials worker times with gcsim's
//! random streams (one Xoshiro256++ stream per trial, exponential by
//! ziggurat) on all cores, and nothing else. The headline sweep is measured
//! against it by `bench/compare.sh`.
//!
//! `cargo run --release --example floor -- [n] [trials]` prints the seconds.

use std::time::Instant;

use gcsim::dist::Dist;
use gcsim::engine::CHUNK;
use gcsim::rng::trial_rng;
use rand_distr::Distribution;
use rayon::prelude::*;

fn main() {
    let args: Vec<u64> = std::env::args()
        .skip(1)
        .map(|a| a.parse().expect("n and trials are whole numbers"))
        .collect();
    let n = args.first().copied().unwrap_or(100);
    let trials = args.get(1).copied().unwrap_or(1_000_000);
    let dist = Dist::exp(1.0).expect("valid");
    let start = Instant::now();
    let chunks = trials.div_ceil(CHUNK);
    let total: f64 = (0..chunks)
        .into_par_iter()
        .map(|c| {
            // Draws go to a buffer, as a simulation keeps them; summing the
            // buffer afterwards keeps them from being optimised away without
            // a floating-point dependency chain through the sampling loop.
            let mut buf = vec![0.0; n as usize];
            let mut sum = 0.0;
            for t in c * CHUNK..((c + 1) * CHUNK).min(trials) {
                let mut rng = trial_rng(0, t);
                for x in buf.iter_mut() {
                    *x = dist.sample(&mut rng);
                }
                sum += buf.iter().sum::<f64>();
            }
            sum
        })
        .sum();
    let secs = start.elapsed().as_secs_f64();
    // The sum keeps the draws from being optimised away; its mean is 1.
    assert!((total / (n * trials) as f64 - 1.0).abs() < 0.01);
    println!("{secs:.4}");
}
