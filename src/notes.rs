//! Informational lines on stderr (`note: ...`, `wrote ...`, the skipped
//! values, a verdict beside CSV on stdout): printed unless `--quiet`.
//! Warnings and errors do not go through here: they are always printed.
//!
//! One switch for the whole process, set once from the command line before
//! any work, so that every subcommand's notes obey `--quiet` without the
//! flag being threaded through each function that may note something.

use std::cell::RefCell;
use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};

static QUIET: AtomicBool = AtomicBool::new(false);

thread_local! {
    /// Notes printed while a command's files wait to be moved into place
    /// (see [`hold`]), if they are held.
    static HELD: RefCell<Option<Vec<String>>> = const { RefCell::new(None) };
}

/// Holds this thread's next notes (from now until [`release`]): a command
/// has written a file that is moved into place only when the command
/// succeeds (see `output::transaction`), and what it notes from here on
/// (`wrote FILE`) is true only then.
pub fn hold() {
    HELD.with(|h| {
        h.borrow_mut().get_or_insert_with(Vec::new);
    });
}

/// Prints the held notes if `print` (the files are in place), else drops
/// them; the next notes are printed at once.
pub fn release(print: bool) {
    for line in HELD.with(|h| h.borrow_mut().take()).into_iter().flatten() {
        if print {
            eprintln!("{line}");
        }
    }
}

/// Silences (or restores) the notes.
pub fn set_quiet(quiet: bool) {
    QUIET.store(quiet, Ordering::Relaxed);
}

/// Prints one informational line to stderr, unless quiet.
pub fn print(line: fmt::Arguments) {
    if QUIET.load(Ordering::Relaxed) {
        return;
    }
    let line = HELD.with(|h| match h.borrow_mut().as_mut() {
        Some(held) => {
            held.push(line.to_string());
            None
        }
        None => Some(line),
    });
    if let Some(line) = line {
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
