//! Informational lines on stderr (`note: ...`, `wrote ...`, the skipped
//! values, a verdict beside CSV on stdout): printed unless `--quiet`.
//! Warnings and errors do not go through here: they are always printed.
//!
//! One switch for the whole process, set once from the command line before
//! any work, so that every subcommand's notes obey `--quiet` without the
//! flag being threaded through each function that may note something.

use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};

static QUIET: AtomicBool = AtomicBool::new(false);

/// Silences (or restores) the notes.
pub fn set_quiet(quiet: bool) {
    QUIET.store(quiet, Ordering::Relaxed);
}

/// Prints one informational line to stderr, unless quiet.
pub fn print(line: fmt::Arguments) {
    if !QUIET.load(Ordering::Relaxed) {
        eprintln!("{line}");
    }
}

/// `note!("wrote {n} rows")`: [`print`] with `format!` arguments.
macro_rules! note {
    ($($arg:tt)*) => {
        $crate::notes::print(format_args!($($arg)*))
    };
}
pub(crate) use note;
