//! The reference's gradient buckets checked on their own: a stage's last op
//! is its last microbatch's backward, three replicas' buckets worked out by
//! hand, K = 1 is the model without buckets trial by trial, and the
//! buckets' recursion against its closed form.

use rand::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;

use super::pipeline::Op;
use super::trial::Draws;
use super::{Job, Law, Ring, Schedule, Scheme};

const SCHEDULES: [Schedule; 2] = [Schedule::Gpipe, Schedule::OneFOneB];

/// The buckets overlap B(i, m − 1) alone, which needs it to be every
/// stage's last op in both schedules.
#[test]
fn a_stage_ends_with_its_last_microbatch_backward() {
    for schedule in SCHEDULES {
        for p in 1..=6 {
            for i in 0..p {
                for m in 1..=9 {
                    let last = schedule.order(p, i, m).last().copied();
                    assert_eq!(
                        last,
                        Some(Op {
                            backward: true,
                            j: m - 1,
                            c: 0
                        }),
                        "{schedule:?} P={p} i={i} m={m}"
                    );
                }
            }
        }
    }
}

/// The hand case's flags: D = 3 replicas of one stage and one tensor rank,
/// M = 2, R = 2, a ring over S = 6 GB at 1 GB/s with α = 0.25 s, an
/// optimizer step of 0.5 s, and K buckets.
fn hand_job(schedule: &str, scheme: &str, k: &str) -> Job {
    let mut flags = vec![
        "--parallel",
        "dp=3,pp=1,tp=1",
        "--microbatches",
        "2",
        "--schedule",
        schedule,
        "--aggregation",
        "ring",
        "--gradient-size",
        "6GB",
        "--bandwidth",
        "1GB/s",
        "--latency",
        "0.25",
        "--time-unit",
        "s",
        "--optimizer-time",
        "0.5",
        "--buckets",
        k,
        "--scheme",
        scheme,
    ];
    if scheme != "uncoded" {
        flags.extend(["--s", "1"]);
    }
    Job::from_flags(&flags)
}

/// Replicas' draws (x_{d,0}, x_{d,1}) = (12, 3), (3, 15), (6, 6). With one
/// stage its ops run back to back under both schedules (GPipe F0 F1 B0 B1,
/// 1F1B F0 B0 F1 B1), so g = x_0 + x_1 and the last op B1 takes
/// b = 2·x_1/3: (g, b) = (15, 2), (18, 10), (12, 4).
///
/// K = 2: bucket 1 is ready at g − b/2, bucket 2 at g:
/// r_{·,1} = (14, 13, 10), r_{·,2} = (15, 18, 12). One bucket is 6/2 = 3 GB,
/// 3 s at 1 GB/s.
/// - uncoded, p = 3: c = 4α + 2·(2/3)·3 = 1 + 4 = 5. t = (14, 18) (replica
///   0 holds up bucket 1, replica 1 bucket 2). e_1 = 19, e_2 =
///   max(18, 19) + 5 = 24: bucket 2 waits for bucket 1's sum. 24.5 with
///   the optimizer.
/// - ignore s = 1, p = 2 < D: c = 2α (agreement) + 2α + 2·(1/2)·3 = 4.
///   t = 2nd smallest: (13, 15). e_1 = 17, e_2 = max(15, 17) + 4 = 21: 21.5.
///
/// K = 4: lags (3/4, 1/2, 1/4, 0)·b, r_{0,·} = (13.5, 14, 14.5, 15),
/// r_{1,·} = (10.5, 13, 15.5, 18), r_{2,·} = (9, 10, 11, 12); a bucket is
/// 1.5 GB.
/// - uncoded: c = 1 + (4/3)·1.5 = 3, t = (13.5, 14, 15.5, 18), every sum
///   waits for the one before: e = (16.5, 19.5, 22.5, 25.5): 26, later
///   than K = 2 (the latency is paid 4 times).
/// - ignore: c = 0.5 + 0.5 + 1.5 = 2.5, t = (10.5, 13, 14.5, 15),
///   e = (13, 15.5, 18, 20.5): 21.
///
/// K = 1, the model without buckets: uncoded 18 + (1 + (4/3)·6) + 0.5 =
/// 27.5; ignore 15 + (1 + 6) + 0.5 = 22.5. The ignore job's baseline is
/// the uncoded job's time at its K.
#[test]
fn buckets_by_hand() {
    let draws = Draws {
        x: vec![12.0, 3.0, 3.0, 15.0, 6.0, 6.0],
        u: vec![1.0; 6],
    };
    let uncoded = [("1", 27.5), ("2", 24.5), ("4", 26.0)];
    let ignore = [("1", 22.5), ("2", 21.5), ("4", 21.0)];
    for schedule in ["gpipe", "1f1b"] {
        for ((k, base), (_, time)) in uncoded.into_iter().zip(ignore) {
            for (scheme, want) in [("uncoded", base), ("ignore", time)] {
                let job = hand_job(schedule, scheme, k);
                assert_eq!(job.buckets, k.parse::<usize>().unwrap());
                let trial = job.evaluate(&draws);
                let case = format!("{schedule} {scheme} K={k}");
                assert!((trial.time - want).abs() < 1e-12, "{case}: {} vs {want}", trial.time);
                assert!((trial.baseline - base).abs() < 1e-12, "{case}: {}", trial.baseline);
            }
        }
    }
}

