//! gcsim's Python module, `gcsim._native`: the command line's own commands
//! run in memory.
//!
//! Keyword arguments become the argv the command line takes (`load_model=
//! "scaled"` is `--load-model scaled`: a keyword is the flag, dashes as
//! underscores), which the command line's own parser and validation
//! (`cli::Cli`, then `cli::Config::try_from`) turn into a job; the job writes
//! its JSON report into a buffer instead of stdout. So every flag works and
//! the numbers are the binary's. Errors are the binary's messages with each
//! argument named by its keyword: the module sets the command line's
//! spelling to keywords when it loads ([`cli::flags::set_spelling`]), so its
//! [`cli::flags::Flag`]s and the library's parameters are written as
//! keywords when a message is made, and each value
//! is checked by its own argument's parser first ([`check_values`]). The job
//! runs on its own thread with the GIL released; the calling thread wakes
//! every [`POLL`] to let Python handle signals, and on KeyboardInterrupt
//! stops the job at its next chunk of trials (`cli::progress::INTERRUPT`).

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::Ordering;
use std::sync::mpsc;
use std::time::Duration;

use clap::{ArgAction, CommandFactory, Parser};
use pyo3::exceptions::{PyKeyboardInterrupt, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyList, PyString};

use gcsim_cli as cli;

use cli::output::Memory;
use cli::progress::{INTERRUPT, Interrupted};
use cli::{Config, Status, UsageError};

/// How often the waiting thread takes the GIL to let Python handle signals.
const POLL: Duration = Duration::from_millis(50);

/// The commands the module runs: each writes one report.
const COMMANDS: [&str; 4] = ["run", "sweep", "plan", "train"];

/// Keywords the module sets itself: the report comes back as the return value.
const RESERVED: [&str; 4] = ["format", "out", "shard", "help"];

/// Runs `gcsim COMMAND` with `options` (keyword → `True`/`False`, a string,
/// or a list of strings) and returns its JSON report.
///
/// Raises ValueError for invalid arguments (the command line's message,
/// arguments named by their keywords), KeyboardInterrupt when interrupted,
/// RuntimeError for a failure while running or writing.
#[pyfunction]
fn call(py: Python<'_>, command: &str, options: &Bound<'_, PyDict>) -> PyResult<String> {
    if !COMMANDS.contains(&command) {
        return Err(PyValueError::new_err(format!(
            "unknown command `{command}`; accepted: {}",
            COMMANDS.join(", ")
        )));
    }
    let cmd = subcommand(command);
    let argv = argv(&cmd, options)?;
    let mut config = parse(&cmd, &argv)?;
    let memory = Memory::default();
    config
        .output_mut()
        .expect("every command of COMMANDS writes one report")
        .memory = Some(memory.clone());
    run(py, config)?;
    let bytes = std::mem::take(&mut *memory.lock().unwrap_or_else(|e| e.into_inner()));
    String::from_utf8(bytes).map_err(|e| PyRuntimeError::new_err(format!("the report is not UTF-8: {e}")))
}

/// The clap command of the subcommand `name`.
fn subcommand(name: &str) -> clap::Command {
    cli::Cli::command()
        .find_subcommand(name)
        .cloned()
        .expect("COMMANDS are subcommands")
}

