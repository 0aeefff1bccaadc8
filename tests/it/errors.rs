//! Every bad input (malformed flags, values out of range, bad scenario
//! files) that the `cli` module does not already cover:
//! exit status 2, a message naming the flag or key and what is accepted, no
//! panic, nothing on stdout. gcsim's own errors are one line, `Error: ...`;
//! clap's keep clap's format (see [`assert_error_text`]).

use std::path::Path;

use assert_cmd::Command;
use predicates::prelude::*;

fn gcsim() -> Command {
    Command::cargo_bin("gcsim").unwrap()
}

/// Runs `args` (in `dir` if given) and checks the error contract (see
/// [`assert_error_text`]).
pub(super) fn assert_usage_error(args: &[&str], dir: Option<&Path>, expected: &[&str]) {
    let mut cmd = gcsim();
    if let Some(dir) = dir {
        cmd.current_dir(dir);
    }
    let out = cmd
        .args(args)
        .timeout(std::time::Duration::from_secs(60))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
    assert!(
        out.stdout.is_empty(),
        "{args:?}: stdout {:?}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert_error_text(args, &stderr, expected);
}

/// The two forms of a usage error on stderr. gcsim's own: exactly one line,
/// `Error: ...`, holding every string of `expected`. clap's (a flag or value
/// clap rejects): clap's format, its first line `error: ...` naming the
/// flag, every string of `expected` in the message, then clap's closing
/// line. Neither panics.
pub(super) fn assert_error_text(args: &[&str], stderr: &str, expected: &[&str]) {
    assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    let lines: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
    let first = lines.first().copied().unwrap_or("");
    if first.starts_with("error: ") {
        assert!(
            stderr.contains("--") || stderr.contains('<'),
            "{args:?}: names no flag: {stderr}"
        );
        assert_eq!(
            lines.last().copied(),
            Some("For more information, try '--help'."),
            "{args:?}: {stderr}"
        );
        assert!(!first.contains(char::is_control), "{args:?}: {stderr}");
        for e in expected {
            assert!(stderr.contains(e), "{args:?}: expected `{e}` in: {stderr}");
        }
        return;
    }
    assert_eq!(lines.len(), 1, "{args:?}: one line expected, got: {stderr}");
    assert!(first.starts_with("Error: "), "{args:?}: {stderr}");
    for e in expected {
        assert!(first.contains(e), "{args:?}: expected `{e}` in: {stderr}");
    }
}

fn run_uncoded<'a>(extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec!["run", "--n", "10", "--scheme", "uncoded"];
    args.extend_from_slice(extra);
    args
}

#[test]
fn cluster_and_tolerance() {
    let cases: &[(&[&str], &[&str])] = &[
        (&["sweep", "--n", "0", "--s", "0"], &["--n 0 is out of range", ">= 1"]),
        (
            &["run", "--n", "-3", "--scheme", "crc", "--s", "1"],
            &["--n", "`-3` is negative"],
        ),
        (
            &["run", "--n", "ten", "--scheme", "crc", "--s", "1"],
            &["--n", "not a whole number"],
        ),
        (
            &["run", "--scheme", "crc", "--s", "1"],
            &["give --n N", "--workers COUNT:DIST"],
        ),
        (
            &["sweep", "--n", "10", "--s", "0..10"],
            &["--s 10 is out of range", "accepted: 0..9"],
        ),
        (&["sweep", "--n", "10", "--s", "-1..3"], &["--s", "`-1` is negative"]),
        (
            &["sweep", "--n", "10", "--s", "1.5"],
            &["--s", "`1.5` is not a whole number", "A..B"],
        ),
        (&["sweep", "--n", "10", "--s", ""], &["--s", "empty item", "A..B"]),
        (&["sweep", "--n", "10", "--s", "1,,2"], &["--s", "empty item"]),
        (
            &["sweep", "--n", "10", "--s", "9..0"],
            &["--s", "the start 9 exceeds the end 0"],
        ),
        (
            &["sweep", "--n", "10", "--s", "0..18446744073709551615"],
            &["--s", "limit"],
        ),
        (
            &["sweep", "--n", "10", "--s", "0..99999999999999999999"],
            &["--s", "`99999999999999999999` is too large"],
        ),
        (
            &["run", "--n", "10", "--scheme", "uncoded", "--s", "3"],
            &["--s 3", "uncoded", "accepted: 0"],
        ),
    ];
    for (args, expected) in cases {
        assert_usage_error(args, None, expected);
    }
}

