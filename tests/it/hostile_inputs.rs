//! Hostile inputs, as a new user tries them from `--help` alone: each
//! command either works or fails with one clear line (naming the flag, key,
//! file or row and what is accepted) and the right exit status, never a
//! panic, an abort or a silently wrong number. Table-driven: a case is its
//! arguments, its expected exit status and a string its error line holds.

use std::path::Path;

use assert_cmd::Command;

/// One hostile command: `args`, the exit status it must end with, and a
/// string its one error line must hold (empty for a success).
struct Case {
    args: &'static [&'static str],
    code: i32,
    says: &'static str,
}

const fn case(args: &'static [&'static str], code: i32, says: &'static str) -> Case {
    Case { args, code, says }
}

/// The message lines of stderr: clap's format adds a blank line, a
/// `Usage:` line and a `For more information` hint to its one error line.
fn message_lines(stderr: &str) -> Vec<&str> {
    stderr
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with("Usage:") && !l.starts_with("For more information"))
        .collect()
}

/// Runs every case in `dir`, checking its status, that it did not panic or
/// abort, and that a failure is one line holding its string. Returns the
/// number of cases run.
fn run_cases(cases: &[Case], dir: &Path) -> usize {
    for c in cases {
        let out = Command::cargo_bin("gcsim")
            .unwrap()
            .current_dir(dir)
            .args(c.args)
            .timeout(std::time::Duration::from_secs(120))
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(c.code), "{:?}: {stderr}", c.args);
        assert!(
            !stderr.contains("panicked") && !stderr.contains("memory allocation"),
            "{:?}: {stderr}",
            c.args
        );
        if c.code != 0 {
            let lines = message_lines(&stderr);
            assert_eq!(lines.len(), 1, "{:?}: not one line: {stderr}", c.args);
            assert!(
                lines[0].contains(c.says),
                "{:?}: {:?} lacks {:?}",
                c.args,
                lines[0],
                c.says
            );
            assert!(lines[0].len() < 1000, "{:?}: a long line: {}", c.args, lines[0].len());
        }
    }
    cases.len()
}

const CRC: [&str; 6] = ["run", "--n", "20", "--scheme", "crc", "--s"];

/// Crashes of the first release: each refused or computed.
#[rustfmt::skip]
const CRASHES: &[Case] = &[
    case(&["run", "--n", "2000", "--scheme", "k-async", "--k", "100", "--trials", "2"], 0, ""),
    case(&["run", "--n", "3000", "--scheme", "k-async", "--k", "10", "--trials", "2"], 0, ""),
    case(&["run", "--n", "1000000", "--scheme", "k-async", "--k", "100", "--trials", "2"], 0, ""),
    case(&["run", "--n", "100000", "--scheme", "k-async", "--s", "99000", "--trials", "2"], 0, ""),
    case(&["sweep", "--n", "5000", "--scheme", "k-async", "--k", "10,100", "--trials", "2"], 0, ""),
    case(&["run", "--n", "20", "--scheme", "crc", "--s", "2", "--dist", "weibull:scale=1,shape=1e-320"], 2, "`shape=1e-320` is out of range; accepted: a number from 0.05"),
    case(&["run", "--n", "20", "--scheme", "crc", "--s", "2", "--comm-dist", "weibull:scale=1,shape=1e-309"], 2, "`shape=1e-309` is out of range"),
    case(&["run", "--workers", "10:weibull:scale=1,shape=1e-310", "--scheme", "crc", "--s", "2"], 2, "shape=1e-310"),
    case(&["run", "--workers", "18446744073709551615:exp:rate=1", "--workers", "2:exp:rate=1", "--scheme", "crc", "--s", "2"], 2, "--workers classes add up to more than the limit"),
    case(&["run", "--workers", "9223372036854775808:exp:rate=1", "--workers", "9223372036854775808:exp:rate=1", "--scheme", "crc", "--s", "2"], 2, "more than the limit of 16777216"),
    case(&["run", "--workers", "1e18:exp:rate=1", "--scheme", "crc", "--s", "2"], 2, "more than the limit of 16777216"),
    case(&["run", "--workers", "5000000000:exp:rate=1", "--scheme", "crc", "--s", "1"], 2, "the --workers classes add up to more than the limit"),
    case(&["run", "--n", "10000", "--scheme", "multi-message", "--s", "9900", "--trials", "20"], 2, "messages per trial, more than the limit"),
    case(&["trace", "import", "--from", "csv", "/dev/zero"], 2, "a line longer than 1 MiB"),
    case(&["fit", "/dev/zero"], 2, "/dev/zero: cannot read the trace: a line longer than 1 MiB"),
    case(&["trace", "/dev/zero"], 2, "a line longer than 1 MiB"),
];

