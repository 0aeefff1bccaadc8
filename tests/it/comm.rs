//! Communication and decoding on the event timeline.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use assert_cmd::Command;
use predicates::prelude::*;
use rand_distr::Distribution;

use gcsim::comm::{Comm, Link, Transfer};
use gcsim::dist::Dist;
use gcsim::engine::{self, RulePath, Sampling, Silent, TrialPlan};
use gcsim::load::LoadModel;
use gcsim::rng::trial_rng;
use gcsim::scheme::{Params, Rule, Scheme, SchemeKind};
use gcsim::study::Study;

fn scheme(kind: SchemeKind, n: usize, s: usize, m: Option<usize>) -> Scheme {
    let params = if kind == SchemeKind::Uncoded {
        Params::default()
    } else {
        Params {
            s: Some(s),
            m,
            k: None,
            d: None,
            ..Params::default()
        }
    };
    Scheme::new(kind, n, params).unwrap()
}

/// Time ordered as a heap key, ties by worker index.
#[derive(PartialEq)]
struct At(f64, usize);
impl Eq for At {}
impl PartialOrd for At {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for At {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        self.0.total_cmp(&o.0).then(self.1.cmp(&o.1))
    }
}

/// A direct event-queue simulation of one iteration on a shared link: a heap
/// of finish events feeds a first-come-first-served server; the master stops
/// at the first arrival after which the rule holds, then decodes for `decode`.
fn event_queue(rule: Rule, finish: &[f64], transfer: &[f64], message: f64, decode: f64) -> f64 {
    let n = finish.len();
    let mut finished: BinaryHeap<Reverse<At>> = finish.iter().enumerate().map(|(i, &t)| Reverse(At(t, i))).collect();
    let mut server_free = 0.0f64;
    let mut arrived = vec![false; n];
    while let Some(Reverse(At(t, w))) = finished.pop() {
        let start = server_free.max(t);
        server_free = start + transfer[w] * message;
        arrived[w] = true;
        if rule.decodable(&arrived) {
            return server_free + decode;
        }
    }
    unreachable!("all workers arrive")
}

#[test]
fn shared_link_matches_an_event_queue_trial_by_trial() {
    let n = 12;
    let dist = Dist::exp(1.0).unwrap();
    let schemes = vec![
        scheme(SchemeKind::Crc, n, 2, None),
        scheme(SchemeKind::Frc, n, 2, None),
        scheme(SchemeKind::CommEfficient, n, 2, Some(3)),
    ];
    let (tau, decode) = (0.3, 0.05);
    let comm = Comm {
        transfer: Transfer::Constant(tau),
        link: Link::Shared,
        decode_time: decode,
    };
    let study = Study::new(n, dist, LoadModel::Scaled, schemes.clone(), 1000, 4)
        .unwrap()
        .with_comm(comm);
    let plan = TrialPlan::new(&study);
    assert_eq!(plan.sampling(), Sampling::Draws);
    let mut scratch = plan.scratch();
    let mut out = vec![0.0; plan.slots()];
    for t in 0..1000 {
        plan.run(study.seed(), t, &mut scratch, &mut out);
        // The same worker draws, from the trial's stream, in worker order.
        let mut rng = trial_rng(study.seed(), t);
        let x: Vec<f64> = (0..n).map(|_| dist.sample(&mut rng)).collect();
        for (slot, s) in schemes.iter().enumerate() {
            let finish: Vec<f64> = x.iter().map(|v| s.load() * v).collect();
            let reference = event_queue(s.rule(), &finish, &vec![tau; n], s.message(), decode);
            assert!(
                (out[slot] - reference).abs() < 1e-12,
                "trial {t} {s}: {} vs {reference}",
                out[slot]
            );
        }
    }
}

#[test]
fn a_shared_link_is_never_faster_than_a_dedicated_one() {
    let n = 16;
    let schemes = vec![
        scheme(SchemeKind::Crc, n, 3, None),
        scheme(SchemeKind::Frc, n, 3, None),
        scheme(SchemeKind::CommEfficient, n, 3, Some(4)),
    ];
    for transfer in [Transfer::Constant(0.4), Transfer::Random(Dist::exp(2.0).unwrap())] {
        let run = |link| {
            let comm = Comm {
                transfer,
                link,
                decode_time: 0.0,
            };
            let study = Study::new(
                n,
                Dist::pareto(1.0, 3.0).unwrap(),
                LoadModel::Fixed,
                schemes.clone(),
                2000,
                8,
            )
            .unwrap()
            .with_comm(comm);
            let plan = TrialPlan::with(&study, RulePath::Fast, Sampling::Draws);
            let mut scratch = plan.scratch();
            let mut out = vec![0.0; plan.slots()];
            (0..2000u64)
                .map(|t| {
                    plan.run(study.seed(), t, &mut scratch, &mut out);
                    out.clone()
                })
                .collect::<Vec<_>>()
        };
        let (dedicated, shared) = (run(Link::Dedicated), run(Link::Shared));
        for (d, s) in dedicated.iter().zip(&shared) {
            for (a, b) in d.iter().zip(s) {
                assert!(b >= a, "shared {b} < dedicated {a}");
            }
        }
        assert!(dedicated != shared, "the queue must delay some trials");
    }
}

