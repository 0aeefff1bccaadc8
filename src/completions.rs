//! `gcsim completions SHELL`: a completion script for the shell, on stdout
//! (clap_complete, as ripgrep and fd ship theirs).

use std::io::{BufWriter, Write};

use anyhow::Result;
use clap::{Args, CommandFactory};
use clap_complete::Shell;

use super::output::Stdout;
use super::{Cli, Status};

/// Print a completion script for SHELL.
#[derive(Debug, Clone, Args)]
#[command(after_help = "Examples:
  gcsim completions bash > ~/.local/share/bash-completion/completions/gcsim
  gcsim completions zsh > ~/.zfunc/_gcsim      # with fpath+=~/.zfunc
  gcsim completions fish > ~/.config/fish/completions/gcsim.fish")]
pub struct CompletionsArgs {
    /// The shell.
    #[arg(value_name = "SHELL", ignore_case = true)]
    pub shell: Shell,
}

impl CompletionsArgs {
    /// Writes the script to stdout.
    pub fn execute(self) -> Result<Status> {
        let mut out = BufWriter::new(Stdout::lock());
        clap_complete::generate(self.shell, &mut Cli::command(), "gcsim", &mut out);
        out.flush()?;
        Ok(Status::Success)
    }
}
