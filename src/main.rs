//! The `gcsim` binary: parse, validate, run, report.

mod cli;

use std::io;
use std::process::ExitCode;

use clap::Parser;

use cli::{Config, Status, UsageError};

/// Exit status for a failed check (`verify`, `codes`) and for a failure while
/// running or writing (an I/O error names its file).
const EXIT_FAILURE: u8 = 1;
/// Exit status for invalid input, as clap uses for usage errors.
const EXIT_USAGE: u8 = 2;

fn main() -> ExitCode {
    // Before anything is written: on SIGINT, SIGTERM or SIGHUP, remove the
    // temporary files and exit with 128 + the signal.
    if let Err(err) = cli::output::temps::install() {
        eprintln!(
            "warning: cannot catch SIGINT/SIGTERM/SIGHUP ({err}); an interrupted write may leave a .gcsim-*.partial file"
        );
    }
    let cli = match cli::Cli::try_parse() {
        Ok(cli) => cli,
        Err(err) => return usage_error(err),
    };
    match Config::try_from(cli.command).and_then(Config::execute) {
        Ok(Status::Success) => ExitCode::SUCCESS,
        Ok(Status::ChecksFailed) => ExitCode::from(EXIT_FAILURE),
        Err(err) if is_broken_pipe(&err) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("Error: {}", cli::flags::render(&err));
            ExitCode::from(exit_code(&err))
        }
    }
}

/// The exit status of an error, by its type: a [`UsageError`] is the user's
/// to fix; anything else happened while running or writing.
fn exit_code(err: &anyhow::Error) -> u8 {
    if err.chain().any(|e| e.is::<UsageError>()) {
        EXIT_USAGE
    } else {
        EXIT_FAILURE
    }
}

/// A closed stdout (`gcsim ... | head`) is a normal way to stop reading.
fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain()
        .filter_map(|e| e.downcast_ref::<io::Error>())
        .any(|e| e.kind() == io::ErrorKind::BrokenPipe)
}

/// A clap usage error on one line, like every other error: clap's message
/// spreads the accepted values and the usage over several lines.
fn usage_error(err: clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    if matches!(
        err.kind(),
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
    ) {
        err.exit();
    }
    let text = err.to_string();
    let words: Vec<&str> = text.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
    let line = words.join(" ");
    eprintln!("Error: {}", line.strip_prefix("error: ").unwrap_or(&line));
    ExitCode::from(EXIT_USAGE)
}