#[test]
fn scheme_parameters() {
    let cases: &[(&[&str], &[&str])] = &[
        (
            &[
                "sweep",
                "--n",
                "10",
                "--scheme",
                "comm-efficient",
                "--s",
                "1",
                "--m",
                "0..2",
            ],
            &["--m 0 is out of range", "accepted: 1..9"],
        ),
        (
            &[
                "sweep",
                "--n",
                "10",
                "--scheme",
                "comm-efficient",
                "--s",
                "1",
                "--m",
                "-2",
            ],
            &["--m", "`-2` is negative"],
        ),
        (
            &[
                "run",
                "--n",
                "10",
                "--scheme",
                "comm-efficient",
                "--s",
                "1",
                "--m",
                "18446744073709551615",
            ],
            &["s+m must be at most n", "m can be 1..9"],
        ),
        (
            &[
                "sweep",
                "--n",
                "200000",
                "--scheme",
                "comm-efficient",
                "--s",
                "0..99999",
                "--m",
                "1..100000",
            ],
            &["--s and --m", "limit of 1000000"],
        ),
        (
            &["sweep", "--n", "10", "--scheme", "mds", "--k", "0..3"],
            &["--k 0 is out of range", "1..10"],
        ),
        (
            &["sweep", "--n", "10", "--scheme", "mds", "--k", "5,11"],
            &["--k 11 is out of range", "1..10"],
        ),
        (&["run", "--n", "10", "--scheme", "mds"], &["mds needs --k", "--k 80"]),
        (
            &["run", "--n", "10", "--scheme", "crc", "--s", "1", "--m", "2"],
            &[
                "--m applies only to --scheme comm-efficient (message split) and entangled (inner split), not to --scheme crc",
            ],
        ),
        (
            &["run", "--n", "10", "--scheme", "ignore", "--s", "1", "--k", "2"],
            &["--k applies only to --scheme mds, k-batch-sync, k-async and k-batch-async, not to --scheme ignore"],
        ),
        (
            &["sweep", "--n", "10", "--scheme", "crc", "--s", "1", "--k", "3"],
            &[
                "--k applies only to --scheme mds, k-batch-sync, k-async and k-batch-async, none of which is in --scheme",
            ],
        ),
        (
            &["run", "--n", "18446744073709551614", "--scheme", "frc", "--s", "2"],
            &["s+1 must divide n", "one less than a divisor of n"],
        ),
        (
            &[
                "run",
                "--n",
                "4294967296",
                "--scheme",
                "comm-efficient",
                "--s",
                "0",
                "--m",
                "4294967296",
                "--load-model",
                "additive",
            ],
            &["--n 4294967296 is more than the limit"],
        ),
        (
            &["run", "--n", "100000000", "--scheme", "uncoded"],
            &["--n 100000000 is more than the limit"],
        ),
        (
            &["sweep", "--n", "10", "--scheme", "crc,lrc", "--s", "1"],
            &[
                "'lrc'",
                "--scheme",
                "possible values: uncoded, ignore, frc, crc, comm-efficient, mds",
            ],
        ),
        (
            &["run", "--n", "10", "--scheme", "lrc"],
            &[
                "'lrc'",
                "--scheme",
                "possible values: uncoded, ignore, frc, crc, comm-efficient, mds",
            ],
        ),
    ];
    for (args, expected) in cases {
        assert_usage_error(args, None, expected);
    }
}

