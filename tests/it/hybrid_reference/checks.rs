//! The reference checked on its own: the schedules' orders, the exact
//! deterministic limits, a two-stage timeline worked out by hand, the flat
//! cluster at P = T = M = 1, the collective's cost by hand, and the
//! samplers' means against their closed forms.

use rand::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;

use super::pipeline::Op;
use super::{Job, Law, Pipeline, Ring, Schedule, Scheme, replica};

const SCHEDULES: [Schedule; 2] = [Schedule::Gpipe, Schedule::OneFOneB];

/// Ops written as in the papers: "F3" or "B0".
fn ops(text: &str) -> Vec<Op> {
    text.split_whitespace()
        .map(|o| Op {
            backward: o.starts_with('B'),
            j: o[1..].parse().unwrap(),
            c: 0,
        })
        .collect()
}

#[test]
fn one_f_one_b_warms_up_then_alternates() {
    let order = |i, m| Schedule::OneFOneB.order(4, i, m);
    assert_eq!(order(0, 6), ops("F0 F1 F2 F3 B0 F4 B1 F5 B2 B3 B4 B5"));
    assert_eq!(order(2, 6), ops("F0 F1 B0 F2 B1 F3 B2 F4 B3 F5 B4 B5"));
    assert_eq!(order(3, 3), ops("F0 B0 F1 B1 F2 B2"));
    // Fewer microbatches than warm-up slots: all forwards, then all backwards.
    assert_eq!(order(0, 2), ops("F0 F1 B0 B1"));
    assert_eq!(Schedule::Gpipe.order(4, 1, 3), ops("F0 F1 F2 B0 B1 B2"));
}

/// Every draw x = 3 with R = 2 (f = 1, b = 2, sums exact in floating
/// point), τ = 0, no collective: both schedules take (m + P − 1)·(f + b)
/// exactly, with m = (s + 1)·M under frc, and every replica idles
/// (P − 1)/(m + P − 1) of its time (each stage is busy m·(f + b)).
#[test]
fn deterministic_limits_are_exact() {
    for schedule in SCHEDULES {
        for p in [1, 2, 3, 4, 5, 8] {
            for big_m in [1, 2, 3, 4, 7, 16] {
                for (dp, tp, scheme) in [
                    (1, 1, Scheme::Uncoded),
                    (3, 2, Scheme::Ignore(1)),
                    (4, 1, Scheme::Frc(1)),
                ] {
                    let job = Job {
                        worker: Law::Const(3.0),
                        scheme,
                        ..Job::new(dp, p, tp, big_m, schedule)
                    };
                    let m = job.microbatches_run();
                    let mut rng = Xoshiro256PlusPlus::seed_from_u64(0);
                    let trial = job.evaluate(&job.draw(&mut rng));
                    let case = format!("{schedule:?} P={p} m={m} {scheme:?}");
                    assert_eq!(trial.time, ((m + p - 1) * 3) as f64, "{case}");
                    assert_eq!(trial.baseline, ((big_m + p - 1) * 3) as f64, "{case}");
                    let bubble = (p - 1) as f64 / (m + p - 1) as f64;
                    assert!((trial.bubble - bubble).abs() < 1e-12, "{case}: {}", trial.bubble);
                }
            }
        }
    }
}

/// P = 2, M = 2, T = 1, R = 2, τ = 0.5, the computes chosen so that every
/// op has its own duration: x_{0,0} = 3 (f 1, b 2), x_{0,1} = 6 (f 2,
/// b 4), x_{1,0} = 1.5 (f 0.5, b 1), x_{1,1} = 3 (f 1, b 2).
///
/// GPipe. Stage 0: F0 [0, 1], F1 [1, 3]. Stage 1: F0 waits for 1 + τ:
/// [1.5, 2]; F1 for 3 + τ: [3.5, 4.5]; B0 [4.5, 5.5]; B1 [5.5, 7.5].
/// Stage 0: B0 waits for 5.5 + τ: [6, 8]; B1 for 7.5 + τ: [8, 12].
/// g = (12, 7.5); busy (9, 4.5); bubble 1 − 13.5/24; the last ops B1
/// take b = (4, 2).
///
/// 1F1B. Stage 0 (one warm-up forward): F0, F1, B0, B1; stage 1: F0, B0,
/// F1, B1. Stage 0: F0 [0, 1], F1 [1, 3]. Stage 1: F0 [1.5, 2], B0 [2, 3],
/// F1 waits for 3.5: [3.5, 4.5], B1 [4.5, 6.5]. Stage 0: B0 waits for
/// 3 + τ: [3.5, 5.5]; B1 for 6.5 + τ: [7, 11]. g = (11, 6.5); bubble
/// 1 − 13.5/22; b = (4, 2) again.
#[test]
fn two_stages_by_hand() {
    let compute = [3.0, 6.0, 1.5, 3.0];
    let gpipe = replica(&Pipeline::new(Schedule::Gpipe, 2, 2, 2.0, 0.5), &compute);
    assert_eq!(gpipe.done, [12.0, 7.5]);
    assert_eq!(gpipe.busy, [9.0, 4.5]);
    assert_eq!(gpipe.last, [4.0, 2.0]);
    assert_eq!(gpipe.bubble(), 1.0 - 13.5 / 24.0);
    let one_f_one_b = replica(&Pipeline::new(Schedule::OneFOneB, 2, 2, 2.0, 0.5), &compute);
    assert_eq!(one_f_one_b.done, [11.0, 6.5]);
    assert_eq!(one_f_one_b.busy, [9.0, 4.5]);
    assert_eq!(one_f_one_b.last, [4.0, 2.0]);
    assert_eq!(one_f_one_b.bubble(), 1.0 - 13.5 / 22.0);
}

