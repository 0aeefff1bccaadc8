//! The temporary files gcsim has open, so that none outlives the process.
//!
//! Every temporary file is registered here while it exists. SIGINT, SIGTERM
//! and SIGHUP are received by a thread of their own (signal-hook's iterator,
//! so the signal handler proper only wakes that thread); it takes the
//! registry's lock, removes every file in it and exits with status
//! 128 + the signal, as a shell reports a process the signal ended. Creating,
//! committing and removing a temporary file all hold the same lock, so a
//! signal finds each file either still temporary (removed; the destination
//! keeps its previous content) or already in place (kept).
//!
//! SIGKILL cannot be caught. Its leftovers are removed by a later run that
//! writes to the same directory: [`remove_stale`] deletes gcsim's own
//! temporaries there that were last modified over an hour ago, far longer
//! than any write takes, so that a concurrent run's files are never touched.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::{Duration, SystemTime};

/// Prefix of every temporary file's name.
pub const PREFIX: &str = ".gcsim-";

/// The stem's ending after the random part: `.gcsim-XXXXXX.partial[.ext]`.
pub const PARTIAL: &str = ".partial";

/// Age past which a temporary file is another, dead run's leftover.
pub const STALE_AFTER: Duration = Duration::from_secs(3600);

/// Paths of the temporary files that exist now.
static LIVE: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// The registry, locked. Held while a temporary file is created, committed
/// or removed, and by the signal thread until the process exits.
pub fn live() -> MutexGuard<'static, Vec<PathBuf>> {
    LIVE.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Forgets `path` (it was renamed into place or removed).
pub fn forget(live: &mut Vec<PathBuf>, path: &Path) {
    live.retain(|p| p != path);
}

/// Removes every registered temporary file. What the signal thread does.
pub fn remove_all(live: &mut Vec<PathBuf>) {
    for path in live.drain(..) {
        let _ = fs::remove_file(path);
    }
}

/// Starts the thread that removes the temporary files on SIGINT, SIGTERM or
/// SIGHUP and then exits with status 128 + the signal.
#[cfg(unix)]
pub fn install() -> std::io::Result<()> {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    let mut signals = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP])?;
    std::thread::Builder::new()
        .name("gcsim-signals".into())
        .spawn(move || {
            if let Some(signal) = signals.forever().next() {
                // Keep the lock until exit, so that no temporary is made or
                // renamed into place after the removal.
                let mut live = live();
                remove_all(&mut live);
                std::process::exit(128 + signal);
            }
        })?;
    Ok(())
}

/// No signals to catch on this platform.
#[cfg(not(unix))]
pub fn install() -> std::io::Result<()> {
    Ok(())
}

/// Whether `name` is one of gcsim's temporary files:
/// `.gcsim-` + six random characters + `.partial`, maybe with an extension.
pub fn is_temp_name(name: &str) -> bool {
    let Some(rest) = name.strip_prefix(PREFIX) else {
        return false;
    };
    let Some((random, tail)) = rest.split_at_checked(6) else {
        return false;
    };
    let Some(ext) = tail.strip_prefix(PARTIAL) else {
        return false;
    };
    random.chars().all(|c| c.is_ascii_alphanumeric())
        && (ext.is_empty() || ext.strip_prefix('.').is_some_and(|e| !e.is_empty() && !e.contains('/')))
}

/// Removes the temporary files in `dir` that a run ended by SIGKILL (or a
/// crash) left: regular files named as [`is_temp_name`] says, last modified
/// more than [`STALE_AFTER`] ago. Anything it cannot read or remove is left.
pub fn remove_stale(dir: &Path) {
    let Ok(entries) = fs::read_dir(dir) else { return };
    let now = SystemTime::now();
    for entry in entries.flatten() {
        let name = entry.file_name();
        if !name.to_str().is_some_and(is_temp_name) {
            continue;
        }
        // The entry's own metadata: a symbolic link is not followed.
        let Ok(meta) = entry.metadata() else { continue };
        let old = meta
            .modified()
            .ok()
            .and_then(|m| now.duration_since(m).ok())
            .is_some_and(|age| age > STALE_AFTER);
        if meta.is_file() && old {
            let _ = fs::remove_file(entry.path());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn temp_names_are_recognised_exactly() {
        for name in [
            ".gcsim-Ab12Cd.partial",
            ".gcsim-xxxxxx.partial.png",
            ".gcsim-000000.partial.csv",
        ] {
            assert!(is_temp_name(name), "{name}");
        }
        for name in [
            "gcsim-Ab12Cd.partial",
            ".gcsim-Ab12C.partial",
            ".gcsim-Ab12Cd.partial.",
            ".gcsim-Ab12Cd.partialx",
            ".gcsim-Ab-2Cd.partial",
            ".gcsim-notes.txt",
            "r.csv",
        ] {
            assert!(!is_temp_name(name), "{name}");
        }
    }
}
