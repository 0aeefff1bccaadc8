//! Where results go. `--format` and `--out` become a format and a checked
//! destination before any work starts; every file is written atomically (a
//! temporary sibling renamed into place, so an interrupted write leaves any
//! previous file as it was); a result goes to its file or to stdout in its
//! format through [`gcsim::export::write`].

use std::io::{self, BufWriter, IsTerminal, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use clap::ValueEnum;
use clap::builder::{PossibleValue, TypedValueParser};
use tempfile::NamedTempFile;

use gcsim::export::{self, Export, Format};

/// Where and how results go, validated before any work starts.
#[derive(Debug)]
pub struct Output {
    /// Format of the file, or of stdout when there is no file.
    pub format: Format,
    /// The file to write, if any.
    pub file: Option<Destination>,
}

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
            });
        };
        let format = match format.or_else(|| Format::from_extension(path)) {
            Some(f) => f,
            None => bail!(
                "--out {}: cannot tell the format from the extension; use .csv, .json or .txt, or give --format",
                path.display()
            ),
        };
        Ok(Self {
            format,
            file: Some(Destination::new(path)?),
        })
    }

    /// Writes `report` in the output's format to the file (and the table to
    /// stdout when stdout is a terminal), or to stdout. Returns the file
    /// written, if any.
    pub fn write<R: Export + ?Sized>(&self, report: &R) -> Result<Option<&Path>> {
        let stdout = io::stdout();
        match &self.file {
            Some(dest) => {
                dest.write(|out| export::write(report, self.format, out))?;
                if stdout.is_terminal() {
                    report.write_table(&mut stdout.lock())?;
                }
                Ok(Some(dest.path()))
            }
            None => {
                let mut out = BufWriter::new(stdout.lock());
                export::write(report, self.format, &mut out)?;
                out.flush()?;
                Ok(None)
            }
        }
    }
}

/// A checked `--out` file: its directory exists and takes new files.
#[derive(Debug)]
pub struct Destination {
    path: PathBuf,
}

impl Destination {
    fn new(path: &Path) -> Result<Self> {
        let dir = parent(path);
        if dir.exists() && !dir.is_dir() {
            bail!(
                "--out {}: {} is not a directory; give a path in an existing directory",
                path.display(),
                dir.display()
            );
        }
        if !dir.is_dir() {
            bail!(
                "--out {}: the directory {} does not exist",
                path.display(),
                dir.display()
            );
        }
        if path.is_dir() {
            bail!("--out {}: is a directory; give a file name", path.display());
        }
        probe(dir).with_context(|| format!("--out {}", path.display()))?;
        Ok(Self {
            path: path.to_path_buf(),
        })
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Writes the file atomically (see [`write_atomically`]).
    pub fn write(&self, write: impl FnOnce(&mut dyn Write) -> io::Result<()>) -> Result<()> {
        AtomicFile::create(&self.path)
            .with_context(|| format!("--out {}", self.path.display()))?
            .fill(write)
    }
}

/// The directory `path` goes in (`.` for a bare file name).
pub fn parent(path: &Path) -> &Path {
    match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    }
}

/// A temporary file `.gcsim-*suffix` in `dir`: the one place temporaries are made.
fn temp_in(dir: &Path, suffix: &str) -> Result<NamedTempFile> {
    tempfile::Builder::new()
        .prefix(".gcsim-")
        .suffix(suffix)
        .tempfile_in(dir)
        .with_context(|| format!("cannot write in {}", dir.display()))
}

/// Fails now, not after the work, if no file can be created in `dir`; the
/// probe is removed at once, so an interrupted run leaves nothing behind.
pub fn probe(dir: &Path) -> Result<()> {
    drop(temp_in(dir, ".partial")?);
    Ok(())
}

/// A file being written: a temporary sibling of its path until [`commit`](Self::commit).
pub struct AtomicFile {
    tmp: NamedTempFile,
    path: PathBuf,
}

impl AtomicFile {
    /// Opens the temporary sibling of `path`. Its name ends with `path`'s
    /// extension, as a drawing backend chooses its format by it.
    pub fn create(path: &Path) -> Result<Self> {
        let suffix = match path.extension() {
            Some(ext) => format!(".partial.{}", ext.to_string_lossy()),
            None => ".partial".to_string(),
        };
        Ok(Self {
            tmp: temp_in(parent(path), &suffix)?,
            path: path.to_path_buf(),
        })
    }

    /// Where the content goes until the commit.
    pub fn temp_path(&self) -> &Path {
        self.tmp.path()
    }

    /// Writes the content with `write`, then commits.
    pub fn fill(mut self, write: impl FnOnce(&mut dyn Write) -> io::Result<()>) -> Result<()> {
        let mut out = BufWriter::new(self.tmp.as_file_mut());
        write(&mut out)
            .and_then(|()| out.flush())
            .with_context(|| format!("cannot write {}", self.path.display()))?;
        drop(out);
        self.commit()
    }

    /// Syncs the content, makes the file readable as any file the user
    /// writes (temporary files are created private) and renames it into place.
    pub fn commit(self) -> Result<()> {
        let path = &self.path;
        let fail = || format!("cannot write {}", path.display());
        self.tmp.as_file().sync_all().with_context(fail)?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(self.tmp.path(), std::fs::Permissions::from_mode(0o644)).with_context(fail)?;
        }
        self.tmp.persist(path).with_context(fail)?;
        Ok(())
    }
}

/// Writes `path` through a temporary file in its directory, renamed into
/// place only once complete: an interrupted write leaves any previous file.
pub fn write_atomically(path: &Path, write: impl FnOnce(&mut dyn Write) -> io::Result<()>) -> Result<()> {
    AtomicFile::create(path)?.fill(write)
}

/// `--format` of the simulating commands: a [`Format`] as clap lists it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FormatArg(pub Format);

impl ValueEnum for FormatArg {
    fn value_variants<'a>() -> &'a [Self] {
        const VARIANTS: [FormatArg; 3] = [
            FormatArg(Format::ALL[0]),
            FormatArg(Format::ALL[1]),
            FormatArg(Format::ALL[2]),
        ];
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
    match format {
        Format::Table => "Aligned columns (the default on a terminal)",
        Format::Csv => "Comma-separated values with a header row (the default when piped)",
        Format::Json => r#"{"config": {...}, "rows": [...]}"#,
    }
}
