//! `gcsim completions SHELL`: a completion script for the shell, on stdout
//! (clap_complete, as ripgrep and fd ship theirs).

use std::io::Write;

use anyhow::{Context, Result};
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
        // Into memory first: clap_complete panics on a failed write (a full
        // device), where a write error here is reported as any other.
        let mut script = Vec::new();
        clap_complete::generate(self.shell, &mut Cli::command(), "gcsim", &mut script);
        let mut out = Stdout::lock();
        out.write_all(&script)
            .and_then(|()| out.flush())
            .context("cannot write the completion script to stdout")?;
        Ok(Status::Success)
    }
}
