//! The `gcsim` binary: parse, validate, run, report.

use gcsim_cli as cli;

use std::io;
use std::process::ExitCode;

use clap::Parser;

use gcsim::param::one_line;

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
        Err(err) => clap_error(err),
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

/// `--help` or `--version` on stdout, exiting 0 once written, or 1 with one
/// line where it cannot be (a full device); a closed pipe is success.
fn print_help(err: &clap::Error) -> ! {
    use std::io::Write;
    match err.print().and_then(|()| io::stdout().flush()) {
        Err(e) if e.kind() != io::ErrorKind::BrokenPipe => {
            let what = if err.kind() == clap::error::ErrorKind::DisplayVersion {
                "the version"
            } else {
                "the help"
            };
            eprintln!("Error: cannot write {what} to stdout: {e}");
            std::process::exit(EXIT_FAILURE.into())
        }
        _ => std::process::exit(err.exit_code()),
    }
}

/// clap's usage error (or `--help`, `--version`) in clap's own format, over
/// several lines: the message, the accepted values or a `tip:` with the
/// nearest name, how to get help. A value given with a control character in
/// it (a newline) is echoed escaped, so the message stays on its first line.
fn clap_error(err: clap::Error) -> ! {
    let raw: Vec<String> = std::env::args_os()
        .skip(1)
        .filter_map(|a| a.into_string().ok())
        .filter(|a| a.contains(char::is_control))
        .collect();
    if !err.use_stderr() {
        print_help(&err)
    }
    if raw.is_empty() {
        err.exit()
    }
    let mut text = err.to_string();
    for value in &raw {
        text = text.replace(value.as_str(), &one_line(value));
    }
    eprint!("{text}");
    std::process::exit(err.exit_code())
}
