//! The sampling floor of a simulated job: the time to draw the random
//! numbers the job cannot avoid, with gcsim's random streams (one
//! Xoshiro256++ stream per trial, chunks of trials on all cores), and nothing
//! else: no ordering, no rule, no statistics. `bench/compare.sh` measures
//! each path against the floor of its own draws.
//!
//! ```text
//! floor N TRIALS [--per-trial D] [--dist LAW | --workers COUNT:LAW ...] [--crc-qr S-LIST]
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
//!
//! `--crc-qr S-LIST` (`0..10`) adds, for a decoder that reads the code's
//! rows, the factorisation it cannot avoid: for each s listed, crc's
//! encoding matrix B (gcsim's, seed 0), the trial's first N values put in
//! arrival order, and one Householder QR (written out below: faer's
//! `Mat::qr` took about 250 µs here against 35) of the rows of B of the
//! first N − s workers to arrive, in that order. Deciding whether T lies in
//! the span of a prefix of received rows, and whether it lies in that of
//! the prefix one shorter, asks about that matrix's factors (the QR of the
//! longer prefix holds the shorter one's), and N − s is where crc decodes.

use std::path::Path;
use std::time::Instant;

use gcsim::codes::Code;
use gcsim::dist::Dist;
use gcsim::engine::CHUNK;
use gcsim::rng::trial_rng;
use gcsim::scheme::{Params, Scheme, SchemeKind};
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
    /// For `--crc-qr`: each listed s's crc encoding matrix.
    codes: Vec<Code>,
}

fn usage(problem: &str) -> ! {
    eprintln!("floor: {problem}");
    eprintln!("usage: floor N TRIALS [--per-trial D] [--dist LAW | --workers COUNT:LAW ...] [--crc-qr S-LIST]");
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
    let (mut per_trial, mut dist, mut classes, mut tolerances) = (n, None, Vec::new(), Vec::new());
    while let Some(flag) = args.next() {
        let value = args.next().unwrap_or_else(|| usage(&format!("{flag} needs a value")));
        match flag.as_str() {
            "--per-trial" => per_trial = whole("--per-trial", Some(value)) as usize,
            "--dist" => {
                dist = Some(Workers::from_dist(&value, Path::new(".")).unwrap_or_else(|e| usage(&e.to_string())))
            }
            "--workers" => classes.push(parse_class(&value).unwrap_or_else(|e| usage(&e.to_string()))),
            "--crc-qr" => {
                tolerances = gcsim::range::parse(&value)
                    .unwrap_or_else(|e| usage(&format!("--crc-qr: {e}")))
                    .values
            }
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
    if !tolerances.is_empty() && per_trial < n {
        usage("--crc-qr needs D >= N (one value per worker)");
    }
    let codes = tolerances
        .iter()
        .map(|&s| {
            let params = Params {
                s: Some(s),
                ..Params::default()
            };
            Scheme::new(SchemeKind::Crc, n, params)
                .map_err(|e| e.to_string())
                .and_then(|scheme| Code::new(&scheme, 0).map_err(|e| e.to_string()))
                .unwrap_or_else(|e| usage(&format!("--crc-qr: s = {s}: {e}")))
        })
        .collect();
    Floor {
        n,
        trials,
        per_trial,
        workers,
        codes,
    }
}

/// Each worker's law, where the workers are laws.
fn laws(workers: &Workers, n: usize) -> Vec<Dist> {
    (0..n).filter_map(|i| workers.law_of(i).copied()).collect()
}

/// |R₀₀| of the Householder QR of the rows `rows` of `code`'s encoding
/// matrix, in that order (positive for a code whose rows are not zero).
/// The rows are the columns of a column-major matrix here, so that each
/// reflection works on contiguous memory: the QR of Bᵀ's columns is the LQ
/// of B's rows, the same factorisation transposed.
fn factor(code: &Code, rows: &[usize], a: &mut Vec<f64>) -> f64 {
    let b = code.encoding();
    let (m, c) = (rows.len(), b.ncols());
    a.clear();
    for &w in rows {
        a.extend(b.row(w).iter());
    }
    let mut first = 0.0;
    for k in 0..m.min(c) {
        let (done, rest) = a.split_at_mut((k + 1) * c);
        let v = &mut done[k * c + k..];
        let norm = dot(v, v).sqrt();
        let alpha = if v[0] > 0.0 { -norm } else { norm };
        if k == 0 {
            first = alpha.abs();
        }
        v[0] -= alpha;
        let vv = dot(v, v);
        if vv == 0.0 {
            continue;
        }
        for col in rest.chunks_exact_mut(c) {
            let col = &mut col[k..];
            let f = 2.0 * dot(v, col) / vv;
            col.iter_mut().zip(v.iter()).for_each(|(y, x)| *y -= f * x);
        }
    }
    first
}

/// x·y in four independent sums, which the compiler vectorises.
fn dot(x: &[f64], y: &[f64]) -> f64 {
    let mut acc = [0.0; 4];
    let (xs, ys) = (x.chunks_exact(4), y.chunks_exact(4));
    let tail: f64 = xs.remainder().iter().zip(ys.remainder()).map(|(a, b)| a * b).sum();
    for (a, b) in xs.zip(ys) {
        for l in 0..4 {
            acc[l] += a[l] * b[l];
        }
    }
    (acc[0] + acc[1]) + (acc[2] + acc[3]) + tail
}

fn main() {
    let floor = parse();
    let Floor {
        n,
        trials,
        per_trial,
        ref workers,
        ref codes,
    } = floor;
    let laws = laws(workers, n);
    let start = Instant::now();
    // gcsim's chunk of trials, or smaller where that would leave a core
    // idle (the few trials of a job whose trials are slow, such as rank's).
    let chunk = CHUNK
        .min(trials.div_ceil(4 * rayon::current_num_threads() as u64))
        .max(1);
    let chunks = trials.div_ceil(chunk);
    let total: f64 = (0..chunks)
        .into_par_iter()
        .map(|c| {
            // Draws go to a buffer, as a simulation keeps them; summing the
            // buffer afterwards keeps them from being optimised away without
            // a floating-point dependency chain through the sampling loop.
            let mut buf = vec![0.0; per_trial];
            let mut order: Vec<usize> = Vec::with_capacity(n);
            let mut rows = Vec::new();
            let mut sum = 0.0;
            for t in c * chunk..((c + 1) * chunk).min(trials) {
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
                if !codes.is_empty() {
                    order.clear();
                    order.extend(0..n);
                    order.sort_unstable_by(|&a, &b| buf[a].total_cmp(&buf[b]));
                    for code in codes {
                        sum += factor(code, &order[..n - code.scheme().s()], &mut rows);
                    }
                }
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
