//! Candidate generation, divisors, intervals and objectives.

use super::*;
use crate::scheme::Params;
use crate::scheme::search::divisors;

/// The scans that stop at the first candidate over --max-load keep what
/// a filter over every parameter keeps, in the same order.
#[test]
fn candidates_are_every_admissible_configuration_within_the_load() {
    for max_load in [None, Some(1.0), Some(2.0), Some(3.5), Some(12.0)] {
        let req = request(max_load);
        for n in [1, 2, 6, 7, 12, 36] {
            for factor in [1.0, 0.5, 3.0] {
                let want = every_admissible(&req, n, factor);
                match candidates(&req, n, factor, usize::MAX) {
                    Ok(got) => assert_eq!(got, want, "n={n} max_load={max_load:?} factor={factor}"),
                    Err(_) => assert!(want.is_empty(), "n={n} max_load={max_load:?} factor={factor}"),
                }
            }
        }
    }
    // Past `room`, a scan stops: one more than room is built, no more.
    assert_eq!(candidates(&request(None), 36, 1.0, 10).unwrap().len(), 11);
}

/// A plan of every scheme plan searches, on exp(1) workers.
fn request(max_load: Option<f64>) -> PlanRequest {
    PlanRequest {
        ns: vec![],
        workers: Workers::Iid("exp:rate=1".parse().unwrap()),
        load_model: LoadModel::Scaled,
        ref_n: None,
        objective: Objective::Mean,
        max_load,
        schemes: SchemeKind::ALL
            .into_iter()
            .filter(|&k| k.facts().planning != crate::scheme::Planning::Refused)
            .collect(),
        m: vec![1, 2, 3],
        parts: vec![3, 8],
        timeouts: vec![0.5, 2.0],
        trials: 1,
        seed: 1,
        iterations: 1,
        comm: Comm::default(),
        aggregations: vec![crate::collective::Aggregation::Master],
        decoder: Decoder::Threshold,
        generator: None,
        exact: true,
        time_unit: None,
        costs: Default::default(),
        data_replicates: 0,
        parallel: None,
    }
}

/// What the scans must give: every admissible configuration of every
/// scheme whose load (times `factor`) is within the plan's --max-load, in
/// the scans' order.
fn every_admissible(req: &PlanRequest, n: usize, factor: f64) -> Vec<Scheme> {
    let mut out = Vec::new();
    for &kind in &req.schemes {
        out.extend(
            every_params(kind, req, n)
                .into_iter()
                .filter_map(|p| Scheme::new(kind, n, p).ok())
                .filter(|s| req.max_load.is_none_or(|l| s.load() * factor <= l)),
        );
    }
    out.dedup();
    out
}

/// Every parameter of `kind` a filter tries at cluster size n.
fn every_params(kind: SchemeKind, req: &PlanRequest, n: usize) -> Vec<Params> {
    let with_s = |s| Params {
        s: Some(s),
        ..Params::default()
    };
    match kind {
        SchemeKind::Uncoded | SchemeKind::Speculative => vec![Params::default()],
        SchemeKind::Mds => (1..=n)
            .map(|k| Params {
                k: Some(k),
                ..Params::default()
            })
            .collect(),
        SchemeKind::CommEfficient => req
            .m
            .iter()
            .flat_map(|&m| {
                (0..n).map(move |s| Params {
                    m: Some(m),
                    ..with_s(s)
                })
            })
            .collect(),
        SchemeKind::Timeout => req
            .timeouts
            .iter()
            .map(|&t| Params {
                timeout: Some(t),
                ..Params::default()
            })
            .collect(),
        // K = ⌈n/2^j⌉ for j = 0, 1, …: n, then halving down to 1.
        SchemeKind::KAsync | SchemeKind::KBatchAsync => {
            let mut ks: Vec<usize> = (0..usize::BITS).map(|j| n.div_ceil(1 << j)).collect();
            ks.dedup();
            ks.into_iter()
                .map(|k| Params {
                    k: Some(k),
                    ..Params::default()
                })
                .collect()
        }
        SchemeKind::PartialFrc | SchemeKind::PartialCrc => req
            .parts
            .iter()
            .flat_map(|&l| {
                (0..n).map(move |s| Params {
                    parts: Some(l),
                    ..with_s(s)
                })
            })
            .collect(),
        SchemeKind::Polynomial | SchemeKind::MatDot | SchemeKind::Entangled => matmul_splits(kind, n),
        _ => (0..n).map(with_s).collect(),
    }
}

