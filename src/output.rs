//! Where results go. `--format` and `--out` become a format and a checked
//! destination before any work starts (no two outputs of a command, nor an
//! output and an input, one file: see [`names`]); every file is written
//! atomically (a temporary sibling renamed into place, so an interrupted
//! write leaves any previous file as it was; see `atomic`), all of a
//! command's files are moved into place together once all are complete
//! (see [`transaction`]), and no temporary file outlives the process (see
//! [`temps`]); a result goes to its file or to stdout in its format through
//! [`gcsim::export::write`].

mod atomic;
mod file;
pub mod names;
pub mod temps;
mod transaction;

pub use atomic::{AtomicFile, check, check_in, probe, write_atomically};
pub use transaction::{current, keep, transaction};

use std::io::{self, BufWriter, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use anyhow::{Context, Result, bail};
use clap::ValueEnum;
use clap::builder::{PossibleValue, TypedValueParser};
use serde::Serialize;

use super::flags::{COLUMNS, FORMAT, OUT};
use gcsim::export::{self, Columns, Export, Format, column_names};

/// Where and how results go, validated before any work starts.
#[derive(Debug)]
pub struct Output {
    /// Format of the file, or of stdout when there is no file.
    pub format: Format,
    /// The file to write, if any.
    pub file: Option<Destination>,
    /// The columns of the table and the CSV (`--columns`); all if `None`.
    pub columns: Option<Columns>,
    /// A buffer that takes the result in place of the file and stdout:
    /// how a front end other than the command line (the Python module)
    /// receives it in memory. `None` on the command line.
    pub memory: Option<Memory>,
}

/// The usual extension of a file in `format`.
fn text_extension(format: Format) -> &'static str {
    match format {
        Format::Csv => "csv",
        Format::Json => "json",
        Format::Table => "txt",
        Format::Markdown => "md",
        Format::Latex => "tex",
    }
}

/// The bytes a report was written as, shared with whoever reads them.
pub type Memory = Arc<Mutex<Vec<u8>>>;

impl Output {
    /// The format and destination of `--format` and `--out`: the format from
    /// the flag, else from the file's extension, else table on a terminal and
    /// CSV otherwise. An unwritable destination fails here, before the work.
    pub fn resolve(format: Option<Format>, out: Option<&Path>) -> Result<Self> {
        let Some(path) = out else {
            let default = if io::stdout().is_terminal() {
                Format::Table
            } else {
                Format::Csv
            };
            return Ok(Self {
                format: format.unwrap_or(default),
                file: None,
                columns: None,
                memory: None,
            });
        };
        // A figure's name holding text would not open as the figure it names.
        if let (Some(f), Some(_)) = (format, gcsim_figures::plot::FigureFormat::of(path)) {
            bail!(
                "{OUT} {}: a figure's extension, but {FORMAT} {f} writes text; give the file a .{} name (a figure goes to --plot, where the command has one)",
                path.display(),
                text_extension(f)
            );
        }
        let format = match format.or_else(|| Format::from_extension(path)) {
            Some(f) => f,
            None => bail!(
                "{OUT} {}: cannot tell the format from the extension; use .csv, .json, .txt, .md or .tex, or give {FORMAT}",
                path.display()
            ),
        };
        Ok(Self {
            format,
            file: Some(Destination::new(path)?),
            columns: None,
            memory: None,
        })
    }

    /// The output with only the columns of `--columns`, checked against the
    /// CSV columns of rows of type `T` (all if none given).
    pub fn with_columns<T: Serialize + Default>(self, given: &[String]) -> Result<Self> {
        self.with_columns_and::<T>(given, &[])
    }

    /// As [`Output::with_columns`], where the rows also have the columns
    /// `extra` that a default row leaves out (the cost view's).
    pub fn with_columns_and<T: Serialize + Default>(mut self, given: &[String], extra: &[&str]) -> Result<Self> {
        if !given.is_empty() {
            let mut accepted = column_names::<T>();
            accepted.extend(extra.iter().map(|c| c.to_string()));
            self.columns = Some(Columns::new(given, &accepted).context(COLUMNS)?);
        }
        Ok(self)
    }