/// Answers that were silently wrong: refused now, or corrected.
#[rustfmt::skip]
const WRONG_ANSWERS: &[Case] = &[
    case(&["run", "--n", "20", "--scheme", "crc", "--s", "2", "--dist", "weibull:scale=1,shape=1e-4"], 2, "accepted: a number from 0.05 to 1e100"),
    case(&["run", "--n", "20", "--scheme", "crc", "--s", "2", "--dist", "weibull:scale=1,shape=1e-300"], 2, "`shape=1e-300`"),
    case(&["run", "--n", "20", "--scheme", "crc", "--s", "2", "--dist", "pareto:scale=1,shape=0.005"], 2, "accepted: a number from 0.1 to 1e100"),
    case(&["run", "--n", "20", "--scheme", "crc", "--s", "2", "--dist", "weibull:scale=1e100,shape=0.05"], 0, ""),
    case(&["run", "--n", "20", "--scheme", "crc", "--s", "2", "--dist", "pareto:scale=1e100,shape=0.1"], 0, ""),
    case(&["plan", "--n", "20", "--dist", "weibull:scale=1,shape=1e-4"], 2, "shape=1e-4"),
    case(&["run", "--n", "20", "--scheme", "ignore", "--s", "2", "--decoder", "rank"], 2, "--decoder rank does not act on ignore"),
    case(&["run", "--n", "20", "--scheme", "timeout", "--timeout", "2", "--decoder", "rank"], 2, "--decoder rank does not act on timeout"),
    case(&["run", "--n", "20", "--scheme", "speculative", "--decoder", "rank"], 2, "does not act on speculative"),
    case(&["run", "--n", "20", "--scheme", "crc", "--s", "2", "--decoder", "rank", "--generator", "vandermonde"], 2, "--generator chooses the code of comm-efficient and mds; crc has one code"),
    case(&["run", "--n", "20", "--scheme", "crc", "--s", "2", "--generator", "vandermonde"], 2, "--generator chooses the code of comm-efficient and mds; crc has one code: drop --generator"),
    case(&["sweep", "--n", "20", "--scheme", "crc,mds", "--s", "2", "--decoder", "rank", "--generator", "vandermonde", "--trials", "100"], 0, ""),
    case(&["run", "--code", "zero.csv", "--scheme", "custom"], 2, "rank-deficient"),
    case(&["run", "--code", "huge.csv", "--scheme", "custom"], 2, "an entry of magnitude 1e308"),
    case(&["run", "--code", "deficient.csv", "--scheme", "custom"], 2, "does not decode even from all 3 workers"),
    case(&["run", "--n", "20", "--scheme", "crc", "--s", "2", "--trials", "2"], 0, ""),
    case(&["sweep", "--n", "20", "--scheme", "crc", "--s", "0..3", "--analytic", "--shard", "1/2", "--out", "a.json"], 2, "--shard and --analytic do not go together: --analytic runs no trials and computes a whole sweep in about a second"),
    case(&["run", "--n", "20", "--scheme", "crc", "--s", "2", "--analytic", "--shard", "2/3", "--out", "b.json"], 2, "run it once, without --shard"),
    case(&["run", "--n", "20", "--scheme", "crc", "--s", "2", "--trials", "10"], 0, ""),
];