#[test]
fn distributions() {
    let accepted_names = "accepted: exp, shifted-exp, pareto";
    let cases: &[(&str, &[&str])] = &[
        // Measured traces are not a distribution yet.
        ("trace:path=x.csv", &["--dist", "x.csv: cannot read the trace"]),
        ("replay:path=x.csv", &["--dist", "x.csv: cannot read the trace"]),
        ("", &["--dist", "unknown distribution", accepted_names]),
        ("exp", &["--dist", "needs the key `rate`", "exp:rate=1"]),
        ("shifted-exp:rate=1", &["needs the key `shift`"]),
        ("exp:rate=1,slowdown=2", &["needs the key `p_slow`"]),
        ("exp:rate=1,rate=2", &["key `rate` is given twice"]),
        ("exp:rate", &["`rate` is not of the form key=value"]),
        (
            "pareto:scale=1,shape=2,rate=1",
            &["unknown key `rate` for `pareto`", "accepted: scale, shape"],
        ),
        ("exp:rate=-1", &["`rate=-1` is out of range", "from 1e-100 to 1e100"]),
        (
            "shifted-exp:shift=1,rate=0",
            &["`rate=0` is out of range", "from 1e-100 to 1e100"],
        ),
        (
            "pareto:scale=-1,shape=2",
            &["`scale=-1` is out of range", "from 1e-100 to 1e100"],
        ),
        (
            "pareto:scale=1,shape=0",
            &["`shape=0` is out of range", "from 0.1 to 1e100"],
        ),
        (
            "pareto:scale=1,shape=NaN",
            &["`shape=NaN` is out of range", "from 0.1 to 1e100"],
        ),
        ("pareto:scale=inf,shape=2", &["`scale=inf` is out of range", "1e100"]),
        (
            "shifted-exp:shift=-inf,rate=1",
            &["`shift=-inf` is out of range", "0, or a number from 1e-100"],
        ),
        (
            "exp:rate=1,p_slow=-0.1,slowdown=2",
            &["`p_slow=-0.1` is out of range", "[0, 1]"],
        ),
        (
            "exp:rate=1,p_slow=nan,slowdown=2",
            &["`p_slow=NaN` is out of range", "[0, 1]"],
        ),
        (
            "exp:rate=1,p_slow=0.1,slowdown=0",
            &["`slowdown=0` is out of range", "from 1 to 1e100"],
        ),
        (
            "exp:rate=1,p_slow=0.1,slowdown=inf",
            &["`slowdown=inf` is out of range", "from 1 to 1e100"],
        ),
        ("exp:rate=1e999", &["`rate=inf` is out of range"]),
        ("exp:rate=fast", &["`rate=fast` is not a number"]),
    ];
    for (dist, expected) in cases {
        assert_usage_error(&run_uncoded(&["--dist", dist]), None, expected);
    }
}

#[test]
fn load_model_and_run_options() {
    let cases: &[(&[&str], &[&str])] = &[
        (
            &["--load-model", "quadratic"],
            &[
                "'quadratic'",
                "--load-model",
                "possible values: fixed, scaled, additive, affine",
            ],
        ),
        (
            &["--load-model", "affine", "--unit-time", "-1"],
            &["--unit-time -1 is out of range", "from 0 to 1e100"],
        ),
        (
            &["--load-model", "affine", "--unit-time", "NaN"],
            &["--unit-time NaN is out of range"],
        ),
        (
            &["--load-model", "affine", "--unit-time", "inf"],
            &["--unit-time inf is out of range"],
        ),
        (
            &["--load-model", "affine", "--unit-time", "slow"],
            &["--unit-time", "`slow` is not a number"],
        ),
        (&["--trials", "-5"], &["--trials", "`-5` is negative"]),
        (&["--trials", "many"], &["--trials", "`many` is not a whole number"]),
        (&["--trials", "18446744073709551616"], &["--trials", "too large"]),
        (&["--seed", "-1"], &["--seed", "`-1` is negative"]),
        (&["--threads", "-2"], &["--threads", "`-2` is negative"]),
        (
            &["--format", "xml"],
            &["'xml'", "--format", "possible values: table, csv, json"],
        ),
    ];
    for (extra, expected) in cases {
        assert_usage_error(&run_uncoded(extra), None, expected);
    }
    let sweep: &[(&[&str], &[&str])] = &[
        (
            &["sweep", "--n", "10", "--s", "1", "--trials", "0"],
            &[
                "'--trials <N>': `0` is out of range",
                "accepted: a whole number from 1 to",
            ],
        ),
        (
            &["sweep", "--n", "10", "--s", "1", "--threads", "0"],
            &[
                "for '--threads <N>': `0` is out of range",
                "accepted: a whole number from 1 to 1024",
            ],
        ),
        (&["verify", "--trials", "-1"], &["--trials", "`-1` is negative"]),
        (
            &["verify", "--trials", "10"],
            &["--trials 10 is too few", "1000 or more"],
        ),
    ];
    for (args, expected) in sweep {
        assert_usage_error(args, None, expected);
    }
}