    /// Writes `report` in the output's format to the file (and the table to
    /// stdout when stdout is a terminal), or to stdout, which a reader may
    /// have closed (see [`Stdout`]). Returns the file written, if any.
    pub fn write<R: Export + ?Sized>(&self, report: &R) -> Result<Option<&Path>> {
        if let Some(memory) = &self.memory {
            let mut bytes = memory.lock().unwrap_or_else(|e| e.into_inner());
            export::write_selected(report, self.format, self.columns.as_ref(), &mut *bytes)?;
            return Ok(None);
        }
        match &self.file {
            Some(dest) => {
                let columns = self.columns.as_ref();
                dest.write(|out| export::write_selected(report, self.format, columns, out))?;
                if io::stdout().is_terminal() {
                    export::write_selected(report, Format::Table, columns, &mut Stdout::lock())?;
                }
                Ok(Some(dest.path()))
            }
            None => {
                let mut out = BufWriter::new(Stdout::lock());
                export::write_selected(report, self.format, self.columns.as_ref(), &mut out)?;
                out.flush()?;
                Ok(None)
            }
        }
    }
}

/// A checked `--out` file (see [`check`]).
#[derive(Debug)]
pub struct Destination {
    path: PathBuf,
}

impl Destination {
    fn new(path: &Path) -> Result<Self> {
        check(OUT, path)?;
        Ok(Self {
            path: path.to_path_buf(),
        })
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Writes the file (see [`write_atomically`]).
    pub fn write(&self, write: impl FnOnce(&mut dyn Write) -> io::Result<()>) -> Result<()> {
        write_atomically(&self.path, write)
    }
}

/// Locks the directory `dir` of `flag` for this process alone (`flock` on
/// the directory itself, so no lock file is left), or refuses at once if
/// another process holds it: two runs writing one directory would leave one
/// run's figures beside the other's data. The lock lasts while the returned
/// file is open; the kernel drops it when the process ends, however it ends.
/// A platform that cannot open a directory gets no lock.
pub fn lock_dir(flag: impl std::fmt::Display, dir: &Path) -> Result<Option<std::fs::File>> {
    let Ok(handle) = std::fs::File::open(dir) else {
        return Ok(None);
    };
    match handle.try_lock() {
        Ok(()) => Ok(Some(handle)),
        Err(std::fs::TryLockError::WouldBlock) => bail!(
            "{flag} {}: another gcsim run is writing there now; wait for it to finish or give another {flag}",
            dir.display()
        ),
        // A file system without locks.
        Err(std::fs::TryLockError::Error(_)) => Ok(None),
    }
}

/// Standard output that a reader may close: once a write finds the pipe
/// closed (`gcsim ... | head`), the rest of the text is dropped and the
/// command goes on, so that the files it writes after printing are written.
/// Any other failure (a full device) says that it was stdout's.
pub struct Stdout {
    out: io::StdoutLock<'static>,
    closed: bool,
}

impl Stdout {
    /// Locks stdout.
    pub fn lock() -> Self {
        Self {
            out: io::stdout().lock(),
            closed: false,
        }
    }

    fn keep_going(&mut self, result: io::Result<()>) -> io::Result<()> {
        match result {
            Err(e) if e.kind() == io::ErrorKind::BrokenPipe => {
                self.closed = true;
                Ok(())
            }
            Err(e) => Err(io::Error::new(e.kind(), format!("cannot write to stdout: {e}"))),
            Ok(()) => Ok(()),
        }
    }
}

impl Write for Stdout {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.closed {
            return Ok(buf.len());
        }
        let result = self.out.write_all(buf);
        self.keep_going(result).map(|()| buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        if self.closed {
            return Ok(());
        }
        let result = self.out.flush();
        self.keep_going(result)
    }
}

/// `--format` of the simulating commands: a [`Format`] as clap lists it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FormatArg(pub Format);

impl ValueEnum for FormatArg {
    fn value_variants<'a>() -> &'a [Self] {
        const VARIANTS: [FormatArg; Format::ALL.len()] = {
            let mut out = [FormatArg(Format::ALL[0]); Format::ALL.len()];
            let mut i = 1;
            while i < out.len() {
                out[i] = FormatArg(Format::ALL[i]);
                i += 1;
            }
            out
        };
        &VARIANTS
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        Some(PossibleValue::new(self.0.name()).help(format_help(self.0)))
    }
}

/// A `--format` parser listing each format with `help(format)` in `--help`.
pub fn format_parser(help: fn(Format) -> &'static str) -> impl TypedValueParser<Value = Format> {
    super::listed(Format::ALL, Format::name, help)
}

/// What each `--format` value writes, for the commands that print a report.
pub fn format_help(format: Format) -> &'static str {
    format.help()
}