/// The argv of `gcsim COMMAND` for `options`: `--flag` for `True` (nothing
/// for `False`), `--flag VALUE` for a string, a list comma-joined, or one
/// `--flag VALUE` per element where the flag is repeated (`--workers`).
fn argv(cmd: &clap::Command, options: &Bound<'_, PyDict>) -> PyResult<Vec<String>> {
    let mut argv = vec!["gcsim".to_string(), cmd.get_name().to_string()];
    for (key, value) in options.iter() {
        let key: String = key.extract()?;
        let arg = find_arg(cmd, &key)?;
        let flag = format!("--{}", arg.get_long().expect("find_arg finds flags"));
        let takes_value = !matches!(
            arg.get_action(),
            ArgAction::SetTrue | ArgAction::SetFalse | ArgAction::Count
        );
        if value.is_instance_of::<PyBool>() {
            if takes_value {
                return Err(PyValueError::new_err(format!(
                    "{key} takes a value, not {}",
                    value.repr()?
                )));
            }
            if value.extract::<bool>()? {
                argv.push(flag);
            }
            continue;
        }
        if !takes_value {
            return Err(PyValueError::new_err(format!(
                "{key} is a switch: give {key}=True or leave it out, not {}",
                value.repr()?
            )));
        }
        let values: Vec<String> = if value.is_instance_of::<PyString>() {
            vec![value.extract()?]
        } else if value.is_instance_of::<PyList>() {
            value.extract()?
        } else {
            return Err(PyValueError::new_err(format!(
                "{key}: {} is neither a string, a number nor a list",
                value.repr()?
            )));
        };
        let words: Vec<String> = if matches!(arg.get_action(), ArgAction::Append) {
            values.into_iter().flat_map(|v| [flag.clone(), v]).collect()
        } else {
            vec![flag, values.join(",")]
        };
        check_values(arg, &key, &words)?;
        argv.extend(words);
    }
    argv.extend(["--format".to_string(), "json".to_string()]);
    Ok(argv)
}

/// The argument of `cmd` whose keyword is `key`, or an error naming the nearest.
fn find_arg<'c>(cmd: &'c clap::Command, key: &str) -> PyResult<&'c clap::Arg> {
    let accepted = || {
        cmd.get_arguments()
            .filter(|a| !a.is_hide_set())
            .filter_map(keyword)
            .filter(|k| !RESERVED.contains(&k.as_str()))
    };
    if RESERVED.contains(&key) {
        return Err(PyValueError::new_err(format!(
            "{key} is not accepted: gcsim.{} returns its result (save it with result.to_pandas().to_csv(...), or json.dump(result.data, ...))",
            cmd.get_name()
        )));
    }
    if let Some(arg) = cmd.get_arguments().find(|a| keyword(a).as_deref() == Some(key)) {
        return Ok(arg);
    }
    let nearest = accepted().max_by(|a, b| strsim::jaro_winkler(key, a).total_cmp(&strsim::jaro_winkler(key, b)));
    let tip = match nearest {
        Some(n) if strsim::jaro_winkler(key, &n) > 0.8 => format!("; did you mean {n}?"),
        _ => String::new(),
    };
    Err(PyValueError::new_err(format!(
        "unknown argument `{key}` of gcsim.{}{tip} (accepted: {})",
        cmd.get_name(),
        accepted().collect::<Vec<_>>().join(", ")
    )))
}

/// The validated command of `argv`, or ValueError with the command line's
/// message (its arguments written as keywords, the spelling the module
/// sets when it loads).
fn parse(cmd: &clap::Command, argv: &[String]) -> PyResult<Config> {
    let parsed = cli::Cli::try_parse_from(argv).map_err(|e| {
        // The values were checked one by one (`check_values`); what is
        // left is a combination, which clap's kind describes.
        PyValueError::new_err(format!("invalid arguments to gcsim.{}: {}", cmd.get_name(), e.kind()))
    })?;
    Config::try_from(parsed.command).map_err(|e| PyValueError::new_err(cli::flags::render(&e)))
}

/// Checks the values given for `arg` (the argv words after its flag) with
/// the argument's own parser, in a command that has only it, so that a bad
/// value is reported by the keyword `key` that gave it.
fn check_values(arg: &clap::Arg, key: &str, words: &[String]) -> PyResult<()> {
    let alone = clap::Command::new("gcsim").arg(arg.clone());
    let argv = std::iter::once("gcsim".to_string()).chain(words.iter().cloned());
    match alone.try_get_matches_from(argv) {
        Ok(_) => Ok(()),
        Err(err) => Err(PyValueError::new_err(value_message(key, &err))),
    }
}

