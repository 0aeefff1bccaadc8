//! All-reduce collectives (`--aggregation`): the exact uncoded law of the
//! issue, bucketing against an event simulation written here another way,
//! the two limits of bucketing, and every refusal.

use assert_cmd::Command;
use rand::SeedableRng;
use rand_distr::{Distribution, Exp1};
use rand_xoshiro::Xoshiro256PlusPlus;

fn gcsim() -> Command {
    Command::cargo_bin("gcsim").unwrap()
}

/// The CSV rows of `args` as (header, rows).
pub(crate) fn csv(args: &[&str]) -> (Vec<String>, Vec<Vec<String>>) {
    let out = gcsim().args(args).args(["--format", "csv"]).output().unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let mut lines = text.lines().map(|l| l.split(',').map(String::from).collect::<Vec<_>>());
    (lines.next().unwrap(), lines.collect())
}

pub(crate) fn column(header: &[String], row: &[String], name: &str) -> f64 {
    let i = header
        .iter()
        .position(|h| h == name)
        .unwrap_or_else(|| panic!("no column {name}"));
    row[i].parse().unwrap_or_else(|_| panic!("{name} = `{}`", row[i]))
}

/// The command: 64 exponential workers, a ring all-reduce of 1 GB
/// at 100 GB/s with α = 5 µs: H₆₄ + 2·63·5e-6 + 2·(63/64)·0.01.
#[test]
fn the_uncoded_ring_has_its_exact_mean() {
    let (h, rows) = csv(&[
        "run",
        "--n",
        "64",
        "--scheme",
        "uncoded",
        "--aggregation",
        "ring",
        "--gradient-size",
        "1GB",
        "--bandwidth",
        "100GB/s",
        "--latency",
        "5e-6",
        "--time-unit",
        "s",
        "--dist",
        "exp:rate=1",
        "--analytic",
    ]);
    let harmonic: f64 = (1..=64).map(|i| 1.0 / i as f64).sum();
    let exact = harmonic + 2.0 * 63.0 * 5e-6 + 2.0 * (63.0 / 64.0) * 0.01;
    let mean = column(&h, &rows[0], "mean");
    assert!((mean - exact).abs() < 1e-12 * exact, "{mean} vs {exact}");
    assert_eq!(column(&h, &rows[0], "participants"), 64.0);
    let cost = column(&h, &rows[0], "collective_time");
    assert!((cost - (exact - harmonic)).abs() < 1e-15, "{cost}");
    assert_eq!(rows[0][h.iter().position(|c| c == "aggregation").unwrap()], "ring");
}

/// A ring's α–β time among p ranks, written here from Patarasuk & Yuan (2009).
pub(crate) fn ring(p: usize, bytes: f64, alpha: f64, bandwidth: f64) -> f64 {
    if p <= 1 {
        return 0.0;
    }
    2.0 * (p - 1) as f64 * alpha + 2.0 * (p - 1) as f64 / p as f64 * bytes / bandwidth
}

/// One bucketed iteration as events: each of the first `p` ranks to finish
/// produces bucket j at its time × j/K; bucket j's collective (an
/// agreement among the p where p < n, then the sum of S/K bytes) starts
/// when all p have produced it and bucket j − 1's has ended. Returns the
/// iteration's end and the first collective's start.
fn bucketed(times: &mut [f64], p: usize, k: usize, alpha: f64, bandwidth: f64, bytes: f64) -> (f64, f64) {
    let n = times.len();
    times.sort_by(f64::total_cmp);
    let participants = &times[..p];
    let agreement = if p < n { ring(p, 0.0, alpha, bandwidth) } else { 0.0 };
    let mut end = f64::NEG_INFINITY;
    let mut first_start = None;
    for j in 1..=k {
        let produced = participants
            .iter()
            .map(|t| t * j as f64 / k as f64)
            .fold(f64::NEG_INFINITY, f64::max);
        let start = produced.max(end);
        first_start.get_or_insert(start);
        end = start + agreement + ring(p, bytes / k as f64, alpha, bandwidth);
    }
    (end, first_start.unwrap())
}

