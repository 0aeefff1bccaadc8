//! Reproducibility: the same seed gives the same bytes on any thread count
//! and for every scheme; different seeds give different results.

use super::stdout_of;

#[test]
fn same_seed_same_bytes_on_any_thread_count() {
    for scheme in ["uncoded", "ignore", "frc", "crc", "comm-efficient", "mds"] {
        let args = |threads: &'static str| {
            let mut a = vec![
                "sweep",
                "--n",
                "12",
                "--scheme",
                scheme,
                "--trials",
                "70000",
                "--format",
                "csv",
                "--threads",
                threads,
                "--dist",
                "pareto:scale=1,shape=3",
            ];
            if scheme != "uncoded" {
                a.extend(["--s", "1,2,3"]);
            }
            if scheme == "comm-efficient" {
                a.extend(["--m", "2"]);
            }
            a
        };
        let one = stdout_of(&args("1"));
        assert_eq!(one, stdout_of(&args("2")), "{scheme}");
        assert_eq!(one, stdout_of(&args("3")), "{scheme}");
    }
}

#[test]
fn different_seeds_differ() {
    let a = stdout_of(&[
        "run", "--n", "10", "--scheme", "crc", "--s", "2", "--trials", "1000", "--seed", "1",
    ]);
    let b = stdout_of(&[
        "run", "--n", "10", "--scheme", "crc", "--s", "2", "--trials", "1000", "--seed", "2",
    ]);
    assert_ne!(a, b);
}