/// clap's error about one value as one line, written from its parts: the
/// value, the keyword, the parser's reason or the accepted values, and the
/// nearest accepted value.
fn value_message(key: &str, err: &clap::Error) -> String {
    use clap::error::{ContextKind, ContextValue};
    let text = |kind| match err.get(kind) {
        Some(ContextValue::String(s)) => Some(s.clone()),
        Some(ContextValue::Strings(v)) if !v.is_empty() => Some(v.join("', '")),
        _ => None,
    };
    let Some(value) = text(ContextKind::InvalidValue) else {
        return format!("invalid value for '{key}': {}", err.kind());
    };
    let mut message = format!("invalid value '{value}' for '{key}'");
    if let Some(reason) = std::error::Error::source(err) {
        message.push_str(&format!(": {reason}"));
    }
    if let Some(ContextValue::Strings(valid)) = err.get(ContextKind::ValidValue) {
        message.push_str(&format!(" [possible values: {}]", valid.join(", ")));
    }
    if let Some(near) = text(ContextKind::SuggestedValue) {
        message.push_str(&format!(" tip: a similar value exists: '{near}'"));
    }
    gcsim::param::one_line(&message)
}

/// The keyword of `arg`: its flag with dashes as underscores (`--load-model`
/// is `load_model`).
fn keyword(arg: &clap::Arg) -> Option<String> {
    arg.get_long().map(|long| long.replace('-', "_"))
}

/// Executes `config` on a thread of its own while this thread, the GIL
/// released, waits in steps of [`POLL`] and lets Python handle signals in
/// between; a KeyboardInterrupt (or any exception a signal handler raises)
/// stops the job at its next chunk and is raised once the job has unwound.
fn run(py: Python<'_>, config: Config) -> PyResult<()> {
    let (done, finished) = mpsc::channel::<()>();
    // The receiver crosses to the GIL-free closure by reference.
    let finished = std::sync::Mutex::new(finished);
    let job = std::thread::Builder::new()
        .name("gcsim-job".into())
        .spawn(move || {
            let outcome = catch_unwind(AssertUnwindSafe(|| config.execute()));
            let _ = done.send(());
            outcome
        })
        .map_err(|e| PyRuntimeError::new_err(format!("cannot start the job's thread: {e}")))?;
    let wait = || finished.lock().map_or(Ok(()), |f| f.recv_timeout(POLL));
    while let Err(mpsc::RecvTimeoutError::Timeout) = py.detach(wait) {
        if let Err(raised) = py.check_signals() {
            INTERRUPT.store(true, Ordering::SeqCst);
            let _ = py.detach(|| job.join());
            INTERRUPT.store(false, Ordering::SeqCst);
            return Err(raised);
        }
    }
    match py.detach(|| job.join()) {
        Ok(Ok(Ok(Status::Success))) => Ok(()),
        Ok(Ok(Ok(Status::ChecksFailed))) => Err(PyRuntimeError::new_err("a check failed")),
        Ok(Ok(Err(err))) => {
            let message = cli::flags::render(&err);
            if err.chain().any(|e| e.is::<UsageError>()) {
                Err(PyValueError::new_err(message))
            } else {
                Err(PyRuntimeError::new_err(message))
            }
        }
        Ok(Err(payload)) | Err(payload) => {
            if payload.is::<Interrupted>() {
                // The flag was set by another call's interrupt.
                return Err(PyKeyboardInterrupt::new_err("another gcsim call was interrupted"));
            }
            let what = payload
                .downcast_ref::<String>()
                .map(String::as_str)
                .or_else(|| payload.downcast_ref::<&str>().copied())
                .unwrap_or("a panic");
            Err(PyRuntimeError::new_err(format!("gcsim failed: {what}")))
        }
    }
}

/// The version of the gcsim library the module was built from.
#[pyfunction]
fn version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

/// The native part of the `gcsim` package.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    // The module names arguments by their keywords (`load_model`).
    cli::flags::set_spelling(cli::flags::Spelling::Keywords);
    m.add_function(wrap_pyfunction!(call, m)?)?;
    m.add_function(wrap_pyfunction!(version, m)?)?;
    Ok(())
}