#[test]
fn output_paths() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("a-file");
    std::fs::write(&file, "x").unwrap();
    let under_file = file.join("x.csv");
    let under_file = under_file.to_str().unwrap();
    let existing_dir = dir.path().to_str().unwrap();
    let cases: Vec<(Vec<&str>, Vec<&str>)> = vec![
        (
            vec!["--out", under_file],
            vec!["--out", "is not a directory", "give a path in an existing directory"],
        ),
        (
            vec!["--out", existing_dir, "--format", "csv"],
            vec!["--out", "is a directory; give a file name"],
        ),
        (
            vec!["--out", "/nonexistent-dir/sub/x.json"],
            vec!["--out", "does not exist"],
        ),
    ];
    for (extra, expected) in &cases {
        assert_usage_error(&run_uncoded(extra), None, expected);
    }
    // A directory nobody can create files in, even root.
    if cfg!(target_os = "linux") && Path::new("/proc/self").is_dir() {
        assert_usage_error(
            &run_uncoded(&["--out", "/proc/x.csv"]),
            None,
            &["--out /proc/x.csv", "cannot write in /proc"],
        );
    }
    assert!(
        std::fs::read_dir(dir.path()).unwrap().count() == 1,
        "no file left behind"
    );
}

#[test]
fn scenario_files() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, bytes: &[u8]| {
        std::fs::write(dir.path().join(name), bytes).unwrap();
    };
    write("empty.toml", b"");
    write("blank.toml", b"  \n\n");
    write("latin1.toml", b"name = \"caf\xe9\"\nn = 10\n");
    write("broken.toml", b"name = \"x\"\nn = [\n");
    write("no-study.toml", b"name = \"x\"\nn = 10\n");
    write(
        "bad-dist.toml",
        b"name = \"x\"\nn = 10\ndist = \"trace:path=x.csv\"\n[[study]]\nlabel = \"a\"\nschemes = [\"crc\"]\ns = 1\n",
    );
    write(
        "huge-n.toml",
        b"name = \"x\"\nn = 18446744073709551614\n[[study]]\nlabel = \"a\"\nschemes = [\"frc\"]\ns = \"0..3\"\n",
    );
    let cases: &[(&str, &[&str])] = &[
        ("missing.toml", &["missing.toml: cannot read the scenario"]),
        (
            "empty.toml",
            &["empty.toml: the scenario is empty", "name, n and one [[study]]"],
        ),
        ("blank.toml", &["blank.toml: the scenario is empty"]),
        ("latin1.toml", &["latin1.toml: the scenario is not UTF-8", "offset 11"]),
        ("broken.toml", &["broken.toml:2:"]),
        (
            "no-study.toml",
            &["no-study.toml: the scenario needs at least one [[study]], [[train]] or [[plan]]"],
        ),
        (
            "bad-dist.toml",
            &["bad-dist.toml:3: key `dist`: x.csv: cannot read the trace"],
        ),
        (
            "huge-n.toml",
            &["huge-n.toml:", "n 18446744073709551614 is more than the limit"],
        ),
    ];
    for (file, expected) in cases {
        assert_usage_error(&["scenario", file, "--out-dir", "out"], Some(dir.path()), expected);
    }
    assert!(
        !dir.path().join("out").exists(),
        "nothing written for an invalid scenario"
    );
}