/// Stage work and microbatch work through the flags. P = 2, M = 2, R = 1,
/// stage work (1, 3), every draw 1: stage 0's ops take 0.5, stage 1's 1.5.
/// GPipe: stage 0 F0 [0, .5], F1 [.5, 1]; stage 1 F0 [.5, 2], F1 [2, 3.5],
/// B0 [3.5, 5], B1 [5, 6.5]; stage 0 B0 [5, 5.5], B1 [6.5, 7]: 7. A
/// microbatch work of 2, or every rank slow 8×, scales it all.
#[test]
fn stage_and_microbatch_work_by_hand() {
    let base = [
        "--parallel",
        "dp=1,pp=2,tp=1",
        "--microbatches",
        "2",
        "--schedule",
        "gpipe",
        "--backward-ratio",
        "1",
        "--stage-work",
        "1,3",
    ];
    let time = |extra: &[&str]| {
        let job = Job::from_flags(&[&base[..], extra].concat());
        job.evaluate(&job.draw(&mut Xoshiro256PlusPlus::seed_from_u64(1))).time
    };
    assert_eq!(time(&["--dist", "const:x=1"]), 7.0);
    assert_eq!(time(&["--dist", "const:x=1", "--microbatch-work", "const:x=2"]), 14.0);
    assert_eq!(time(&["--dist", "const:x=1,p_slow=1,slowdown=8"]), 56.0);
    assert_eq!(time(&["--dist", "const:x=1,p_slow=0,slowdown=8"]), 7.0);
}

/// With P = T = M = 1 a replica is one rank whose iteration is the sum of
/// its load's draws (forward and backward split one draw), and a scheme's
/// time is its rule over those sums: the flat cluster with additive loads.
#[test]
fn one_stage_one_microbatch_is_the_flat_cluster() {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(3);
    for (dp, scheme) in [
        (7, Scheme::Uncoded),
        (7, Scheme::Ignore(2)),
        (7, Scheme::Crc(2)),
        (6, Scheme::Frc(1)),
        (6, Scheme::Frc(2)),
        (7, Scheme::Timeout(0.8)),
        (7, Scheme::Timeout(0.1)),
    ] {
        let job = Job {
            scheme,
            ..Job::new(dp, 1, 1, 1, Schedule::OneFOneB)
        };
        for _ in 0..50 {
            let draws = job.draw(&mut rng);
            let load = job.microbatches_run();
            let sums: Vec<f64> = draws.x.chunks(load).map(|c| c.iter().sum()).collect();
            let mut sorted = sums.clone();
            sorted.sort_by(f64::total_cmp);
            let want = match scheme {
                Scheme::Uncoded => sorted[dp - 1],
                Scheme::Ignore(s) | Scheme::Crc(s) => sorted[dp - s - 1],
                Scheme::Frc(s) => sums
                    .chunks(s + 1)
                    .map(|g| g.iter().copied().fold(f64::INFINITY, f64::min))
                    .fold(0.0, f64::max),
                // The flat cluster's deadline: min(X_(n), max(T, X_(1))).
                Scheme::Timeout(t) => sorted[dp - 1].min(t.max(sorted[0])),
            };
            let got = job.evaluate(&draws).time;
            assert!((got - want).abs() <= 1e-12 * want, "{scheme:?}: {got} vs {want}");
        }
    }
}

/// |z| of an estimate against an exact mean.
fn z(mean: f64, std_err: f64, exact: f64) -> f64 {
    (mean - exact) / std_err
}

