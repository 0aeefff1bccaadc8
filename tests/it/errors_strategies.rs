//! Bad input to the asynchronous strategies and the partial-straggler
//! codes, under the contract of [`super::errors`]: exit status 2 and one
//! line naming the flag and what is accepted.

use super::errors::assert_usage_error;

#[test]
fn asynchronous_and_partial_flags() {
    let cases: &[(&[&str], &[&str])] = &[
        (
            &["run", "--n", "10", "--scheme", "k-async", "--k", "0"],
            &["--k 0 is out of range for k-async with n=10; accepted: 1..10"],
        ),
        (
            &["run", "--n", "10", "--scheme", "k-batch-async"],
            &["k-batch-async needs --k (e.g. --k 80)"],
        ),
        (
            &["run", "--n", "10", "--scheme", "partial-crc", "--s", "2"],
            &["partial-crc needs --parts (e.g. --parts 10)"],
        ),
        (
            &[
                "run",
                "--n",
                "10",
                "--scheme",
                "partial-crc",
                "--s",
                "3",
                "--parts",
                "3",
            ],
            &["partial-crc", "s=3, L=3", "L must be at least s+1", "L can be 4.."],
        ),
        (
            &[
                "run",
                "--n",
                "10",
                "--scheme",
                "partial-frc",
                "--s",
                "2",
                "--parts",
                "6",
            ],
            &["partial-frc", "s+1 must divide n", "accepted s: 0, 1, 4, 9"],
        ),
        (
            &["run", "--n", "10", "--scheme", "crc", "--s", "2", "--parts", "6"],
            &["--parts applies only to --scheme partial-frc and partial-crc, not to --scheme crc"],
        ),
        (
            &["sweep", "--n", "10", "--scheme", "crc", "--s", "2", "--parts", "6"],
            &["--parts applies only to --scheme partial-frc and partial-crc, neither of which is in --scheme"],
        ),
        (
            &[
                "sweep",
                "--n",
                "10",
                "--scheme",
                "partial-crc",
                "--s",
                "5..8",
                "--parts",
                "3",
            ],
            &[
                "no configuration to simulate",
                "partial-crc at s=5, L=3",
                "L must be at least s+1",
            ],
        ),
        (
            &[
                "run",
                "--n",
                "10",
                "--scheme",
                "partial-crc",
                "--s",
                "2",
                "--parts",
                "x",
            ],
            &["--parts", "not a whole number"],
        ),
        (
            &[
                "run",
                "--n",
                "10",
                "--scheme",
                "partial-crc",
                "--s",
                "3",
                "--parts",
                "2000000",
            ],
            &["--parts 2000000 is out of range for partial-crc with n=10; accepted: 4..1000000"],
        ),
        (
            &["plan", "--n", "10", "--scheme", "crc,partial-crc"],
            &["--scheme partial-crc needs --parts"],
        ),
        (
            &["plan", "--n", "10", "--scheme", "crc", "--parts", "4"],
            &["--parts applies only to --scheme partial-frc and partial-crc"],
        ),
        (
            &["codes", "--n", "10", "--scheme", "partial-crc", "--s", "2"],
            &["partial-crc's coded part is crc's code at the same s; check it with gcsim codes --scheme crc"],
        ),
        (
            &["codes", "--n", "10", "--scheme", "partial-frc", "--s", "1"],
            &["partial-frc's coded part is frc's code at the same s; check it with gcsim codes --scheme frc"],
        ),
        (
            &["codes", "--n", "10", "--scheme", "k-async", "--k", "5"],
            &["k-async sends uncoded results and has no encoding matrix"],
        ),
        (
            &[
                "sweep",
                "--n",
                "10",
                "--scheme",
                "crc",
                "--s",
                "1",
                "--speculate-after",
                "0.5",
            ],
            &["--speculate-after applies only to --scheme speculative, which is not in --scheme"],
        ),
        (
            &[
                "run",
                "--n",
                "10",
                "--scheme",
                "speculative",
                "--speculate-factor",
                "0.5",
            ],
            &[
                "--speculate-factor 0.5 is out of range for speculative",
                "a number from 1 to 1e6",
            ],
        ),
        (
            &["run", "--n", "10", "--scheme", "k-batch-sync", "--k", "11"],
            &["--k 11 is out of range for k-batch-sync with n=10; accepted: 1..10"],
        ),
    ];
    for (args, expected) in cases {
        assert_usage_error(args, None, expected);
    }
}

/// A scheme's error inside a sweep is said once, not once more as its cause.
#[test]
fn a_sweep_says_a_scheme_error_once() {
    let out = assert_cmd::Command::cargo_bin("gcsim")
        .unwrap()
        .args(["sweep", "--n", "10", "--scheme", "k-async", "--k", "11"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.matches("out of range for k-async").count(), 1, "{stderr}");
}
