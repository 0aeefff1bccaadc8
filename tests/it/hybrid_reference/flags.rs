//! The reference's job from the flags a test also hands to gcsim, so that
//! both sides simulate one job by construction. Only the flags the
//! comparison tests use are read; any other panics.

use super::{Job, Law, Ring, Schedule, Scheme};

impl Job {
    /// D × P × T ranks, M microbatches, exponential(1) ranks, uncoded, and
    /// the model's defaults: R = 2, τ = 0, unit stage and microbatch work,
    /// no collective (one bucket), no optimizer time.
    pub fn new(dp: usize, pp: usize, tp: usize, microbatches: usize, schedule: Schedule) -> Job {
        Job {
            dp,
            pp,
            tp,
            microbatches,
            schedule,
            backward_ratio: 2.0,
            p2p: 0.0,
            stage_work: vec![1.0; pp],
            microbatch_work: None,
            worker: Law::parse("exp:rate=1").0,
            stragglers: None,
            scheme: Scheme::Uncoded,
            ring: None,
            buckets: 1,
            optimizer: 0.0,
        }
    }

    /// The job `gcsim run` runs with these flags (`--parallel`,
    /// `--microbatches` and `--schedule` required; a scheme's `--s` after
    /// its `--scheme`; the collective's sizes as bytes and bytes per second,
    /// bare or in decimal units (`2GB`, `1GB/s`), with `--time-unit s`;
    /// `--buckets` only with the ring).
    pub fn from_flags(flags: &[&str]) -> Job {
        let value = |name: &str| flags.iter().position(|f| *f == name).map(|i| flags[i + 1]);
        let number = |name: &str| value(name).map(|v| v.parse::<f64>().unwrap_or_else(|_| panic!("{name} {v}")));
        let (mut dp, mut pp, mut tp) = (1, 1, 1);
        for kv in value("--parallel").expect("--parallel").split(',') {
            let (k, v) = kv.split_once('=').unwrap();
            let v: usize = v.parse().unwrap();
            match k {
                "dp" => dp = v,
                "pp" => pp = v,
                "tp" => tp = v,
                other => panic!("--parallel {other}"),
            }
        }
        let microbatches = number("--microbatches").expect("--microbatches") as usize;
        let schedule = match value("--schedule").expect("--schedule") {
            "gpipe" => Schedule::Gpipe,
            "1f1b" => Schedule::OneFOneB,
            other => match other.strip_prefix("interleaved:") {
                Some(v) => Schedule::Interleaved(v.parse().unwrap_or_else(|_| panic!("--schedule {other}"))),
                None => panic!("--schedule {other}"),
            },
        };
        let mut job = Job::new(dp, pp, tp, microbatches, schedule);
        let known = [
            "--parallel",
            "--microbatches",
            "--schedule",
            "--backward-ratio",
            "--p2p-time",
            "--stage-work",
            "--microbatch-work",
            "--dist",
            "--scheme",
            "--s",
            "--aggregation",
            "--gradient-size",
            "--bandwidth",
            "--latency",
            "--time-unit",
            "--optimizer-time",
            "--buckets",
            "--timeout",
        ];
        for f in flags.iter().step_by(2) {
            assert!(known.contains(f), "the reference does not read {f}");
        }
        job.backward_ratio = number("--backward-ratio").unwrap_or(2.0);
        job.p2p = number("--p2p-time").unwrap_or(0.0);
        job.optimizer = number("--optimizer-time").unwrap_or(0.0);
        if let Some(w) = value("--stage-work") {
            job.stage_work = w.split(',').map(|x| x.parse().unwrap()).collect();
            assert_eq!(job.stage_work.len(), pp, "--stage-work needs one value per stage");
        }
        if let Some(law) = value("--microbatch-work") {
            let (law, stragglers) = Law::parse(law);
            assert!(stragglers.is_none(), "a microbatch's work has no stragglers");
            job.microbatch_work = Some(law);
        }
        if let Some(law) = value("--dist") {
            (job.worker, job.stragglers) = Law::parse(law);
        }
        let s = number("--s").map(|s| s as usize);
        job.scheme = match value("--scheme").unwrap_or("uncoded") {
            "uncoded" => Scheme::Uncoded,
            "ignore" => Scheme::Ignore(s.expect("--s")),
            "crc" => Scheme::Crc(s.expect("--s")),
            "frc" => Scheme::Frc(s.expect("--s")),
            "timeout" => Scheme::Timeout(number("--timeout").expect("--timeout")),
            other => panic!("the reference has no scheme {other}"),
        };
        job.ring = value("--aggregation").map(|a| {
            assert_eq!(a, "ring", "the reference's only collective is the ring");
            assert_eq!(
                value("--time-unit"),
                Some("s"),
                "the reference's collective is in seconds"
            );
            let bandwidth = value("--bandwidth").expect("--bandwidth");
            Ring {
                bytes: bytes(value("--gradient-size").expect("--gradient-size")),
                bandwidth: bytes(bandwidth.strip_suffix("/s").unwrap_or(bandwidth)),
                latency: number("--latency").expect("--latency"),
            }
        });
        if let Some(k) = value("--buckets") {
            assert!(job.ring.is_some(), "the reference's buckets are the ring's");
            job.buckets = k.parse().unwrap_or_else(|_| panic!("--buckets {k}"));
            assert!(job.buckets >= 1, "--buckets {k}");
        }
        job
    }
}

/// Bytes from a bare number or one with a decimal unit: `2e9`, `2GB`, `500MB`.
fn bytes(text: &str) -> f64 {
    let units = [("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("kB", 1e3), ("B", 1.0)];
    let (number, scale) = units
        .iter()
        .find_map(|&(unit, scale)| text.strip_suffix(unit).map(|n| (n, scale)))
        .unwrap_or((text, 1.0));
    number
        .parse::<f64>()
        .unwrap_or_else(|_| panic!("the reference reads no size {text}"))
        * scale
}
