//! The progress bar: an indicatif implementation of the engine's `Progress`
//! observer. It stays hidden under `--quiet`, when stderr is not a terminal,
//! and during the first second, so quick runs print nothing.
//! `GCSIM_PROGRESS_DELAY_MS` sets that delay in milliseconds (0 shows the bar
//! from the first trials, which is how the tests see it on any machine).

use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use gcsim::engine::Progress;

/// Set by a front end that runs commands inside a longer-lived process (the
/// Python module, on KeyboardInterrupt) to stop the run under way; the
/// command line leaves it unset and ends on a signal instead.
pub static INTERRUPT: AtomicBool = AtomicBool::new(false);

/// What a run stopped by [`INTERRUPT`] unwinds with, from the next chunk
/// done: its partial results are dropped with it.
#[derive(Debug)]
pub struct Interrupted;

/// Shows trials (or other steps) done, rate and ETA on stderr.
pub struct Bar {
    bar: Option<ProgressBar>,
    started: Instant,
    /// How long a run goes before the bar is drawn.
    delay: Duration,
    /// What the first pass is doing: `simulating`.
    doing: &'static str,
}

impl Bar {
    /// A bar for `trials` trials, or none.
    pub fn new(quiet: bool, trials: u64) -> Self {
        Self::counting(quiet, trials, "simulating", "trials")
    }

    /// A bar for `len` steps called `unit`, while `doing` (e.g.
    /// `decoding`, `patterns`), or none.
    pub fn counting(quiet: bool, len: u64, doing: &'static str, unit: &str) -> Self {
        let bar = (!quiet && std::io::stderr().is_terminal()).then(|| {
            let bar = ProgressBar::with_draw_target(Some(len), ProgressDrawTarget::hidden());
            let style = ProgressStyle::with_template(&format!(
                "{{prefix}} [{{elapsed_precise}}] {{wide_bar}} {{human_pos}}/{{human_len}} {unit} ({{per_sec}}, ETA {{eta}})"
            ))
            .expect("the template is valid");
            bar.set_style(style);
            bar
        });
        Self {
            bar,
            started: Instant::now(),
            delay: delay(),
            doing,
        }
    }
}

/// One second, or `GCSIM_PROGRESS_DELAY_MS` where it holds a whole number.
fn delay() -> Duration {
    std::env::var("GCSIM_PROGRESS_DELAY_MS")
        .ok()
        .and_then(|ms| ms.trim().parse().ok())
        .map_or(Duration::from_secs(1), Duration::from_millis)
}

impl Progress for Bar {
    fn pass(&self, pass: u32, trials: u64) {
        if let Some(bar) = &self.bar {
            bar.set_prefix(if pass == 1 {
                self.doing.to_string()
            } else {
                format!("refining quantiles (pass {pass})")
            });
            bar.set_length(trials);
            bar.set_position(0);
        }
    }

    fn advance(&self, trials: u64) {
        if INTERRUPT.load(Ordering::Relaxed) {
            // `resume_unwind` skips the panic hook: nothing is printed, and
            // rayon carries the unwind to the thread that started the run.
            std::panic::resume_unwind(Box::new(Interrupted));
        }
        if let Some(bar) = &self.bar {
            if bar.is_hidden() && self.started.elapsed() >= self.delay {
                bar.set_draw_target(ProgressDrawTarget::stderr());
            }
            bar.inc(trials);
        }
    }

    fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}