/// Bucketing under uncoded and ignore against the event simulation above,
/// on its own draws: the means agree within 4 standard errors of their
/// difference, and so do the collective's times (gcsim counts those over
/// the first 20 000 trials).
#[test]
fn buckets_agree_with_an_event_simulation() {
    let (n, k, alpha, bandwidth, bytes) = (16, 4, 1e-3, 1e9, 4e8);
    let trials = 40_000;
    let (h, rows) = csv(&[
        "sweep",
        "--n",
        "16",
        "--scheme",
        "uncoded,ignore",
        "--s",
        "3",
        "--aggregation",
        "ring",
        "--latency",
        "1e-3",
        "--bandwidth",
        "1GB/s",
        "--gradient-size",
        "400MB",
        "--buckets",
        "4",
        "--time-unit",
        "s",
        "--trials",
        "40000",
        "--seed",
        "5",
    ]);
    for (row, p) in rows.iter().zip([n, n - 3]) {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(99);
        let (mut sum, mut sq, mut coll) = (0.0, 0.0, 0.0);
        for _ in 0..trials {
            let mut times: Vec<f64> = (0..n).map(|_| Exp1.sample(&mut rng)).collect();
            let (end, start) = bucketed(&mut times, p, k, alpha, bandwidth, bytes);
            sum += end;
            sq += end * end;
            coll += end - start;
        }
        let mean = sum / trials as f64;
        let se = ((sq / trials as f64 - mean * mean) / trials as f64).sqrt();
        let (sim, sim_se) = (column(&h, row, "mean"), column(&h, row, "std_err"));
        let z = (sim - mean) / (se * se + sim_se * sim_se).sqrt();
        assert!(z.abs() < 4.0, "p={p}: gcsim {sim} vs events {mean} (z {z})");
        let collective = coll / trials as f64;
        let reported = column(&h, row, "collective_time");
        assert!(
            (reported - collective).abs() < 0.03 * collective,
            "p={p}: collective_time {reported} vs events {collective}"
        );
        assert_eq!(column(&h, row, "participants"), p as f64);
    }
}

/// Bucketing's limits: one bucket is the rule's time plus one collective
/// (the exact law, beside the simulation); a collective that costs nothing
/// gives the master's times, byte for byte.
#[test]
fn bucketing_limits() {
    let base = [
        "sweep",
        "--n",
        "20",
        "--scheme",
        "uncoded,ignore,frc",
        "--s",
        "1,4",
        "--trials",
        "5000",
    ];
    let (h, master) = csv(&base);
    let (hz, free) = csv(&[
        &base[..],
        &[
            "--aggregation",
            "tree",
            "--latency",
            "0",
            "--bandwidth",
            "1e30",
            "--gradient-size",
            "1",
            "--buckets",
            "7",
            "--time-unit",
            "s",
        ],
    ]
    .concat());
    assert_eq!(master.len(), free.len());
    for (m, f) in master.iter().zip(&free) {
        for col in ["mean", "p50", "p99", "speedup"] {
            assert_eq!(column(&h, m, col), column(&hz, f, col), "{col}");
        }
    }
    let (h1, one) = csv(&[
        &base[..],
        &[
            "--aggregation",
            "halving-doubling",
            "--bandwidth",
            "1GB/s",
            "--gradient-size",
            "1GB",
            "--time-unit",
            "s",
        ],
    ]
    .concat());
    let frc = one.iter().find(|r| r[0] == "frc" && r[2] == "1").expect("frc s=1");
    // frc sums the first of each of its 10 pairs. Halving-doubling on 10 ranks
    // (p' = 8): an agreement of (2·3 + 2)·α, then (2·3 + 2)·α + (2·7/8 + 2)·S·β.
    assert_eq!(column(&h1, frc, "participants"), 10.0);
    let hand = 8.0 * 5e-6 + 8.0 * 5e-6 + (2.0 * 7.0 / 8.0 + 2.0) * 1.0;
    assert!((column(&h1, frc, "collective_time") - hand).abs() < 1e-12);
    for (m, o) in master.iter().zip(&one) {
        let shift = column(&h1, o, "collective_time");
        assert!(shift > 1.0, "a 1 GB sum at 1 GB/s takes over a second");
        assert!((column(&h1, o, "mean") - column(&h, m, "mean") - shift).abs() < 1e-9);
        assert!((column(&h1, o, "analytic_mean") - column(&h, m, "analytic_mean") - shift).abs() < 1e-9);
    }
}

