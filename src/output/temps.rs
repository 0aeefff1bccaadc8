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
//! writes to the same directory: [`remove_stale`] deletes the files there
//! named exactly as gcsim's temporaries that are older than the running
//! process and whose lock it can take. Each temporary file holds an
//! exclusive `flock` on itself for as long as it exists, and the kernel
//! drops that lock when its process ends, however it ends; so a file whose
//! lock is free belongs to a dead process, and a concurrent run's files are
//! never touched. Where the file system has no locks, the file must also be
//! over an hour old, far longer than any write takes.
//!
//! (`O_TMPFILE` with `linkat` would leave no name to clean, but a drawing
//! backend writes its figure by path, and a nameless file cannot replace an
//! existing one without a named step in between; the locked name works on
//! every file system and platform.)

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard, OnceLock, PoisonError};
use std::time::{Duration, SystemTime};

/// Prefix of every temporary file's name.
pub const PREFIX: &str = ".gcsim-";

/// The stem's ending after the random part: `.gcsim-XXXXXX.partial[.ext]`.
pub const PARTIAL: &str = ".partial";

/// Age past which a temporary file whose lock cannot be asked (a file
/// system without locks) is another, dead run's leftover.
pub const STALE_AFTER: Duration = Duration::from_secs(3600);

/// When this process started (as gcsim measures it: at [`install`], or at
/// the first question asked here).
static STARTED: OnceLock<SystemTime> = OnceLock::new();

/// When this process started: a temporary file made since may be a
/// concurrent run's, made an instant before it took its lock.
pub fn started() -> SystemTime {
    *STARTED.get_or_init(SystemTime::now)
}

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
    started();
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
    started();
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
/// before this process started, whose lock no live process holds (see the
/// module's doc). Anything it cannot read, lock or remove is left.
pub fn remove_stale(dir: &Path) {
    let Ok(entries) = fs::read_dir(dir) else { return };
    let started = started();
    for entry in entries.flatten() {
        let name = entry.file_name();
        if !name.to_str().is_some_and(is_temp_name) {
            continue;
        }
        // The entry's own metadata: a symbolic link is not followed.
        let Ok(meta) = entry.metadata() else { continue };
        let Ok(modified) = meta.modified() else { continue };
        if !meta.is_file() || modified >= started {
            continue;
        }
        if is_dead(&entry.path(), modified) {
            let _ = fs::remove_file(entry.path());
        }
    }
}

/// Whether the temporary file `path`, last modified at `modified`, was left
/// by a process that has ended: its lock is free (or, without locks, it is
/// older than [`STALE_AFTER`]).
fn is_dead(path: &Path, modified: SystemTime) -> bool {
    let Ok(file) = fs::File::open(path) else { return false };
    match file.try_lock() {
        Ok(()) => true,
        Err(fs::TryLockError::WouldBlock) => false,
        Err(fs::TryLockError::Error(_)) => SystemTime::now()
            .duration_since(modified)
            .is_ok_and(|age| age > STALE_AFTER),
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