/// Numbers as people write them, and every numeric flag's message.
#[rustfmt::skip]
const NUMBERS: &[Case] = &[
    case(&[CRC[0], CRC[1], CRC[2], CRC[3], CRC[4], CRC[5], "2", "--comm-time", "-inf"], 2, "--comm-time -inf is out of range; accepted: a number from 0 to 1e100"),
    case(&[CRC[0], CRC[1], CRC[2], CRC[3], CRC[4], CRC[5], "2", "--comm-time", "-1e-320"], 2, "--comm-time -1e-320 is out of range"),
    case(&[CRC[0], CRC[1], CRC[2], CRC[3], CRC[4], CRC[5], "2", "--comm-time", "0x10"], 2, "`0x10` is not a number; accepted: a number from 0 to 1e100"),
    case(&[CRC[0], CRC[1], CRC[2], CRC[3], CRC[4], CRC[5], "2", "--comm-time", ""], 2, "`` is not a number; accepted"),
    case(&[CRC[0], CRC[1], CRC[2], CRC[3], CRC[4], CRC[5], "2", "--comm-time", " 5"], 0, ""),
    case(&[CRC[0], CRC[1], CRC[2], CRC[3], CRC[4], CRC[5], "2", "--comm-time", "1_000.5"], 0, ""),
    case(&[CRC[0], CRC[1], CRC[2], CRC[3], CRC[4], CRC[5], "2", "--decode-time", "-5"], 2, "--decode-time -5 is out of range"),
    case(&[CRC[0], CRC[1], CRC[2], CRC[3], CRC[4], CRC[5], "2", "--decode-time", "0x10"], 2, "for '--decode-time <D>': `0x10` is not a number"),
    case(&[CRC[0], CRC[1], CRC[2], CRC[3], CRC[4], CRC[5], "2", "--load-model", "affine", "--unit-time", "''"], 2, "is not a number; accepted: a number from 0 to 1e100"),
    case(&[CRC[0], CRC[1], CRC[2], CRC[3], CRC[4], CRC[5], "2", "--gpu-hour-price", "-1e-320"], 2, "--gpu-hour-price -1e-320 is out of range; accepted: a finite number >= 0"),
    case(&[CRC[0], CRC[1], CRC[2], CRC[3], CRC[4], CRC[5], "2", "--gpu-hour-price", "0x10"], 2, "accepted: a finite number >= 0"),
    case(&["plan", "--n", "20", "--max-load", "1e-320"], 2, "--max-load 1e-320 is out of range; accepted: a number >= 1"),
    case(&["plan", "--n", "20", "--max-load", "-inf"], 2, "--max-load -inf is out of range"),
    case(&["plan", "--n", "20", "--max-load", " "], 2, "is not a number; accepted: a number >= 1"),
    case(&["run", "--n", "20", "--scheme", "speculative", "--speculate-factor", "1e300"], 2, "--speculate-factor 1e300 is out of range"),
    case(&["run", "--n", "20", "--scheme", "speculative", "--speculate-after", "-0.5"], 2, "--speculate-after -0.5 is out of range"),
    case(&["run", "--n", "20", "--scheme", "timeout", "--timeout", "-inf"], 2, "--timeout -inf is out of range"),
    case(&[CRC[0], CRC[1], CRC[2], CRC[3], CRC[4], CRC[5], "2", "--plot", "a.png", "--dpi", "-5"], 2, "`-5` is negative; accepted: a whole number from 30 to 1200"),
    case(&[CRC[0], CRC[1], CRC[2], CRC[3], CRC[4], CRC[5], "2", "--plot", "a.png", "--font-size", "-inf"], 2, "`-inf` is out of range; accepted: a number of points"),
    case(&[CRC[0], CRC[1], CRC[2], CRC[3], CRC[4], CRC[5], "2", "--trials", "1e3"], 0, ""),
    case(&["run", "--n", "2e1", "--scheme", "crc", "--s", "2"], 0, ""),
    case(&[CRC[0], CRC[1], CRC[2], CRC[3], CRC[4], CRC[5], "2", "--shard", "1/1e6", "--trials", "1e6", "--out", "s.json"], 0, ""),
    case(&[CRC[0], CRC[1], CRC[2], CRC[3], CRC[4], CRC[5], "2", "--shard", "1/1e6", "--trials", "1e5", "--out", "t.json"], 2, "--shard 1/1000000: 100000 trials split into at most 100000 shards"),
    case(&[CRC[0], CRC[1], CRC[2], CRC[3], CRC[4], CRC[5], "2", "--shard", "1/x"], 2, "`1/x` is not I/K with whole numbers"),
    case(&["train", "--data", "synthetic:rows=1e2", "--n", "4", "--scheme", "crc", "--s", "1", "--repeats", "1", "--iterations", "2"], 0, ""),
    case(&["train", "--data", "synthetic:rows=1.5", "--n", "4", "--scheme", "crc", "--s", "1"], 2, "`rows=1.5` is not a number"),
    case(&["train", "--data", "synthetic:rows=100", "--n", "4", "--scheme", "crc", "--s", "1", "--step", "-1e-320"], 2, "--step -1e-320 is out of range"),
    case(&["train", "--data", "synthetic:rows=100", "--n", "4", "--scheme", "crc", "--s", "1", "--l2", "0x1"], 2, "accepted: a finite number >= 0"),
    case(&["train", "--data", "synthetic:rows=100", "--n", "4", "--scheme", "crc", "--s", "1", "--test-fraction", "0"], 2, "--test-fraction 0 is out of range; accepted: a number above 0 and below 1"),
    case(&["train", "--data", "synthetic:rows=100", "--n", "4", "--scheme", "crc", "--s", "1", "--target-loss", "-inf"], 2, "--target-loss -inf is out of range"),
    case(&[CRC[0], CRC[1], CRC[2], CRC[3], CRC[4], CRC[5], "2", "--dist", "exp:rate= 2"], 0, ""),
    case(&[CRC[0], CRC[1], CRC[2], CRC[3], CRC[4], CRC[5], "2", "--dist", "exp:rate=1e-320"], 2, "`rate=1e-320` is out of range"),
    case(&[CRC[0], CRC[1], CRC[2], CRC[3], CRC[4], CRC[5], "2", "--iterations-per-run", "18446744073709551615", "--gpu-hour-price", "1e300", "--time-unit", "s"], 0, ""),
];