/// One split per product t = pq (p the largest divisor of t
/// up to √t), by falling load, then by rising k.
fn matmul_splits(kind: SchemeKind, n: usize) -> Vec<Params> {
    let root_divisor = |t: usize| (1..=t).filter(|d| t.is_multiple_of(*d) && d * d <= t).max().unwrap();
    let mut splits: Vec<(usize, usize, Params)> = Vec::new();
    for t in 1..=n {
        let p = root_divisor(t);
        for m in 1..=n {
            let params = match kind {
                SchemeKind::Polynomial if m == 1 => Params {
                    p: Some(p),
                    q: Some(t / p),
                    ..Params::default()
                },
                SchemeKind::MatDot if t == 1 => Params {
                    p: Some(m),
                    ..Params::default()
                },
                SchemeKind::Entangled if m >= 2 => Params {
                    p: Some(p),
                    q: Some(t / p),
                    m: Some(m),
                    ..Params::default()
                },
                _ => continue,
            };
            splits.push((t * m, t * m + m - 1, params));
        }
    }
    splits.sort_by_key(|&(work, k, _)| (work, k));
    splits.into_iter().map(|(_, _, p)| p).collect()
}

#[test]
fn divisors_in_order() {
    assert_eq!(divisors(1), [1]);
    assert_eq!(divisors(12), [1, 2, 3, 4, 6, 12]);
    assert_eq!(divisors(36), [1, 2, 3, 4, 6, 9, 12, 18, 36]);
    assert_eq!(divisors(97), [1, 97]);
    for n in 1..200 {
        let slow: Vec<usize> = (1..=n).filter(|d| n % d == 0).collect();
        assert_eq!(divisors(n), slow, "n={n}");
    }
}

#[test]
fn wilson_interval() {
    // 0 of 100: (0, 0.0370); 1 of 1: (0.2065, 1); p = 0.5, n = 100: about ±0.096.
    let (lo, hi) = proportion_ci(0.0, 100);
    assert!(lo.abs() < 1e-12 && (hi - 0.036_995).abs() < 1e-5);
    let (lo, hi) = proportion_ci(1.0, 1);
    assert!((lo - 0.206_549).abs() < 1e-5 && hi == 1.0);
    let (lo, hi) = proportion_ci(0.5, 100);
    assert!((lo - 0.403_832).abs() < 1e-5 && (hi - 0.596_168).abs() < 1e-5);
}

#[test]
fn objectives_parse() {
    assert_eq!("mean".parse::<Objective>().unwrap(), Objective::Mean);
    assert_eq!("p99".parse::<Objective>().unwrap(), Objective::Quantile(0.99));
    assert_eq!("deadline:2.5".parse::<Objective>().unwrap(), Objective::Deadline(2.5));
    assert!(
        "deadline:-1"
            .parse::<Objective>()
            .unwrap_err()
            .contains("finite number > 0")
    );
    assert!("p42".parse::<Objective>().unwrap_err().contains("accepted"));
    // Extreme deadlines print as written, not as 300 digits.
    for (text, shown) in [
        ("deadline:1e-300", "deadline:1e-300"),
        ("deadline:1e300", "deadline:1e300"),
        ("deadline:2.5", "deadline:2.5"),
    ] {
        assert_eq!(text.parse::<Objective>().unwrap().to_string(), shown);
    }
    let row = PlanRow {
        rank: 1,
        n: 4,
        k: 4,
        objective: 0.0,
        p99: 2.0,
        speedup: Some(1.0),
        ..row(SchemeKind::Uncoded, 0, 4, 1.0, 1.0)
    };
    let line = recommendation(&[row], &Objective::Deadline(1e-300)).unwrap();
    assert!(line.contains("P(T <= 1e-300) = 0.0000"), "{line}");
}

