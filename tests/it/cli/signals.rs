//! SIGINT, SIGTERM and SIGHUP: the temporary files go, the run exits with
//! 128 + the signal. SIGKILL cannot be caught: a later run into the same
//! directory removes the temporaries it left once they are an hour old.

#![cfg(unix)]

use std::path::Path;
use std::process::{Child, Command as Std, ExitStatus, Stdio};
use std::time::{Duration, Instant, SystemTime};

use super::gcsim;

fn spawn(args: &[&str], dir: &Path) -> Child {
    Std::new(assert_cmd::cargo::cargo_bin("gcsim"))
        .current_dir(dir)
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

fn signal(child: &Child, name: &str) {
    let ok = Std::new("kill")
        .arg(format!("-{name}"))
        .arg(child.id().to_string())
        .status()
        .unwrap()
        .success();
    assert!(ok, "kill -{name}");
}

fn temporaries(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(".gcsim-"))
        .collect()
}

fn wait(child: &mut Child, limit: Duration) -> ExitStatus {
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if start.elapsed() > limit {
            child.kill().unwrap();
            panic!("still running {limit:?} after the signal");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// A signal during the simulation ends the run at once with status
/// 128 + the signal; the previous file is as it was and nothing is left.
/// (The result is written only after the simulation, so this shows the
/// handler's exit, not a removal; the next test catches a temporary file.)
#[test]
fn a_signal_ends_the_run_with_128_plus_the_signal() {
    for (name, number) in [("TERM", 15), ("INT", 2), ("HUP", 1)] {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("x.csv"), "previous").unwrap();
        // About half a minute here if left to finish.
        let args = [
            "run",
            "--n",
            "100",
            "--scheme",
            "crc",
            "--s",
            "5",
            "--trials",
            "100000000",
            "--quiet",
            "--out",
            "x.csv",
        ];
        let mut child = spawn(&args, dir.path());
        std::thread::sleep(Duration::from_millis(500));
        assert!(child.try_wait().unwrap().is_none(), "still running when signalled");
        signal(&child, name);
        let status = wait(&mut child, Duration::from_secs(10));
        assert_eq!(status.code(), Some(128 + number), "SIG{name}: {status:?}");
        assert_eq!(std::fs::read_to_string(dir.path().join("x.csv")).unwrap(), "previous");
        assert_eq!(temporaries(dir.path()), Vec::<String>::new(), "SIG{name}");
    }
}

/// SIGTERM while a figure is being drawn into its temporary file: the file
/// is removed. The figure of a 3 × 1001-point sweep takes about a tenth of
/// a second to draw; the test watches the directory for the temporary
/// `.gcsim-*.partial.png` and signals as soon as it appears. A run whose
/// figure was in place before the signal landed proves nothing (the
/// figure must then be whole) and is repeated.
#[test]
fn a_signal_while_a_file_is_written_removes_the_temporary_file() {
    let args = [
        "sweep",
        "--n",
        "1000000",
        "--s",
        "0..1000",
        "--scheme",
        "crc,ignore,mds",
        "--analytic",
        "--quiet",
        "--out",
        "r.csv",
        "--plot",
        "f.png",
    ];
    for _attempt in 0..10 {
        let dir = tempfile::tempdir().unwrap();
        let mut child = spawn(&args, dir.path());
        let seen = loop {
            if temporaries(dir.path()).iter().any(|n| n.ends_with(".partial.png")) {
                break true;
            }
            if child.try_wait().unwrap().is_some() {
                break false;
            }
            std::thread::sleep(Duration::from_micros(200));
        };
        if !seen {
            continue;
        }
        signal(&child, "TERM");
        let status = wait(&mut child, Duration::from_secs(10));
        assert_eq!(temporaries(dir.path()), Vec::<String>::new(), "{status:?}");
        let figure = dir.path().join("f.png");
        if status.success() || figure.exists() {
            // The figure was renamed into place before the signal arrived
            // (the run may still have been exiting): it must be whole, and
            // the attempt proves nothing.
            let png = std::fs::read(&figure).unwrap();
            assert!(png.ends_with(b"IEND\xaeB`\x82"), "a figure in place is complete");
            continue;
        }
        assert_eq!(status.code(), Some(128 + 15), "{status:?}");
        return;
    }
    panic!("never signalled a run while its figure's temporary file existed");
}

/// A temporary file that a SIGKILLed run left (gcsim's name, made before
/// the run started, its lock free) is removed by the next run that writes
/// into that directory, however recent; one whose lock a live process holds
/// (another run's, still being written) and files of other names are kept.
#[test]
fn a_later_run_removes_stale_temporaries() {
    let dir = tempfile::tempdir().unwrap();
    let two_hours_ago = SystemTime::now() - Duration::from_secs(7200);
    let make = |name: &str, old: bool| {
        let f = std::fs::File::create(dir.path().join(name)).unwrap();
        if old {
            f.set_modified(two_hours_ago).unwrap();
        }
        f
    };
    make(".gcsim-Ab12Cd.partial", true);
    make(".gcsim-Ef34Gh.partial.png", true);
    make(".gcsim-Mn78Op.partial", false);
    let live = make(".gcsim-Ij56Kl.partial", false);
    live.lock().unwrap();
    let live_old = make(".gcsim-Qr90St.partial.svg", true);
    live_old.lock().unwrap();
    make(".gcsim-notes.txt", true);
    std::thread::sleep(Duration::from_millis(20));
    gcsim()
        .current_dir(dir.path())
        .args([
            "run", "--n", "8", "--scheme", "crc", "--s", "1", "--trials", "100", "--out", "r.csv",
        ])
        .assert()
        .success();
    let mut left = temporaries(dir.path());
    left.sort();
    assert_eq!(
        left,
        vec![".gcsim-Ij56Kl.partial", ".gcsim-Qr90St.partial.svg", ".gcsim-notes.txt"]
    );
}