/// Laws whose times lie far outside what floating point keeps (rate 1e300
/// gave std_err 0 and a zero-width interval, rate 1e-300 an empty std_err,
/// rate 1e-308 "infinite mean" for an overflow) are refused with the range
/// and the advice to rescale the time unit; the edges of the range run and
/// give finite, nonzero standard errors.
#[test]
fn laws_outside_the_time_range_are_refused() {
    for (dist, key) in [
        ("exp:rate=1e300", "rate=1e300"),
        ("exp:rate=1e-300", "rate=1e-300"),
        ("exp:rate=1e-308", "rate=1e-308"),
        ("shifted-exp:shift=1e200,rate=1", "shift=1e200"),
        ("pareto:scale=1e-200,shape=2", "scale=1e-200"),
        ("weibull:scale=1e101,shape=2", "scale=1e101"),
        ("lognormal:mu=-1e3,sigma=1", "mu=-1000"),
        ("lognormal:mu=231,sigma=1", "mu=231"),
        ("lognormal:mu=0,sigma=25", "sigma=25"),
        ("exp:rate=1,p_slow=0.1,slowdown=1e300", "slowdown=1e300"),
    ] {
        gcsim()
            .args(["run", "--n", "4", "--scheme", "crc", "--s", "1", "--dist", dist])
            .assert()
            .code(2)
            .stderr(predicate::str::contains(format!("`{key}` is out of range")))
            .stderr(
                predicate::str::contains("1e100")
                    .or(predicate::str::contains("230"))
                    .or(predicate::str::contains("(0, 20]")),
            );
    }
    for dist in ["exp:rate=1e100", "exp:rate=1e-100", "lognormal:mu=-230,sigma=20"] {
        let out = gcsim()
            .args([
                "run", "--n", "4", "--scheme", "crc", "--s", "1", "--trials", "2000", "--format", "csv", "--dist", dist,
            ])
            .output()
            .unwrap();
        assert!(out.status.success(), "{dist}");
        let csv = String::from_utf8(out.stdout).unwrap();
        let row: Vec<f64> = csv
            .lines()
            .nth(1)
            .unwrap()
            .split(',')
            .skip(9)
            .take(2)
            .map(|x| x.parse().unwrap())
            .collect();
        assert!(
            row.iter().all(|x| x.is_finite() && *x > 0.0),
            "{dist}: mean, std_err {row:?}"
        );
    }
}

/// Messages that named the wrong thing: `--trials` said 0 was accepted,
/// `--analytic` blamed the worker law for the communication model's lack
/// of an exact law, and `plan --help` listed flags plan refuses.
#[test]
fn messages_name_the_right_cause() {
    gcsim()
        .args(["run", "--n", "4", "--scheme", "crc", "--s", "1", "--trials", "-2"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("accepted: a whole number from 1 to"));
    for comm in [
        &["--comm-time", "1", "--link", "shared"][..],
        &["--comm-dist", "exp:rate=1"],
    ] {
        gcsim()
            .args(["run", "--n", "4", "--scheme", "crc", "--s", "1", "--analytic"])
            .args(comm)
            .assert()
            .code(2)
            .stderr(
                predicate::str::contains("with the communication model").and(predicate::str::contains("--dist").not()),
            );
    }
    gcsim()
        .args([
            "run",
            "--n",
            "4",
            "--scheme",
            "crc",
            "--s",
            "1",
            "--analytic",
            "--load-model",
            "additive",
            "--dist",
            "pareto:scale=1,shape=3",
        ])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "under --load-model additive with --dist pareto",
        ));
    let help = gcsim().args(["plan", "--help"]).output().unwrap().stdout;
    let help = String::from_utf8(help).unwrap();
    assert!(
        !help.contains("--analytic") && help.contains("parts of the cluster sizes"),
        "{help}"
    );
    let help = String::from_utf8(gcsim().args(["run", "--help"]).output().unwrap().stdout).unwrap();
    assert!(help.contains("--analytic") && help.contains("--shard"));
    assert!(help.contains("not trace: or replay:"));
}