/// Files whose structure is wrong: a repeated column, a table where a list
/// of tables is meant.
#[rustfmt::skip]
const FILES: &[Case] = &[
    case(&["fit", "dup.csv"], 2, "dup.csv:1: the header `step,worker,time,worker` names `worker` twice"),
    case(&["trace", "dup.csv"], 2, "dup.csv:1: the header `step,worker,time,worker` names `worker` twice"),
    case(&["fit", "dupload.csv"], 2, "names `load` twice"),
    case(&["train", "--data", "nohead.csv", "--n", "2", "--scheme", "crc", "--s", "1"], 2, "nohead.csv:1: the first row `0.5,1.2,1` is numbers, not column names; give the file a header row"),
    case(&["train", "--data", "longhead.csv", "--n", "2", "--scheme", "crc", "--s", "1"], 2, "the first row `0.1,0.1,0.1,0.1,0.1,0.1,0.1,0.1,0.1,0.1,0.1,0.1,0.1,0.1,0.1,…` is numbers"),
    case(&["scenario", "single.toml", "--out-dir", "od"], 2, "single.toml:2: key `figure`: a list of tables: write [[figure]], not [figure]"),
    // Whole numbers in exponent form, as the flags take them; a fraction is not one.
    case(&["scenario", "exponent.toml", "--out-dir", "od"], 0, ""),
    case(&["scenario", "half.toml", "--out-dir", "od"], 2, "half.toml:2: key `n`: invalid value: floating point `20.5`, expected a whole number >= 0 (e.g. 20, 1e6 or \"1e6\")"),
    case(&["scenario", "halfs.toml", "--out-dir", "od"], 2, "halfs.toml:7: key `s`: accepted: a whole number >= 0 (e.g. 5 or 1e3)"),
    // A NUL in a field is shown as \0, the same in every reader's message.
    case(&["fit", "nul.csv"], 2, "nul.csv:3: time `1.\\02` is not a number"),
    case(&["trace", "nul.csv"], 2, "nul.csv:3: time `1.\\02` is not a number"),
    case(&["run", "--n", "2", "--dist", "trace:path=nul.csv"], 2, "nul.csv:3: time `1.\\02` is not a number"),
    case(&["trace", "import", "--from", "csv", "nul.csv"], 2, "nul.csv:3: column `time` (time): `1.\\02` is not a number"),
    // A long field is cut at 80 characters, with its length.
    case(&["fit", "longfield.csv"], 2, "longfield.csv:3: time `99999999999999999999999999999999999999999999999999999999999999999999999999999999…` (500001 characters) is not a number"),
    case(&["trace", "import", "--from", "csv", "longfield.csv"], 2, "(500001 characters) is not a number"),
    case(&["fit", "longcolumn.csv"], 2, "the header `step,wwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwww…` (500010 characters) lacks a column"),
    case(&["trace", "import", "--from", "csv", "longcolumn.csv"], 2, "it has step, wwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwww… (500012 characters)"),
    // PyTorch traces: the JSON path of a bad value, and a byte-order mark.
    case(&["trace", "import", "--from", "pytorch", "rank.json"], 2, "rank.json: line 1, column 32: distributedInfo.rank: invalid type: string \"a\"; accepted: a whole number >= 0"),
    case(&["trace", "import", "--from", "pytorch", "bom.json"], 0, ""),
    // One absurd time: the row that makes the fit impossible, and its value.
    case(&["fit", "outlier.csv"], 2, "outlier.csv: step 2, worker 1: its time, 1e300 s ("),
    // A matmul code is judged by its product's error against the printed
    // 1e-6 (9.3e-9 here), not by a 1e-9 residual (condition 5.1e8).
    case(&["codes", "--scheme", "polynomial", "--n", "20", "--p", "4", "--q", "5"], 0, ""),
];