/// A dedicated link with constant τ shifts every arrival by τ·message: the
/// exact mean is the computation-only one plus τ·message + D, and the
/// simulation agrees within 4.5 standard errors.
#[test]
fn dedicated_constant_transfer_is_a_shift() {
    let n = 20;
    let schemes: Vec<Scheme> = (1..=6)
        .map(|m| scheme(SchemeKind::CommEfficient, n, 2, Some(m)))
        .collect();
    let comm = Comm {
        transfer: Transfer::Constant(2.0),
        link: Link::Dedicated,
        decode_time: 0.25,
    };
    let study = Study::new(
        n,
        Dist::exp(1.0).unwrap(),
        LoadModel::Affine { unit_time: 0.145 },
        schemes.clone(),
        100_000,
        2,
    )
    .unwrap()
    .with_comm(comm);
    let out = engine::simulate(&study, &Silent);
    let rows = gcsim::report::rows(&study, &out);
    let computation_only = study.clone().with_comm(Comm::default());
    let mut means = Vec::new();
    for (s, r) in schemes.iter().zip(&rows) {
        let base = computation_only.exact_law(s).unwrap().mean();
        let exact = base + 2.0 * s.message() + 0.25;
        assert!((r.analytic_mean.unwrap() - exact).abs() < 1e-12);
        assert!((study.exact_law(s).unwrap().mean() - exact).abs() < 1e-12);
        let z = (r.mean - exact) / r.std_err.unwrap();
        assert!(z.abs() < 4.5, "{s}: {} vs {exact}: z {z:.2}", r.mean);
        assert_eq!(r.transfer_time, Some(2.0 * s.message()));
        means.push(exact);
    }
    // The computation–communication trade-off: an interior optimum in m.
    let best = means.iter().enumerate().min_by(|a, b| a.1.total_cmp(b.1)).unwrap().0 + 1;
    assert!(best > 1 && best < 6, "optimum m = {best}");
}

#[test]
fn cli_zero_transfer_reproduces_and_bad_input_is_refused() {
    let g = || Command::cargo_bin("gcsim").unwrap();
    let args = [
        "sweep",
        "--n",
        "20",
        "--s",
        "2",
        "--m",
        "1..4",
        "--scheme",
        "comm-efficient,crc",
        "--trials",
        "3000",
        "--format",
        "csv",
    ];
    let plain = g().args(args).output().unwrap().stdout;
    let zero = g().args(args).args(["--comm-time", "0"]).output().unwrap().stdout;
    assert_eq!(
        plain, zero,
        "TAU = 0 reproduces the computation-only result byte for byte"
    );
    // On a shared link too, but for the column that names the link.
    let shared = g()
        .args(args)
        .args(["--comm-time", "0", "--link", "shared"])
        .output()
        .unwrap()
        .stdout;
    let strip = |b: &[u8]| {
        String::from_utf8(b.to_vec())
            .unwrap()
            .replace(",shared,", ",dedicated,")
    };
    assert_eq!(strip(&shared), strip(&plain));
    let header = String::from_utf8(plain).unwrap();
    assert!(header.starts_with("scheme,n,s,m,k,load,message,exact,trials,mean,std_err,ci95_low,ci95_high,p50,p90,p99,p999,speedup,p99_speedup,analytic_mean,analytic_p99,link,transfer_time,decode_time,decoder,approx_error,undecodable,data_fraction,timeout,extra_work,staleness,parts,iterations,inclusion_min,inclusion_max,p99_ci95_low,p99_ci95_high,speedup_ci95_low,speedup_ci95_high,p99_speedup_ci95_low,p99_speedup_ci95_high\n"));
    let cases: &[(&[&str], &str)] = &[
        (&["--comm-time", "-1"], "--comm-time -1 is out of range"),
        (
            &["--comm-time", "1", "--comm-dist", "exp:rate=1"],
            "--comm-time and --comm-dist do not go together",
        ),
        (&["--decode-time", "-2"], "--decode-time -2 is out of range"),
        (
            &["--link", "token-ring"],
            "invalid value 'token-ring' for '--link <LINK>'",
        ),
        (&["--comm-dist", "exp:rate=0"], "`rate=0` is out of range"),
    ];
    for (extra, expected) in cases {
        g().args(["run", "--n", "10", "--scheme", "crc", "--s", "1"])
            .args(*extra)
            .assert()
            .code(2)
            .stderr(predicate::str::contains(*expected));
    }
}

#[test]
fn shards_carry_the_communication_model() {
    let dir = tempfile::tempdir().unwrap();
    let args = [
        "sweep",
        "--n",
        "10",
        "--s",
        "1,3",
        "--scheme",
        "crc",
        "--trials",
        "70000",
        "--comm-dist",
        "exp:rate=3",
        "--link",
        "shared",
        "-q",
    ];
    let single = Command::cargo_bin("gcsim")
        .unwrap()
        .args(args)
        .args(["--format", "csv"])
        .output()
        .unwrap()
        .stdout;
    // One shard (the run is one block of trials): the study travels
    // through the file and the merge.
    let f = dir.path().join("p1.json");
    Command::cargo_bin("gcsim")
        .unwrap()
        .args(args)
        .args(["--shard", "1/1", "--out"])
        .arg(&f)
        .assert()
        .success();
    let files = [f];
    let merged = Command::cargo_bin("gcsim")
        .unwrap()
        .arg("merge")
        .args(&files)
        .args(["--format", "csv"])
        .output()
        .unwrap()
        .stdout;
    assert_eq!(merged, single);
}
