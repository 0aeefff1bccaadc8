//! Outputs onto what is not a plain new file: a device or FIFO is written in
//! place (renaming over it would replace it with a regular file), a symbolic
//! link is written through (its target gets the content, atomically, and
//! the link stays), and an existing file keeps its permission mode.

#![cfg(unix)]

use std::os::unix::fs::{FileTypeExt, PermissionsExt};
use std::path::Path;
use std::process::Command as Std;

use super::gcsim;

const RUN: [&str; 9] = ["run", "--n", "8", "--scheme", "crc", "--s", "1", "--trials", "200"];

fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// Runs `run --out <path> --format csv` and expects success.
fn run_out(path: &Path) {
    gcsim()
        .args(RUN)
        .args(["--quiet", "--format", "csv", "--out"])
        .arg(path)
        .timeout(std::time::Duration::from_secs(60))
        .assert()
        .success();
}

/// `--out /dev/null` leaves /dev/null a character device. As root a rename
/// would replace the machine's /dev/null, so a private node of the same
/// device (made where `mknod` is allowed, as it is for root) is tried first:
/// a regression fails there before /dev/null is touched. Without root, the
/// rename into /dev fails and cannot do harm.
#[test]
fn a_device_stays_a_device() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let node = dir.path().join("null");
    let made = Std::new("mknod")
        .arg(&node)
        .args(["c", "1", "3"])
        .output()
        .is_ok_and(|o| o.status.success());
    if made {
        run_out(&node);
        let kind = std::fs::symlink_metadata(&node).unwrap().file_type();
        assert!(kind.is_char_device(), "{} became {kind:?}", node.display());
        assert_eq!(names(dir.path()), vec!["null"], "no temporary file left");
    }
    run_out(Path::new("/dev/null"));
    let kind = std::fs::symlink_metadata("/dev/null").unwrap().file_type();
    assert!(kind.is_char_device(), "/dev/null became {kind:?}");
}

/// A FIFO receives the output and stays a FIFO. The reader's end is opened
/// first, without waiting for a writer (O_NONBLOCK), and read once the run
/// is over: a run that writes into the FIFO leaves its output in the pipe,
/// and a run that replaces the FIFO instead leaves the reader nothing (no
/// writer ever came), rather than blocking this test.
#[test]
fn a_fifo_receives_the_output() {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("results.csv");
    assert!(Std::new("mkfifo").arg(&fifo).status().unwrap().success());
    let mut reader = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(&fifo)
        .unwrap();
    let out = gcsim()
        .args(RUN)
        .args(["--quiet", "--out"])
        .arg(&fifo)
        .timeout(std::time::Duration::from_secs(60))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let mut got = String::new();
    reader.read_to_string(&mut got).unwrap();
    assert!(got.starts_with("scheme,n,s,"), "the reader got {got:?}");
    assert_eq!(got.lines().count(), 2, "{got}");
    assert!(std::fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo());
    assert_eq!(names(dir.path()), vec!["results.csv"], "no temporary file left");
}

/// A symbolic link stays a link; its target, in another directory, gets the
/// output, through a temporary file in the target's directory (nothing is
/// left in either). Likewise a figure, and a link to a link.
#[test]
fn a_symlink_stays_a_link_and_its_target_gets_the_output() {
    let links = tempfile::tempdir().unwrap();
    let targets = tempfile::tempdir().unwrap();
    let target = targets.path().join("real.csv");
    std::fs::write(&target, "previous").unwrap();
    let link = links.path().join("r.csv");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let second = links.path().join("again.csv");
    std::os::unix::fs::symlink("r.csv", &second).unwrap();
    let figure = targets.path().join("tail.png");
    let figure_link = links.path().join("tail.png");
    std::os::unix::fs::symlink(&figure, &figure_link).unwrap();

    gcsim()
        .args(RUN)
        .args(["--quiet", "--out"])
        .arg(&second)
        .arg("--plot")
        .arg(&figure_link)
        .assert()
        .success();
    for l in [&link, &second, &figure_link] {
        assert!(
            std::fs::symlink_metadata(l).unwrap().file_type().is_symlink(),
            "{}",
            l.display()
        );
    }
    assert!(std::fs::read_to_string(&target).unwrap().starts_with("scheme,n,s,"));
    assert_eq!(&std::fs::read(&figure).unwrap()[1..4], b"PNG");
    assert_eq!(names(links.path()), vec!["again.csv", "r.csv", "tail.png"]);
    assert_eq!(names(targets.path()), vec!["real.csv", "tail.png"]);
}

/// A dangling link names the file to create: the link stays, the file
/// appears where it points.
#[test]
fn a_dangling_symlink_creates_its_target() {
    let dir = tempfile::tempdir().unwrap();
    let link = dir.path().join("r.csv");
    std::os::unix::fs::symlink("made.csv", &link).unwrap();
    run_out(&link);
    assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
    assert!(
        std::fs::read_to_string(dir.path().join("made.csv"))
            .unwrap()
            .starts_with("scheme,n,s,")
    );
}

/// An existing file keeps its mode: a private 0600 result stays private,
/// for `--out`, a figure, a shard and a scenario's files.
#[test]
fn an_existing_file_keeps_its_mode() {
    let dir = tempfile::tempdir().unwrap();
    let private = |name: &str| {
        let p = dir.path().join(name);
        std::fs::write(&p, "previous").unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o600)).unwrap();
        p
    };
    let out = private("r.csv");
    let plot = private("tail.svg");
    let shard = private("part.json");
    let scenario_dir = dir.path().join("out/golden");
    std::fs::create_dir_all(&scenario_dir).unwrap();
    let scenario_csv = scenario_dir.join("schemes.csv");
    std::fs::write(&scenario_csv, "previous").unwrap();
    std::fs::set_permissions(&scenario_csv, std::fs::Permissions::from_mode(0o640)).unwrap();

    gcsim()
        .args(RUN)
        .args(["--quiet", "--out"])
        .arg(&out)
        .arg("--plot")
        .arg(&plot)
        .assert()
        .success();
    gcsim()
        .args(RUN)
        .args(["--quiet", "--shard", "1/1", "--out"])
        .arg(&shard)
        .assert()
        .success();
    gcsim()
        .args(["scenario", "tests/golden/scenario.toml", "--quiet", "--out-dir"])
        .arg(dir.path().join("out"))
        .assert()
        .success();
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o7777;
    for (p, expected) in [(&out, 0o600), (&plot, 0o600), (&shard, 0o600), (&scenario_csv, 0o640)] {
        assert_ne!(std::fs::read_to_string(p).unwrap(), "previous", "{}", p.display());
        assert_eq!(mode(p), expected, "{}", p.display());
    }
    // A new file gets the mode any new file gets (0666 less the umask,
    // which gcsim inherits from this process).
    let reference = dir.path().join("reference");
    std::fs::File::create(&reference).unwrap();
    assert_eq!(mode(&scenario_dir.join("schemes.json")), mode(&reference));
}