/// What a collective needs, and what does not go with one, each refused in
/// one line naming the flag.
#[test]
fn refusals_name_the_flag() {
    let ring = [
        "--aggregation",
        "ring",
        "--bandwidth",
        "25GB/s",
        "--gradient-size",
        "1GB",
        "--time-unit",
        "s",
    ];
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            vec!["--aggregation", "ring"],
            "--aggregation ring sums gradients in real time: give --bandwidth",
        ),
        (
            vec!["--aggregation", "ring", "--bandwidth", "1GB/s"],
            "give --gradient-size",
        ),
        (
            vec![
                "--aggregation",
                "ring",
                "--bandwidth",
                "1GB/s",
                "--gradient-size",
                "1GB",
            ],
            "give --time-unit",
        ),
        (
            vec!["--latency", "1e-5"],
            "--latency describes an all-reduce collective: give --aggregation",
        ),
        (vec!["--buckets", "4"], "--buckets describes an all-reduce collective"),
        (vec!["--aggregation", "rings"], "unknown aggregation `rings`"),
        (vec!["--aggregation", "ring,tree"], "plan compares several"),
        (vec!["--bandwidth", "25GB"], "unknown unit `GB`"),
        ([&ring[..], &["--buckets", "0"]].concat(), "--buckets 0 is out of range"),
        (
            [&ring[..], &["--latency", "-1"]].concat(),
            "--latency -1 is out of range",
        ),
        (
            [&ring[..], &["--scheme", "k-async", "--k", "3"]].concat(),
            "k-async has no sum over a set of participants",
        ),
        (
            [&ring[..], &["--scheme", "speculative"]].concat(),
            "speculative has no sum",
        ),
        (
            [&ring[..], &["--scheme", "polynomial", "--p", "2", "--q", "2"]].concat(),
            "gathered at a master",
        ),
        (
            [&ring[..], &["--decoder", "rank"]].concat(),
            "--decoder rank decodes at a master",
        ),
        (
            [&ring[..], &["--comm-time", "0.1"]].concat(),
            "--comm-time and --comm-dist are transfers to a master",
        ),
        (
            [&ring[..], &["--link", "shared"]].concat(),
            "--link shared is the master's link",
        ),
        (
            [&ring[..], &["--decode-time", "0.1"]].concat(),
            "--decode-time is the master's decoding",
        ),
    ];
    for (extra, says) in cases {
        let mut args = vec!["run", "--n", "12", "--trials", "100"];
        if !extra.contains(&"--scheme") {
            args.extend(["--scheme", "crc", "--s", "2"]);
        }
        args.extend(&extra);
        let out = gcsim().args(&args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        // The message on the first line (clap adds a line pointing to --help).
        assert!(err.lines().next().unwrap_or("").contains(says), "{args:?}: {err}");
    }
}

