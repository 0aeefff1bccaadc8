//! The `gcsim` binary: parse, validate, run, report.

mod cli;

use std::io;
use std::process::ExitCode;

use clap::Parser;

/// Exit status for invalid input (as clap uses for usage errors).
const EXIT_USAGE: u8 = 2;
/// Exit status for a failure while running or writing.
const EXIT_FAILURE: u8 = 1;

/// A closed stdout (`gcsim ... | head`) is a normal way to stop reading.
fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain()
        .filter_map(|e| e.downcast_ref::<io::Error>())
        .any(|e| e.kind() == io::ErrorKind::BrokenPipe)
}

fn fail(err: anyhow::Error, code: u8) -> ExitCode {
    if is_broken_pipe(&err) {
        return ExitCode::SUCCESS;
    }
    eprintln!("Error: {}", cli::flags::render(&err));
    ExitCode::from(code)
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

fn main() -> ExitCode {
    let cli = match cli::Cli::try_parse() {
        Ok(cli) => cli,
        Err(err) => return usage_error(err),
    };
    let job = match cli::prepare(cli) {
        Ok(job) => job,
        Err(err) => return fail(err, EXIT_USAGE),
    };
    match job {
        cli::Prepared::Job(job) => match job.execute() {
            Ok(()) => ExitCode::SUCCESS,
            Err(err) if err.is::<cli::UsageError>() => fail(err, EXIT_USAGE),
            Err(err) => fail(err, EXIT_FAILURE),
        },
        cli::Prepared::Scenario(job) => match job.execute() {
            Ok(()) => ExitCode::SUCCESS,
            Err(err) if err.is::<cli::UsageError>() => fail(err, EXIT_USAGE),
            Err(err) => fail(err, EXIT_FAILURE),
        },
        cli::Prepared::Plan(args) => match args.execute() {
            Ok(()) => ExitCode::SUCCESS,
            Err(err) => fail(err, EXIT_USAGE),
        },
        cli::Prepared::Merge(args) => match args.execute() {
            Ok(()) => ExitCode::SUCCESS,
            Err(err) => fail(err, EXIT_USAGE),
        },
        cli::Prepared::Fit(args) => match args.execute() {
            Ok(()) => ExitCode::SUCCESS,
            Err(err) if err.is::<cli::UsageError>() => fail(err, EXIT_USAGE),
            Err(err) => fail(err, EXIT_FAILURE),
        },
        cli::Prepared::Verify(args) => match args.execute() {
            Ok(true) => ExitCode::SUCCESS,
            Ok(false) => ExitCode::from(EXIT_FAILURE),
            Err(err) => fail(err, EXIT_USAGE),
        },
        cli::Prepared::Codes(job) => match job.execute() {
            Ok(true) => ExitCode::SUCCESS,
            Ok(false) => ExitCode::from(EXIT_FAILURE),
            Err(err) => fail(err, EXIT_FAILURE),
        },
    }
}
