//! `gcsim man`: the manual page in roff (clap_mangen), on stdout or as
//! gcsim.1 and one gcsim-COMMAND.1 per subcommand in a directory.

use std::io::{BufWriter, Write};
use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::{Args, CommandFactory};
use clap_mangen::Man;
use roff::{Roff, roman};

use super::notes::note;
use super::output::{Stdout, check_in, write_atomically};
use super::{Cli, Status};

/// Write the manual page (roff).
#[derive(Debug, Clone, Args)]
#[command(after_help = "Examples:
  gcsim man | man -l -
  gcsim man --out-dir target/man     # gcsim.1, gcsim-run.1, gcsim-sweep.1, ...
  scripts/man.sh                     # the same, into target/man/")]
pub struct ManArgs {
    /// Write gcsim.1 and one page per subcommand into DIR (created if
    /// missing) instead of gcsim.1 alone to stdout.
    #[arg(long, short, value_name = "DIR")]
    pub out_dir: Option<PathBuf>,
}

/// One manual page: its file name and its roff text.
pub struct Page {
    /// `gcsim.1`, `gcsim-run.1`, ...
    pub file: String,
    /// The page, in roff.
    pub roff: String,
}

/// The pages: gcsim's, then one per subcommand (named gcsim-COMMAND).
pub fn pages() -> Vec<Page> {
    let mut cmd = Cli::command().disable_help_subcommand(true);
    // Names each subcommand gcsim-COMMAND, as its page's title.
    cmd.build();
    let mut pages = vec![page(&cmd)];
    pages.extend(cmd.get_subcommands().filter(|s| !s.is_hide_set()).map(page));
    pages
}

/// `cmd`'s page. clap_mangen fills the text after the options (`after_help`)
/// as a paragraph, which runs the example commands together; here the
/// prose before `Examples:` is a NOTES section and the examples an
/// EXAMPLES section printed line by line (`.nf`), before VERSION.
fn page(cmd: &clap::Command) -> Page {
    let after = cmd.get_after_help().map(|h| h.to_string()).unwrap_or_default();
    let man = Man::new(cmd.clone().after_help(None::<&str>));
    let mut text = Vec::new();
    man.render(&mut text).expect("writing to a Vec does not fail");
    let text = String::from_utf8(text).expect("clap_mangen writes UTF-8");
    let (notes, examples) = match after.split_once("Examples:") {
        Some((notes, examples)) => (notes.trim(), examples.trim_matches('\n')),
        None => (after.trim(), ""),
    };
    let mut extra = Roff::new();
    if !notes.is_empty() {
        extra.control("SH", ["NOTES"]);
        for paragraph in notes.split("\n\n") {
            extra.control("PP", []).text([roman(paragraph.replace('\n', " "))]);
        }
    }
    if !examples.is_empty() {
        extra.control("SH", ["EXAMPLES"]).control("nf", []);
        for line in examples.lines() {
            extra.text([roman(line)]);
        }
        extra.control("fi", []);
    }
    let extra = extra.to_roff();
    let roff = match text.find("\n.SH VERSION") {
        Some(i) => format!("{}\n{extra}{}", &text[..i], &text[i + 1..]),
        None => text + &extra,
    };
    Page {
        file: man.get_filename(),
        roff,
    }
}

impl ManArgs {
    /// Writes the page to stdout, or every page into --out-dir: every path
    /// checked first (see [`check_in`]), then all written.
    pub fn execute(self) -> Result<Status> {
        let pages = pages();
        let Some(dir) = self.out_dir else {
            let mut out = BufWriter::new(Stdout::lock());
            out.write_all(pages[0].roff.as_bytes())?;
            out.flush()?;
            return Ok(Status::Success);
        };
        std::fs::create_dir_all(&dir)
            .with_context(|| format!("--out-dir {}: cannot create the directory", dir.display()))?;
        for page in &pages {
            check_in("--out-dir", &dir, &page.file)?;
        }
        for page in &pages {
            write_atomically(&dir.join(&page.file), |out| out.write_all(page.roff.as_bytes()))?;
        }
        note!("wrote {} pages to {}", pages.len(), dir.display());
        Ok(Status::Success)
    }
}