/// `plan --aggregation ring,tree` ranks each candidate under both: a
/// scheme's exact mean differs between them by the difference of its
/// collectives' costs (`run` gives each), and a sharded plan merges to the
/// single plan's bytes.
#[test]
fn plan_compares_aggregations() {
    let common = [
        "--n",
        "16,32",
        "--bandwidth",
        "10GB/s",
        "--gradient-size",
        "1GB",
        "--time-unit",
        "s",
        "--dist",
        "exp:rate=2,p_slow=0.05,slowdown=8",
    ];
    let (h, rows) = csv(&[&["plan", "--aggregation", "ring,tree"][..], &common[..]].concat());
    let col = |name: &str| h.iter().position(|c| c == name).unwrap();
    let named = |r: &Vec<String>, a: &str, scheme: &str, s: &str, n: &str| {
        r[col("aggregation")] == a && r[col("scheme")] == scheme && r[col("s")] == s && r[col("n")] == n
    };
    for (scheme, s) in [("uncoded", "0"), ("frc", "1")] {
        let ring = rows
            .iter()
            .find(|r| named(r, "ring", scheme, s, "32"))
            .expect("a ring row");
        let tree = rows
            .iter()
            .find(|r| named(r, "tree", scheme, s, "32"))
            .expect("a tree row");
        let run = |a: &str| {
            let (rh, rr) = csv(&[
                "run",
                "--n",
                "32",
                "--scheme",
                scheme,
                "--s",
                s,
                "--aggregation",
                a,
                "--bandwidth",
                "10GB/s",
                "--gradient-size",
                "1GB",
                "--time-unit",
                "s",
                "--dist",
                "exp:rate=2,p_slow=0.05,slowdown=8",
                "--load-model",
                "scaled",
                "--analytic",
            ]);
            (column(&rh, &rr[0], "mean"), column(&rh, &rr[0], "collective_time"))
        };
        let ((ring_mean, ring_cost), (tree_mean, tree_cost)) = (run("ring"), run("tree"));
        assert!((column(&h, ring, "mean") - ring_mean).abs() < 1e-12);
        assert!((column(&h, tree, "mean") - tree_mean).abs() < 1e-12);
        assert!((tree_mean - ring_mean - (tree_cost - ring_cost)).abs() < 1e-12);
    }
    // Sharded by cluster size: the merge is the single plan.
    let dir = std::env::temp_dir().join(format!("gcsim-plan-collective-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let single = gcsim()
        .args(
            [
                &["plan", "--aggregation", "ring,tree", "--format", "csv"][..],
                &common[..],
            ]
            .concat(),
        )
        .output()
        .unwrap();
    let mut parts = Vec::new();
    for i in 1..=2 {
        let part = dir.join(format!("p{i}.json"));
        let shard = format!("{i}/2");
        let status = gcsim()
            .args(
                [
                    &[
                        "plan",
                        "--aggregation",
                        "ring,tree",
                        "--shard",
                        &shard,
                        "--out",
                        part.to_str().unwrap(),
                    ][..],
                    &common[..],
                ]
                .concat(),
            )
            .output()
            .unwrap();
        assert!(status.status.success(), "{}", String::from_utf8_lossy(&status.stderr));
        parts.push(part);
    }
    let merged = gcsim()
        .arg("merge")
        .args(&parts)
        .args(["--format", "csv"])
        .output()
        .unwrap();
    assert!(merged.status.success(), "{}", String::from_utf8_lossy(&merged.stderr));
    assert_eq!(
        String::from_utf8_lossy(&merged.stdout),
        String::from_utf8_lossy(&single.stdout)
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A figure of a collective names it, and its buckets, in the caption.
#[test]
fn figures_name_the_collective() {
    let dir = std::env::temp_dir().join(format!("gcsim-collective-figure-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for (extra, says) in [
        (&["--buckets", "25"][..], "all-reduce ring in 25 buckets"),
        (&[][..], "all-reduce ring   "),
    ] {
        let svg = dir.join("f.svg");
        let out = gcsim()
            .args([
                "run",
                "--n",
                "16",
                "--scheme",
                "crc",
                "--s",
                "2",
                "--trials",
                "2000",
                "--aggregation",
                "ring",
            ])
            .args([
                "--bandwidth",
                "1GB/s",
                "--gradient-size",
                "100MB",
                "--time-unit",
                "s",
                "--quiet",
            ])
            .args(extra)
            .args(["--format", "csv", "--plot", svg.to_str().unwrap()])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let text = std::fs::read_to_string(&svg).unwrap();
        assert!(text.contains(says), "the caption does not say `{says}`");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
