//! `gcsim fit --nccl-tests` end to end on three published all_reduce_perf
//! outputs (`tests/data/nccl-tests/README.md` gives their sources), and its
//! errors.

use std::path::PathBuf;

use assert_cmd::Command;
use serde_json::Value;

fn gcsim() -> Command {
    Command::cargo_bin("gcsim").unwrap()
}

fn table(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/nccl-tests")
        .join(name)
}

/// The fit as JSON.
fn fit(name: &str, flags: &[&str]) -> Value {
    let out = gcsim()
        .args(["fit", "--nccl-tests"])
        .arg(table(name))
        .args(flags)
        .args(["--format", "json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{name}: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

fn close(x: f64, y: f64, rel: f64) -> bool {
    (x / y - 1.0).abs() <= rel
}

/// Every size of the three tables, out of place, fitted for the ring. The
/// expected values were computed once, independently, with numpy:
/// `W = 1/T**2; X = [1, S]; c0, c1 = solve(X.T @ (W*X), X.T @ (W*T))`,
/// α = c0/(2(p−1)), bandwidth = (2(p−1)/p)/c1, over the rows of size > 0
/// with T the out-of-place time in seconds.
#[test]
fn fits_the_published_tables_as_numpy_does() {
    for (name, ranks, latency, bandwidth) in [
        ("gh200-8ranks.txt", 8, 1.5891266526084548e-06, 86.82458617319318e9),
        (
            "k80-4ranks-old-format.txt",
            4,
            3.403747265436234e-05,
            2.549863059827439e9,
        ),
    ] {
        let f = fit(name, &[]);
        assert_eq!(f["ranks"], ranks, "{name}");
        assert_eq!(f["ranks_from"], "# Rank lines", "{name}");
        assert!(close(f["latency"].as_f64().unwrap(), latency, 1e-9), "{name}: {f}");
        assert!(close(f["bandwidth"].as_f64().unwrap(), bandwidth, 1e-9), "{name}: {f}");
    }
}

/// nccl-tests computes busbw = (S/t)·2(p−1)/p, the ring's b(p)·S/t. So
/// where the line fits, the bus bandwidth the fitted line predicts,
/// b·S/t̂, is the table's, and the ring's fitted bandwidth is at least the
/// largest busbw (the latency only lowers busbw), and equal to it once the
/// sizes are large enough for the latency to vanish (K80).
#[test]
fn the_ring_bandwidth_agrees_with_the_table_s_bus_bandwidth() {
    for (name, from, saturated) in [
        ("gh200-8ranks.txt", "32M", false),
        ("k80-4ranks-old-format.txt", "32M", true),
    ] {
        let f = fit(name, &["--min-size", from]);
        let b = f["b"].as_f64().unwrap();
        let bandwidth = f["bandwidth"].as_f64().unwrap() / 1e9;
        let rows = f["rows"].as_array().unwrap();
        assert!(rows.len() >= 3, "{name}: {f}");
        let mut largest: f64 = 0.0;
        for r in rows {
            let size = r["size_bytes"].as_f64().unwrap();
            let fitted_s = r["fitted_us"].as_f64().unwrap() * 1e-6;
            let busbw = r["busbw_gbps"].as_f64().unwrap();
            let predicted = b * size / fitted_s / 1e9;
            // 2% for the fit's residual; the table rounds busbw to 0.01.
            assert!(
                (predicted - busbw).abs() <= 0.02 * busbw + 0.005,
                "{name}: {r}: {predicted}"
            );
            largest = largest.max(busbw);
        }
        assert!(bandwidth >= 0.98 * largest, "{name}: {bandwidth} < {largest}");
        if saturated {
            assert!(close(bandwidth, largest, 0.02), "{name}: {bandwidth} vs {largest}");
        }
    }
}

#[test]
fn the_table_ends_with_the_flags_a_study_takes() {
    let out = gcsim()
        .args(["fit", "--nccl-tests"])
        .arg(table("k80-4ranks-old-format.txt"))
        .args(["--format", "table"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let stdout = String::from_utf8(out.stdout).unwrap();
    let last = stdout.lines().last().unwrap();
    assert_eq!(
        last,
        "flags: --aggregation ring --latency 3.404e-5 --bandwidth 2.55GB/s"
    );
    let bandwidth = last.rsplit(' ').next().unwrap();
    assert_eq!(gcsim::collective::parse_bandwidth(bandwidth), Ok(2.55e9));
    assert!(stdout.contains("7 of 7 rows"), "{stdout}");
}

#[test]
fn csv_has_a_row_per_size_and_the_flags_on_stderr() {
    let out = gcsim()
        .args(["fit", "--nccl-tests"])
        .arg(table("gh200-8ranks.txt"))
        .args(["--format", "csv", "--aggregation", "tree", "--in-place"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let csv = String::from_utf8(out.stdout).unwrap();
    let mut lines = csv.lines();
    assert_eq!(
        lines.next(),
        Some("size_bytes,time_us,fitted_us,relative_error,busbw_gbps")
    );
    assert_eq!(lines.count(), 25);
    assert!(csv.contains("\n8,17.72,"), "in-place time of 8 bytes: {csv}");
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(stderr.contains("flags: --aggregation tree --latency"), "{stderr}");
    assert!(
        stderr.contains("warning: the fitted line misses some sizes by up to"),
        "{stderr}"
    );
}

/// Each refusal: exit status 2 and one line naming what to change.
#[test]
fn refusals_are_one_line_naming_the_fix() {
    let dir = tempfile::tempdir().unwrap();
    let no_ranks = dir.path().join("no-ranks.txt");
    std::fs::write(
        &no_ranks,
        "#  size count type redop root time algbw busbw #wrong time algbw busbw #wrong\n\
         1024 256 float sum -1 20.0 0 0 0 20.0 0 0 0\n\
         1048576 262144 float sum -1 120.0 0 0 0 120.0 0 0 0\n",
    )
    .unwrap();
    let gh200 = table("gh200-8ranks.txt");
    let cases: Vec<(Vec<&std::ffi::OsStr>, &str)> = vec![
        (
            vec![no_ranks.as_os_str()],
            "no `#  Rank N ...` lines to count the ranks from; give the number of ranks with --ranks P",
        ),
        (
            vec![
                gh200.as_os_str(),
                "--aggregation".as_ref(),
                "hierarchical:gpus-per-node=4,intra-bandwidth=100GB/s".as_ref(),
            ],
            "hierarchical has two bandwidths",
        ),
        (
            vec![gh200.as_os_str(), "--aggregation".as_ref(), "butterfly".as_ref()],
            "unknown aggregation `butterfly`",
        ),
        (
            vec![gh200.as_os_str(), "--aggregation".as_ref(), "master".as_ref()],
            "master is not an all-reduce; accepted: ring, tree, halving-doubling",
        ),
        (
            vec![gh200.as_os_str(), "--ranks".as_ref(), "1".as_ref()],
            "accepted: --ranks 2 or more",
        ),
        (
            vec![gh200.as_os_str(), "--min-size".as_ref(), "1.5M".as_ref()],
            "accepted: a whole number of bytes",
        ),
        (
            vec![
                gh200.as_os_str(),
                "--min-size".as_ref(),
                "2M".as_ref(),
                "--max-size".as_ref(),
                "1M".as_ref(),
            ],
            "--min-size 2097152 is above --max-size 1048576",
        ),
        (
            vec![gh200.as_os_str(), "--min-size".as_ref(), "1G".as_ref()],
            "0 size(s) above 0 bytes within --min-size and --max-size",
        ),
        (vec!["missing.txt".as_ref()], "missing.txt: cannot read"),
    ];
    for (args, expected) in cases {
        let out = gcsim().args(["fit", "--nccl-tests"]).args(&args).output().unwrap();
        let stderr = String::from_utf8(out.stderr).unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(expected), "{args:?}: {stderr}");
        assert_eq!(
            stderr
                .lines()
                .filter(|l| l.starts_with("Error") || l.starts_with("error"))
                .count(),
            1,
            "{stderr}"
        );
    }
}

/// The fit's flags belong to --nccl-tests, and a trace FILE excludes it.
#[test]
fn the_fit_flags_need_the_table() {
    for (args, expected) in [
        (
            vec!["fit", "data/trace-llm-8w.csv", "--ranks", "8"],
            "--ranks applies to an all-reduce fit",
        ),
        (
            vec!["fit", "data/trace-llm-8w.csv", "--in-place"],
            "--in-place applies to an all-reduce fit",
        ),
        (
            vec!["fit", "data/trace-llm-8w.csv", "--nccl-tests", "x.txt"],
            "cannot be used with",
        ),
        (vec!["fit"], "the following required arguments were not provided"),
    ] {
        let out = gcsim().args(&args).output().unwrap();
        let stderr = String::from_utf8(out.stderr).unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(stderr.contains(expected), "{args:?}: {stderr}");
    }
}
