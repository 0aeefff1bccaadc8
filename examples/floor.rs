//! The sampling floor of a simulated job: the time to draw the random
//! numbers the job cannot avoid, with gcsim's random streams (one
//! Xoshiro256++ stream per trial, chunks of trials on all cores), and nothing
//! else: no ordering, no rule, no statistics. `bench/compare.sh` measures
//! each path against the floor of its own draws.
//!
//! ```text
//! floor N TRIALS [--per-trial D] [--dist LAW | --workers COUNT:LAW ...]
//! ```
//!
//! Each trial takes D values (default N) for workers 0..N-1, cyclically (the
//! i-th value is worker i mod N's), and prints the seconds. A value is:
//! - a law (`--dist`, default `exp:rate=1`, or classes of workers in index
//!   order, `--workers` as gcsim's): one draw of the worker's law;
//! - `trace:path=FILE`: one uniform index into all recorded times, and the
//!   lookup;
//! - `replay:path=FILE`: every N values are one recorded step, one uniform
//!   index and a copy of its N times (with N different from the trace's
//!   workers, each worker one more index among the trace's, as gcsim draws
//!   them).
//!
//! So D = N for one draw per worker, 2N for a random transfer beside each
//! worker's time, N·L for L unit draws per worker (`additive` load).

use std::path::Path;
use std::time::Instant;

use gcsim::dist::Dist;
use gcsim::engine::CHUNK;
use gcsim::rng::trial_rng;
use gcsim::workers::{Workers, parse_class};
use rand::RngExt;
use rand_distr::Distribution;
use rayon::prelude::*;

/// What the floor draws.
struct Floor {
    n: usize,
    trials: u64,
    per_trial: usize,
    workers: Workers,
}

fn usage(problem: &str) -> ! {
    eprintln!("floor: {problem}");
    eprintln!("usage: floor N TRIALS [--per-trial D] [--dist LAW | --workers COUNT:LAW ...]");
    std::process::exit(2)
}

fn parse() -> Floor {
    let mut args = std::env::args().skip(1);
    let whole = |name: &str, text: Option<String>| -> u64 {
        let text = text.unwrap_or_else(|| usage(&format!("{name} is missing")));
        text.parse()
            .unwrap_or_else(|_| usage(&format!("{name} `{text}` is not a whole number")))
    };
    let n = whole("N", args.next()) as usize;
    let trials = whole("TRIALS", args.next());
    let (mut per_trial, mut dist, mut classes) = (n, None, Vec::new());
    while let Some(flag) = args.next() {
        let value = args.next().unwrap_or_else(|| usage(&format!("{flag} needs a value")));
        match flag.as_str() {
            "--per-trial" => per_trial = whole("--per-trial", Some(value)) as usize,
            "--dist" => {
                dist = Some(Workers::from_dist(&value, Path::new(".")).unwrap_or_else(|e| usage(&e.to_string())))
            }
            "--workers" => classes.push(parse_class(&value).unwrap_or_else(|e| usage(&e.to_string()))),
            _ => usage(&format!("unknown flag `{flag}`")),
        }
    }
    let workers = match (dist, classes.is_empty()) {
        (Some(_), false) => usage("--dist and --workers do not go together"),
        (Some(w), true) => w,
        (None, false) => {
            if classes.iter().map(|(c, _)| c).sum::<usize>() != n {
                usage("the classes' counts must add up to N");
            }
            Workers::Classes {
                classes,
                shuffle: false,
            }
        }
        (None, true) => Workers::Iid(Dist::exp(1.0).expect("a valid law")),
    };
    if n == 0 || per_trial == 0 {
        usage("N and D must be at least 1");
    }
    Floor {
        n,
        trials,
        per_trial,
        workers,
    }
}

/// Each worker's law, where the workers are laws.
fn laws(workers: &Workers, n: usize) -> Vec<Dist> {
    (0..n).filter_map(|i| workers.law_of(i).copied()).collect()
}

fn main() {
    let floor = parse();
    let Floor {
        n,
        trials,
        per_trial,
        ref workers,
    } = floor;
    let laws = laws(workers, n);
    let start = Instant::now();
    let chunks = trials.div_ceil(CHUNK);
    let total: f64 = (0..chunks)
        .into_par_iter()
        .map(|c| {
            // Draws go to a buffer, as a simulation keeps them; summing the
            // buffer afterwards keeps them from being optimised away without
            // a floating-point dependency chain through the sampling loop.
            let mut buf = vec![0.0; per_trial];
            let mut sum = 0.0;
            for t in c * CHUNK..((c + 1) * CHUNK).min(trials) {
                let mut rng = trial_rng(0, t);
                match workers {
                    Workers::Trace(trace) => {
                        let all = trace.all();
                        for x in buf.iter_mut() {
                            *x = all[rng.random_range(0..all.len())];
                        }
                    }
                    Workers::Replay(trace) => {
                        let m = trace.workers();
                        for block in buf.chunks_mut(n) {
                            let step = trace.step(rng.random_range(0..trace.steps()));
                            if m == n {
                                block.copy_from_slice(&step[..block.len()]);
                            } else {
                                for x in block.iter_mut() {
                                    *x = step[rng.random_range(0..m)];
                                }
                            }
                        }
                    }
                    Workers::Iid(dist) => {
                        for x in buf.iter_mut() {
                            *x = dist.sample(&mut rng);
                        }
                    }
                    Workers::Classes { .. } => {
                        for block in buf.chunks_mut(n) {
                            for (x, law) in block.iter_mut().zip(&laws) {
                                *x = law.sample(&mut rng);
                            }
                        }
                    }
                }
                sum += buf.iter().sum::<f64>();
            }
            sum
        })
        .sum();
    let secs = start.elapsed().as_secs_f64();
    // Every value is a time, positive and finite: a sum that is not means
    // the draws went wrong, not that they were slow.
    assert!(
        std::hint::black_box(total).is_finite() && total > 0.0,
        "the draws sum to {total}"
    );
    println!("{secs:.6}");
}
