//! Progress on standard error for long work (`rank-evaluate`, large ledger appends,
//! `--pending` attribution, bulk ingest): drawn only when stderr is a terminal and the
//! work has lasted a second, cleared when it ends; never written into a pipe, a file or
//! standard output, so JSON output and captured logs never see it.

use std::io::IsTerminal as _;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// Set by [`suppress`]: no progress for the rest of the process.
static SUPPRESSED: AtomicBool = AtomicBool::new(false);

/// How long work runs before its progress appears.
const DELAY: Duration = Duration::from_secs(1);

/// Turns progress off for the rest of the process (the MCP server, whose stderr is its
/// client's log).
pub fn suppress() {
    SUPPRESSED.store(true, Ordering::Relaxed);
}

/// Whether progress is drawn: never when suppressed, only on a terminal.
pub fn enabled(suppressed: bool, stderr_is_terminal: bool) -> bool {
    !suppressed && stderr_is_terminal
}

/// A spinner or counter for one piece of work; dropping it clears the line.
#[derive(Debug)]
pub struct Progress {
    bar: Option<ProgressBar>,
}

impl Progress {
    /// A spinner naming the step (`message`), for work whose size is unknown.
    pub fn spinner(message: &str) -> Progress {
        Progress::start(None, message)
    }

    /// A counter of `total` items (`None`: a count without a bar), advanced by [`inc`].
    ///
    /// [`inc`]: Progress::inc
    pub fn counter(total: Option<u64>, message: &str) -> Progress {
        Progress::start(Some(total), message)
    }

    fn start(counted: Option<Option<u64>>, message: &str) -> Progress {
        if !enabled(
            SUPPRESSED.load(Ordering::Relaxed),
            std::io::stderr().is_terminal(),
        ) {
            return Progress { bar: None };
        }
        let template = match counted {
            None => "{spinner} {msg} {elapsed}",
            Some(None) => "{spinner} {msg}: {human_pos} {per_sec} {elapsed}",
            Some(Some(_)) => {
                "{spinner} {msg} [{bar:30}] {human_pos}/{human_len} {per_sec} eta {eta}"
            }
        };
        let bar = ProgressBar::with_draw_target(counted.flatten(), ProgressDrawTarget::hidden());
        if let Ok(style) = ProgressStyle::with_template(template) {
            bar.set_style(style.progress_chars("=> "));
        }
        bar.set_message(message.to_owned());
        let shown = bar.clone();
        // Shown after the delay, from its own thread, so that short work draws nothing; a
        // thread that cannot be started leaves the progress hidden.
        let _ = std::thread::Builder::new()
            .name("progress".to_owned())
            .spawn(move || {
                std::thread::sleep(DELAY);
                if !shown.is_finished() {
                    shown.set_draw_target(ProgressDrawTarget::stderr());
                    shown.enable_steady_tick(Duration::from_millis(120));
                }
            });
        Progress { bar: Some(bar) }
    }

    /// Counts `n` more items done.
    pub fn inc(&self, n: u64) {
        if let Some(bar) = &self.bar {
            bar.inc(n);
        }
    }

    /// A handle that advances this counter from another thread (the reader of a ledger
    /// append); the progress still ends when this value is dropped.
    pub fn ticker(&self) -> Ticker {
        Ticker {
            bar: self.bar.clone(),
        }
    }

    /// Names the current step.
    pub fn set_message(&self, message: &str) {
        if let Some(bar) = &self.bar {
            bar.set_message(message.to_owned());
        }
    }
}

/// Advances a [`Progress`] counter from any thread.
#[derive(Debug, Clone)]
pub struct Ticker {
    bar: Option<ProgressBar>,
}

impl Ticker {
    /// Counts `n` more items done.
    pub fn inc(&self, n: u64) {
        if let Some(bar) = &self.bar {
            bar.inc(n);
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn progress_is_drawn_only_on_an_unsuppressed_terminal() {
        assert!(enabled(false, true));
        assert!(!enabled(false, false));
        assert!(!enabled(true, true));
        assert!(!enabled(true, false));
    }

    #[test]
    fn progress_off_a_terminal_holds_no_bar() {
        // The test harness's stderr is captured or a terminal; suppressed, it is never drawn.
        suppress();
        let progress = Progress::counter(Some(10), "counting");
        progress.inc(3);
        progress.set_message("still counting");
        assert!(progress.bar.is_none());
    }
}