/// Writes the input files the cases read into `dir`.
fn inputs(dir: &Path) {
    let write = |name: &str, text: &str| std::fs::write(dir.join(name), text).unwrap();
    write("zero.csv", "0,0,0\n0,0,0\n0,0,0\n");
    write("huge.csv", "1e308,1e308,1e308\n1e308,1e308,1e308\n1e308,1e308,1e308\n");
    write("deficient.csv", "1,0,0\n1,0,0\n0,1,0\n");
    write("dup.csv", "step,worker,time,worker\n0,0,1.0,1\n0,1,2.0,0\n");
    write("dupload.csv", "step,worker,load,time,load\n0,0,1,1.0,1\n0,1,1,2.0,1\n");
    write("nohead.csv", "0.5,1.2,1\n0.3,0.1,0\n0.7,0.2,1\n");
    write(
        "longhead.csv",
        &format!("{}1\n{}0\n", "0.1,".repeat(40), "0.2,".repeat(40)),
    );
    write("single.toml", "name = \"x\"\n[figure]\nkind = \"speedup\"\n");
    let study = |n: &str, s: &str| {
        format!("name = \"e\"\nn = {n}\ntrials = \"2e2\"\n[[study]]\nlabel = \"a\"\nschemes = [\"crc\"]\ns = {s}\n")
    };
    write("exponent.toml", &study("1e1", "[1e0, 2.0]"));
    write("half.toml", &study("20.5", "1"));
    write("halfs.toml", &study("20", "[1.5]"));
    let step = r#"[{"ph": "X", "name": "ProfilerStep#1", "cat": "user_annotation", "dur": 5}]"#;
    write(
        "rank.json",
        &format!(r#"{{"distributedInfo": {{"rank": "a"}}, "traceEvents": {step}}}"#),
    );
    write("bom.json", &format!("\u{feff}{{\"traceEvents\": {step}}}"));
    write(
        "outlier.csv",
        &steps(|step, worker| {
            if (step, worker) == (2, 1) {
                1e300
            } else {
                0.01 * (1 + (step * 7 + worker * 3) % 100) as f64
            }
        }),
    );
    write(
        "tiny.csv",
        &steps(|step, worker| 1e-200 * (1.0 + 0.1 * ((step * 5 + worker * 3) % 11) as f64)),
    );
    write("nul.csv", "step,worker,time\n0,0,1.0\n0,1,1.\u{0}2\n");
    write(
        "longfield.csv",
        &format!("step,worker,time\n0,0,1.0\n0,1,{}x\n", "9".repeat(500_000)),
    );
    write(
        "longcolumn.csv",
        &format!("step,{},time\n0,0,1.0\n", "w".repeat(500_000)),
    );
}

/// A trace of 20 steps of 4 workers whose times are `time(step, worker)`.
fn steps(time: impl Fn(usize, usize) -> f64) -> String {
    let mut text = String::from("step,worker,time\n");
    for step in 0..20 {
        for worker in 0..4 {
            text += &format!("{step},{worker},{:e}\n", time(step, worker));
        }
    }
    text
}

/// Times near 1e-200 s: the analysis computes its correlations (scaled
/// first, exactly), with no NaN, and names the scale where it cannot fit.
#[test]
fn tiny_times_give_no_nan() {
    let dir = tempfile::tempdir().unwrap();
    inputs(dir.path());
    let out = Command::cargo_bin("gcsim")
        .unwrap()
        .current_dir(dir.path())
        .args(["trace", "tiny.csv", "--format", "table"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(!text.to_lowercase().contains("nan"), "{text}");
    assert!(text.contains("mean lag-1 autocorrelation"), "{text}");
    assert!(text.contains("rescale the time unit"), "{text}");
    // With the CSV on stdout, stderr says why nothing was fitted.
    let csv = Command::cargo_bin("gcsim")
        .unwrap()
        .current_dir(dir.path())
        .args(["trace", "tiny.csv", "--format", "csv"])
        .output()
        .unwrap();
    let why = String::from_utf8_lossy(&csv.stderr);
    assert!(
        why.contains("fitted: none") && why.contains("rescale the time unit"),
        "{why}"
    );
    // Their spread does not square to 0: no worker is "far above" the others.
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("heterogeneity"), "{stderr}");
}

#[test]
fn hostile_inputs_work_or_fail_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    inputs(dir.path());
    let mut count = 0;
    for cases in [CRASHES, WRONG_ANSWERS, NUMBERS, FILES] {
        count += run_cases(cases, dir.path());
    }
    assert!(count >= 60, "{count} cases");
}

/// A write to a full device fails with one line and status 1, for the
/// completion script and the help alike; a closed pipe is success.
#[test]
fn writes_to_a_full_device_fail_cleanly() {
    if !Path::new("/dev/full").exists() {
        return;
    }
    for args in [
        &["completions", "bash"][..],
        &["--help"],
        &["--version"],
        &["run", "--help"],
        &["man"],
        &[
            "run", "--n", "10", "--scheme", "crc", "--s", "1", "--trials", "400", "--format", "csv",
        ],
    ] {
        let out = std::process::Command::new(assert_cmd::cargo::cargo_bin("gcsim"))
            .args(args)
            .stdout(std::fs::File::create("/dev/full").unwrap())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
        assert!(stderr.contains("No space left on device"), "{args:?}: {stderr}");
        assert!(stderr.contains("to stdout"), "{args:?}: {stderr}");
        let written = match args[0] {
            "--version" => "the version",
            "--help" | "run" if args.contains(&"--help") => "the help",
            _ => "",
        };
        assert!(
            stderr.contains(&format!("cannot write {written}")),
            "{args:?}: {stderr}"
        );
    }
}

/// Under an address-space limit (`ulimit -v`) too small for one trial's
/// messages, a multi-message run is refused before it starts, naming the
/// flags to change, where its first trial used to abort; under a limit
/// that holds them, it runs.
#[test]
fn a_memory_limit_refuses_a_run_it_cannot_hold() {
    let gcsim = assert_cmd::cargo::cargo_bin("gcsim");
    let run = |kb: u32| {
        let script = format!(
            "ulimit -v {kb} && exec \"$0\" run --n 4096 --scheme multi-message --s 4000 --trials 4 --format csv"
        );
        std::process::Command::new("sh")
            .args(["-c", &script])
            .arg(&gcsim)
            .output()
            .unwrap()
    };
    let out = run(700_000);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("16388096 messages per trial") && stderr.contains("use a smaller --s or --n"),
        "{stderr}"
    );
    let out = run(2_000_000);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}

/// Small samples: the mean's interval never below 0, p99's interval left
/// empty with a warning where the trials cannot bound it.
#[test]
fn small_samples_give_valid_intervals() {
    for trials in ["1", "2", "10", "100"] {
        let out = Command::cargo_bin("gcsim")
            .unwrap()
            .args(["run", "--n", "20", "--scheme", "crc", "--s", "2", "--trials", trials])
            .args(["--columns", "ci95_low,p99_ci95_low,p99_ci95_high"])
            .output()
            .unwrap();
        assert!(out.status.success());
        let stdout = String::from_utf8_lossy(&out.stdout);
        let row: Vec<&str> = stdout.lines().nth(1).unwrap().split(',').collect();
        // One trial has no spread to give an interval from.
        let low_ok = if trials == "1" {
            row[0].is_empty()
        } else {
            row[0].parse::<f64>().unwrap() >= 0.0
        };
        assert!(low_ok, "{trials}: {stdout}");
        assert_eq!(&row[1..], ["", ""], "{trials}: {stdout}");
        let counted = if trials == "1" {
            "1 trial cannot"
        } else {
            " trials cannot"
        };
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains(counted) && stderr.contains("cannot bound p99 at 95%"),
            "{stderr}"
        );
    }
}
