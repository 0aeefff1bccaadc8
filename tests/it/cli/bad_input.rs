//! Every invalid input on the main paths: exit status 2, a message on
//! stderr naming the flag or key and what is accepted (one line for
//! gcsim's own errors, clap's format for clap's), no panic. The `errors`
//! module holds the rest.

use super::gcsim;

/// Every invalid input: exit status 2, a message on stderr naming the flag
/// or key and what is accepted (see `errors::assert_error_text`), no panic.
#[test]
fn bad_input_is_a_clear_one_line_error() {
    let cases: &[(&[&str], &str)] = &[
        (
            &["run", "--n", "0", "--scheme", "uncoded"],
            "for '--n <N>': `0` is out of range; accepted: a whole number >= 1",
        ),
        (
            &["run", "--n", "10", "--scheme", "crc", "--s", "10"],
            "--s 10 is out of range for crc with n=10; accepted: 0..9",
        ),
        (
            &["run", "--n", "10", "--scheme", "crc", "--s", "-1"],
            "`-1` is negative",
        ),
        (
            &["run", "--n", "10", "--scheme", "crc", "--s", "two"],
            "`two` is not a whole number",
        ),
        (&["run", "--n", "10", "--scheme", "crc"], "crc needs --s"),
        // Negative values name the flag (they were "unexpected argument '-1'").
        (
            &[
                "run", "--n", "10", "--scheme", "crc", "--s", "1", "--shard", "-1/2", "--out", "x.json",
            ],
            "invalid value '-1/2' for '--shard <I/K>'",
        ),
        (
            &["codes", "--scheme", "crc", "--n", "5", "--s", "1", "--limit", "-1"],
            "invalid value '-1' for '--limit <N>': `-1` is negative",
        ),
        (
            &["plan", "--n", "10", "--max-load", "-1"],
            "--max-load -1 is out of range",
        ),
        (
            &["run", "--scheme", "crc", "--s", "1", "--workers", "-5:exp:rate=1"],
            "invalid value '-5:exp:rate=1' for '--workers <COUNT:DIST>'",
        ),
        // plan checks the whole request before any work (--n 1..100000 grew
        // past 2.7 GB, checking the limit per n as it went).
        (
            &["plan", "--n", "1..100000"],
            "--n 1,...,100000 (100000 sizes) gives more than the limit of 1000000 candidate configurations in all (passed at n=90227); narrow --n, --scheme or --max-load",
        ),
        (
            &["plan", "--n", "10", "--scheme", "uncoded,mds"],
            "--scheme mds encodes only linear computations (the matrix-vector product X·w; Lee et al. 2017) and cannot encode the gradient of a nonlinear model: add --linear",
        ),
        (
            &["plan", "--n", "10", "--objective", "cost"],
            "--objective cost ranks by the GPU-hours of a run (times --gpu-hour-price): give --iterations-per-run N and the time unit",
        ),
        (
            &["plan", "--n", "10", "--iterations-per-run", "1000"],
            "--iterations-per-run counts hours, which needs the time unit of --dist: give --time-unit s, ms or us",
        ),
        (
            &[
                "sweep",
                "--n",
                "10",
                "--s",
                "1",
                "--gpu-hour-price",
                "2",
                "--time-unit",
                "s",
            ],
            "--gpu-hour-price prices a run: give --iterations-per-run N",
        ),
        (
            &["run", "--n", "10", "--time-unit", "minutes"],
            "unknown time unit `minutes`; accepted: s, ms, us",
        ),
        (
            &["sweep", "--n", "10", "--dataset-size", "12 parsecs"],
            "`12 parsecs`: unknown unit `parsecs`; accepted: a number of bytes",
        ),
        (
            &[
                "sweep",
                "--n",
                "10",
                "--s",
                "1",
                "--iterations-per-run",
                "10",
                "--time-unit",
                "s",
                "--gpu-hour-price",
                "-2",
            ],
            "--gpu-hour-price -2 is out of range; accepted: a finite number >= 0",
        ),
        (&["sweep", "--n", "10", "--gradient-size", "-5"], "`-5` is not a size"),
        (
            &[
                "sweep",
                "--n",
                "8",
                "--dist",
                "replay:path=data/trace-llm-8w.csv,scale=0",
            ],
            "trace scale `0` is out of range; accepted: a finite number > 0",
        ),
        (
            &[
                "plan",
                "--n",
                "8",
                "--dist",
                "replay:path=data/trace-llm-8w.csv",
                "--trace-bootstrap",
                "1",
            ],
            "--trace-bootstrap 1 estimates no spread; accepted: 0 (off) or a whole number >= 2",
        ),
        (
            &["plan", "--n", "8", "--trace-bootstrap", "50"],
            "--trace-bootstrap resamples a trace's recorded steps: it needs --dist trace:path=FILE or replay:path=FILE",
        ),
        (
            &["plan", "--n", "4", "--ref-n", "16", "--max-load", "3"],
            "no configuration at n=4 has load at most --max-load 3; the smallest is 4 (uncoded, counted in shares of the --ref-n cluster)",
        ),
        (
            &["plan", "--n", "10", "--max-load", "nan"],
            "--max-load NaN is out of range",
        ),
        (
            &["plan", "--n", "1..100000", "--max-load", "2", "--linear"],
            "more than the limit of 1000000 candidate configurations in all",
        ),
        (
            &["plan", "--n", "5000", "--max-load", "inf"],
            "n=5000 gives more than the limit of 10000 candidate configurations at one cluster size; narrow --scheme or --max-load",
        ),
        (
            &[
                "plan",
                "--n",
                "1..3000",
                "--dist",
                "trace:path=data/trace-llm-8w.csv",
                "--trials",
                "10000000000",
            ],
            "simulating every cluster size of --n 1,...,3000 (3000 sizes) takes 20166048000000 worker draws",
        ),
        // verify checks its study limits before running (it panicked).
        (&["verify", "--trials", "1000000000001"], "lower --trials"),
        (&["sweep", "--n", "10", "--s", "5..2"], "the start 5 exceeds the end 2"),
        (&["sweep", "--n", "10", "--s", "0..99999999"], "limit"),
        (
            &["run", "--n", "10", "--scheme", "frc", "--s", "2"],
            "s+1 must divide n; accepted s: 0, 1, 4, 9",
        ),
        (
            &["run", "--n", "10", "--scheme", "comm-efficient", "--s", "1", "--m", "0"],
            "--m 0 is out of range",
        ),
        (
            &["run", "--n", "10", "--scheme", "comm-efficient", "--s", "5", "--m", "6"],
            "s+m must be at most n",
        ),
        (
            &["run", "--n", "10", "--scheme", "mds", "--k", "0"],
            "--k 0 is out of range for mds with n=10; accepted: 1..10",
        ),
        (
            &["run", "--n", "10", "--scheme", "mds", "--k", "11"],
            "--k 11 is out of range",
        ),
        (
            &["run", "--n", "10", "--scheme", "lrc"],
            "invalid value 'lrc' for '--scheme <SCHEME>'",
        ),
        (
            &["run", "--n", "10", "--scheme", "uncoded", "--dist", "gauss:mean=1"],
            "unknown distribution `gauss`",
        ),
        (
            &["run", "--n", "10", "--scheme", "uncoded", "--dist", "exp:lambda=1"],
            "unknown key `lambda` for `exp`",
        ),
        (
            &["run", "--n", "10", "--scheme", "uncoded", "--dist", "pareto:scale=1"],
            "needs the key `shape`",
        ),
        (
            &["run", "--n", "10", "--scheme", "uncoded", "--dist", "exp:rate=0"],
            "`rate=0` is out of range",
        ),
        (
            &[
                "run",
                "--n",
                "10",
                "--scheme",
                "uncoded",
                "--dist",
                "pareto:scale=1,shape=-2",
            ],
            "`shape=-2` is out of range",
        ),
        (
            &[
                "run",
                "--n",
                "10",
                "--scheme",
                "uncoded",
                "--dist",
                "pareto:scale=0,shape=2",
            ],
            "`scale=0` is out of range",
        ),
        (
            &[
                "run",
                "--n",
                "10",
                "--scheme",
                "uncoded",
                "--dist",
                "shifted-exp:shift=-1,rate=1",
            ],
            "`shift=-1` is out of range",
        ),
        (
            &[
                "run",
                "--n",
                "10",
                "--scheme",
                "uncoded",
                "--dist",
                "exp:rate=1,p_slow=1.5,slowdown=2",
            ],
            "`p_slow=1.5` is out of range",
        ),
        (
            &[
                "run",
                "--n",
                "10",
                "--scheme",
                "uncoded",
                "--dist",
                "exp:rate=1,p_slow=0.5,slowdown=0.5",
            ],
            "`slowdown=0.5` is out of range",
        ),
        (
            &["run", "--n", "10", "--scheme", "uncoded", "--dist", "exp:rate=NaN"],
            "`rate=NaN` is out of range",
        ),
        (
            &["run", "--n", "10", "--scheme", "uncoded", "--dist", "exp:rate=inf"],
            "`rate=inf` is out of range",
        ),
        (
            &["run", "--n", "10", "--scheme", "uncoded", "--load-model", "quadratic"],
            "invalid value 'quadratic' for '--load-model <MODEL>'",
        ),
        (
            &["run", "--n", "10", "--scheme", "uncoded", "--load-model", "affine"],
            "--load-model affine needs --unit-time",
        ),
        (
            &["run", "--n", "10", "--scheme", "uncoded", "--unit-time", "1"],
            "--unit-time applies only to --load-model affine",
        ),
        (
            &["run", "--n", "10", "--scheme", "uncoded", "--trials", "0"],
            "`0` is out of range; accepted: a whole number from 1 to",
        ),
        (
            &["run", "--n", "10", "--scheme", "uncoded", "--threads", "0"],
            "for '--threads <N>': `0` is out of range; accepted: a whole number from 1 to 1024",
        ),
        // A hundred thousand threads took minutes to start, with no output.
        (
            &["run", "--n", "10", "--scheme", "uncoded", "--threads", "100000"],
            "for '--threads <N>': `100000` is out of range; accepted: a whole number from 1 to 1024",
        ),
        (
            &["codes", "--scheme", "crc", "--n", "10", "--s", "1", "--threads", "0"],
            "`0` is out of range; accepted: a whole number from 1 to 1024",
        ),
        (
            &["merge", "a.json", "--threads", "2000"],
            "`2000` is out of range; accepted: a whole number from 1 to 1024",
        ),
        (
            &["scenario", "a.toml", "--threads", "-1"],
            "`-1` is negative; accepted: a whole number from 1 to 1024",
        ),
        (
            &["codes", "--scheme", "crc", "--n", "10", "--s", "1", "--seed", "-1"],
            "invalid value '-1' for '--seed <SEED>': `-1` is negative",
        ),
        (
            &["plan", "--n", "10", "--ref-n", "18446744073709551615"],
            "--ref-n 18446744073709551615 is out of range; accepted: a cluster size, a whole number from 1 to 16777216",
        ),
        // A value with a newline is echoed on one line.
        (
            &["run", "--n", "3", "--scheme", "uncoded", "--dist", "ex\np:rate=1"],
            "unknown distribution `ex",
        ),
        // approx-regular's error is simulated with its dense matrix; a
        // cluster too large for one panicked.
        (
            &[
                "run",
                "--n",
                "100000",
                "--scheme",
                "approx-regular",
                "--d",
                "3",
                "--s",
                "2",
                "--trials",
                "10",
            ],
            "approx-regular s=2 d=3 (its approximation error is simulated with its matrix): --n 100000 is too large to build a dense encoding matrix; accepted: 1..2000",
        ),
        (
            &[
                "run",
                "--n",
                "10",
                "--scheme",
                "uncoded",
                "--out",
                "/nonexistent-dir/x.csv",
            ],
            "the directory /nonexistent-dir does not exist",
        ),
        (
            &["run", "--n", "10", "--scheme", "uncoded", "--out", "x.parquet"],
            "cannot tell the format from the extension",
        ),
        (
            &["sweep", "--n", "10", "--scheme", "comm-efficient", "--s", "1"],
            "comm-efficient needs --m",
        ),
        (
            &["sweep", "--n", "10", "--s", "1", "--m", "2"],
            "--m applies only to --scheme comm-efficient",
        ),
        (
            &["sweep", "--n", "10", "--s", "1", "--k", "2"],
            "--k applies only to --scheme mds",
        ),
        (
            &[
                "run",
                "--n",
                "100000",
                "--scheme",
                "mds",
                "--k",
                "1",
                "--load-model",
                "additive",
            ],
            "draws per trial",
        ),
        (
            &[
                "run",
                "--n",
                "1000",
                "--scheme",
                "uncoded",
                "--trials",
                "100000000000000",
            ],
            "lower --trials",
        ),
    ];
    for (args, expected) in cases {
        // Refused up front: a request checked only as it runs would hang here.
        let out = gcsim()
            .args(*args)
            .timeout(std::time::Duration::from_secs(30))
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        crate::errors::assert_error_text(args, &stderr, &[expected]);
        let first = stderr.lines().next().unwrap_or("");
        assert!(
            first.contains(expected),
            "{args:?}: the first line should say it: {stderr}"
        );
        assert!(out.stdout.is_empty(), "{args:?}");
    }
}

/// An error that echoes a value with a newline in it stays on one line
/// (the control characters are escaped).
#[test]
fn echoed_newlines_are_escaped() {
    let out = super::gcsim()
        .args(["run", "--n", "3", "--scheme", "uncoded", "--out", "a\nb.tsv"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
    assert!(stderr.contains("--out a\\nb.tsv: cannot tell the format"), "{stderr}");
}