/// Random jobs: stragglers, tensor groups, a microbatch work law, a ring
/// with an optimizer step, for every rule and both schedules.
fn random_jobs(buckets: usize) -> Vec<Job> {
    let (worker, stragglers) = Law::parse("exp:rate=1,p_slow=0.2,slowdown=5");
    let ring = Ring {
        bytes: 3e9,
        bandwidth: 2e9,
        latency: 0.02,
    };
    let mut jobs = Vec::new();
    for schedule in SCHEDULES {
        for p in [1, 2, 4] {
            for scheme in [Scheme::Uncoded, Scheme::Ignore(1), Scheme::Crc(1), Scheme::Frc(1)] {
                jobs.push(Job {
                    worker,
                    stragglers,
                    microbatch_work: Some(Law::parse("lognormal:mu=0,sigma=0.3").0),
                    scheme,
                    ring: Some(ring),
                    buckets,
                    optimizer: 0.1,
                    ..Job::new(4, p, 2, 3, schedule)
                });
            }
        }
    }
    jobs
}

/// K = 1 is the model without buckets, exactly, trial by trial: per stage
/// the rule over the replicas' g, the latest stage, one collective on the
/// whole P·T share, the optimizer.
#[test]
fn one_bucket_is_the_model_without_buckets() {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(21);
    for job in random_jobs(1) {
        let ring = job.ring.unwrap();
        let without = |scheme: Scheme, microbatches: usize, draws: &Draws| {
            let timelines = job.timelines(&job.pipeline(microbatches), draws);
            let latest = (0..job.pp)
                .map(|i| scheme.rule(&mut timelines.iter().map(|t| t.done[i]).collect::<Vec<_>>()))
                .fold(f64::NEG_INFINITY, f64::max);
            let collective = ring.cost(scheme.participants(job.dp), job.dp, job.pp * job.tp);
            latest + collective + job.optimizer
        };
        for _ in 0..30 {
            let draws = job.draw(&mut rng);
            let trial = job.evaluate(&draws);
            let case = format!("{:?} P={} {:?}", job.schedule, job.pp, job.scheme);
            assert_eq!(
                trial.time,
                without(job.scheme, job.microbatches_run(), &draws),
                "{case}"
            );
            assert_eq!(
                trial.baseline,
                without(Scheme::Uncoded, job.microbatches, &draws),
                "{case}"
            );
        }
    }
}

/// The recursion e_j = max(t_j, e_{j−1}) + c unrolled: a stage ends at
/// max_j (t_j + (K − j + 1)·c), the bucket whose sum the rest queue
/// behind; since t_j ≤ t_K, never before t_K + c nor after t_K + K·c.
/// Checked on random jobs at K = 4.
#[test]
fn buckets_queue_as_their_closed_form_says() {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(22);
    let k = 4;
    for job in random_jobs(k) {
        let c = job
            .ring
            .unwrap()
            .cost(job.scheme.participants(job.dp), job.dp, job.pp * job.tp * k);
        let pipe = job.pipeline(job.microbatches_run());
        for _ in 0..30 {
            let draws = job.draw(&mut rng);
            let timelines = job.timelines(&pipe, &draws);
            let mut latest = f64::NEG_INFINITY;
            for i in 0..job.pp {
                let t: Vec<f64> = (1..=k)
                    .map(|j| {
                        let lag = (k - j) as f64 / k as f64;
                        job.scheme.rule(
                            &mut timelines
                                .iter()
                                .map(|tl| tl.done[i] - lag * tl.last[i])
                                .collect::<Vec<_>>(),
                        )
                    })
                    .collect();
                let closed = (0..k)
                    .map(|j| t[j] + (k - j) as f64 * c)
                    .fold(f64::NEG_INFINITY, f64::max);
                let end = job.stage_end(job.scheme, &timelines, i, c);
                let case = format!("{:?} P={} {:?} stage {i}", job.schedule, job.pp, job.scheme);
                assert!((end - closed).abs() <= 1e-12 * closed, "{case}: {end} vs {closed}");
                assert!(
                    end >= t[k - 1] + c - 1e-12 * end && end <= t[k - 1] + k as f64 * c + 1e-12 * end,
                    "{case}"
                );
                latest = latest.max(end);
            }
            let time = job.evaluate(&draws).time;
            assert!(
                (time - latest - job.optimizer).abs() <= 1e-12 * time,
                "{time} vs {latest}"
            );
        }
    }
}