/// A row of `scheme` at n = 8 with the given s, k, load and mean.
fn row(scheme: SchemeKind, s: usize, k: usize, load: f64, mean: f64) -> PlanRow {
    PlanRow {
        rank: 0,
        n: 8,
        scheme,
        s,
        k,
        objective: mean,
        mean,
        p99: 2.0 * mean,
        speedup: Some(2.0 / mean),
        load,
        message: 1.0,
        method: "exact",
        // The name of a scheme that s builds (crc, frc, uncoded: those the
        // recommendations below name).
        configuration: Scheme::new(scheme, 8, Params::with_s(s)).map_or(String::new(), |c| c.to_string()),
        ..PlanRow::default()
    }
}

#[test]
fn uncoded_under_another_name_is_uncoded() {
    use SchemeKind::*;
    for (r, uncoded) in [
        (row(Uncoded, 0, 8, 1.0, 2.0), true),
        (row(Crc, 0, 8, 1.0, 2.0), true),
        (row(Frc, 0, 8, 1.0, 2.0), true),
        (row(Crc, 1, 7, 2.0, 2.0), false),
        (row(Mds, 0, 8, 1.0, 2.0), true),
        (row(Mds, 1, 7, 8.0 / 7.0, 2.0), false),
        (row(KBatchSync, 0, 8, 1.0, 2.0), true),
        (row(KAsync, 0, 8, 1.0, 2.0), false),
        (row(Timeout, 0, 8, 1.0, 2.0), false),
        (row(Ignore, 2, 6, 1.0, 2.0), false),
    ] {
        assert_eq!(r.is_uncoded(), uncoded, "{:?} s={} k={}", r.scheme, r.s, r.k);
    }
    let mut ce = row(CommEfficient, 0, 8, 2.0, 2.0);
    ce.m = Some(2);
    assert!(!ce.is_uncoded(), "comm-efficient s=0 m=2 does more work than uncoded");
}

#[test]
fn keep_uncoded_names_the_best_coded_option() {
    let rows = [
        row(SchemeKind::Crc, 0, 8, 1.0, 2.0),
        row(SchemeKind::Uncoded, 0, 8, 1.0, 2.0),
        row(SchemeKind::Frc, 1, 7, 2.0, 2.5),
        row(SchemeKind::Crc, 1, 7, 2.0, 3.0),
    ];
    let line = recommendation(&rows, &Objective::Mean).unwrap();
    assert!(
        line.starts_with("keep uncoded: no scheme within the limits is faster (n=8, mean 2.0000)"),
        "{line}"
    );
    assert!(
        line.contains("the best coded option, n=8 frc s=1, has mean 2.5000 (mean speedup 0.80x over uncoded)"),
        "{line}"
    );
    assert!(line.contains("computes 2.000x"), "{line}");
    let alone = recommendation(&rows[..2], &Objective::Quantile(0.99)).unwrap();
    assert!(alone.ends_with("no coded option fits within --max-load"), "{alone}");
    // A coded winner is recommended, with its costs in real units.
    let mut win = row(SchemeKind::Frc, 1, 7, 2.0, 1.0);
    (win.run_hours, win.gpu_hours, win.cost) = (Some(2.0), Some(16.0), Some(40.0));
    (win.storage_bytes, win.bytes_per_iteration) = (Some(3e9), Some(8e8));
    let line = recommendation(&[win.clone(), rows[1].clone()], &Objective::Mean).unwrap();
    assert!(
        line.starts_with("recommend: n=8 frc s=1: mean 1.0000, mean speedup 2.00x over uncoded"),
        "{line}"
    );
    assert!(
        line.ends_with(
            "; a run takes 2.00 h, 16.0 GPU-hours, cost 40.00; each worker stores 3.00GB; 800MB sent per iteration"
        ),
        "{line}"
    );
    win.objective = 40.0;
    let line = recommendation(&[win], &Objective::Cost).unwrap();
    assert!(
        line.contains("cost 40.00 per run (16.0 GPU-hours), mean speedup 2.00x"),
        "{line}"
    );
    assert!(
        line.contains("; a run takes 2.00 h; each worker stores 3.00GB"),
        "{line}"
    );
}