/// The samplers against closed forms at |z| < 4.5: D exponential(1)
/// replicas wait for the slowest, E = H_D, or drop the s slowest,
/// E = Σ_{i<D−s} 1/(D − i); T = 2 tensor ranks take the larger of two,
/// E = 1.5; stragglers and a log-normal microbatch work multiply the mean:
/// E = (1 − p + p·slowdown)/rate · exp(σ²/2).
#[test]
fn samplers_have_their_means() {
    let trials = 40_000;
    let harmonic = |d: usize, k: usize| (0..k).map(|i| 1.0 / (d - i) as f64).sum::<f64>();
    let uncoded = Job::new(7, 1, 1, 1, Schedule::Gpipe).simulate(trials, 10);
    assert!(z(uncoded.mean, uncoded.std_err, harmonic(7, 7)).abs() < 4.5);
    let ignore = Job {
        scheme: Scheme::Ignore(2),
        ..Job::new(7, 1, 1, 1, Schedule::Gpipe)
    }
    .simulate(trials, 11);
    assert!(z(ignore.mean, ignore.std_err, harmonic(7, 5)).abs() < 4.5);
    let tensor = Job::new(1, 1, 2, 1, Schedule::Gpipe).simulate(trials, 12);
    assert!(z(tensor.mean, tensor.std_err, 1.5).abs() < 4.5);
    let (worker, stragglers) = Law::parse("exp:rate=2,p_slow=0.1,slowdown=8");
    let scaled = Job {
        worker,
        stragglers,
        microbatch_work: Some(Law::parse("lognormal:mu=0,sigma=0.5").0),
        ..Job::new(1, 1, 1, 1, Schedule::Gpipe)
    }
    .simulate(trials, 13);
    let exact = (0.9 + 0.1 * 8.0) / 2.0 * (0.125f64).exp();
    assert!(
        z(scaled.mean, scaled.std_err, exact).abs() < 4.5,
        "{} vs {exact}",
        scaled.mean
    );
}

/// Four replicas of P = 2 stages of T = 2 ranks, every draw 3, M = 2: the
/// pipeline takes (2 + 1)·3 = 9 (frc: m = 4, 15). A ring with α = 1 ms on
/// S = 1.2 GB at 1 GB/s, each rank's share S/(P·T) = 0.3 GB:
/// uncoded, p = 4: 6 ms + 2·(3/4)·0.3 = 0.456;
/// ignore s = 1, p = 3: agreement 4 ms + 4 ms + 2·(2/3)·0.3 = 0.408;
/// frc s = 1, p = 2: agreement 2 ms + 2 ms + 2·(1/2)·0.3 = 0.304.
/// The optimizer's 0.05 on top.
#[test]
fn the_collective_by_hand() {
    let ring = Ring {
        bytes: 1.2e9,
        bandwidth: 1e9,
        latency: 1e-3,
    };
    for (scheme, pipeline, cost) in [
        (Scheme::Uncoded, 9.0, 0.456),
        (Scheme::Ignore(1), 9.0, 0.408),
        (Scheme::Frc(1), 15.0, 0.304),
    ] {
        let job = Job {
            worker: Law::Const(3.0),
            scheme,
            ring: Some(ring),
            optimizer: 0.05,
            ..Job::new(4, 2, 2, 2, Schedule::OneFOneB)
        };
        let trial = job.evaluate(&job.draw(&mut Xoshiro256PlusPlus::seed_from_u64(0)));
        let want = pipeline + cost + 0.05;
        assert!(
            (trial.time - want).abs() < 1e-12,
            "{scheme:?}: {} vs {want}",
            trial.time
        );
        let base = 9.0 + 0.456 + 0.05;
        assert!((trial.baseline - base).abs() < 1e-12, "{scheme:?}: {}", trial.baseline);
    }
}

/// The command, read as the reference reads flags.
#[test]
fn flags_make_the_job() {
    let job = Job::from_flags(&[
        "--parallel",
        "dp=2,pp=4,tp=3",
        "--microbatches",
        "8",
        "--schedule",
        "1f1b",
        "--p2p-time",
        "0.25",
        "--scheme",
        "frc",
        "--s",
        "1",
        "--dist",
        "exp:rate=1,p_slow=0.05,slowdown=8",
    ]);
    assert_eq!((job.dp, job.pp, job.tp, job.microbatches), (2, 4, 3, 8));
    assert_eq!(
        (job.schedule, job.scheme, job.p2p),
        (Schedule::OneFOneB, Scheme::Frc(1), 0.25)
    );
    assert_eq!((job.backward_ratio, job.stragglers), (2.0, Some((0.05, 8.0))));
    assert_eq!(job.microbatches_run(), 16);
    assert_eq!(job.rank(1, 2, 1), (4 + 2) * 3 + 1);
}
