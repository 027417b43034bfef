//! Runs one external evaluator: its argv (no shell) in a process group of its own, the
//! request on standard input, standard output read up to a size limit, and on timeout
//! the whole process group killed (SIGKILL, [`rustix::process::kill_process_group`]) and
//! reaped. What the output means is [`crate::attribution::proposal`]'s.

use std::io::{Read as _, Write as _};
use std::os::unix::process::CommandExt as _;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// How a run ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunEnd {
    /// It exited 0; its standard output.
    Output(Vec<u8>),
    /// It exited with another status (or was killed by a signal).
    Failed,
    /// It printed more than the limit.
    TooLarge,
    /// It ran past its timeout; its process group was killed.
    Timeout,
    /// The program is missing or cannot be run.
    Unavailable,
}

/// How often a running evaluator is polled.
const POLL: Duration = Duration::from_millis(5);

/// Runs `argv` with `request` on stdin, for at most `timeout`, keeping at most
/// `max_output` bytes of its stdout (its stderr is discarded).
pub fn run(argv: &[String], request: &[u8], timeout: Duration, max_output: u64) -> RunEnd {
    let Some((program, args)) = argv.split_first() else {
        return RunEnd::Unavailable;
    };
    let spawned = Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn();
    let Ok(mut child) = spawned else {
        return RunEnd::Unavailable;
    };
    let group = rustix::process::Pid::from_child(&child);
    let stdin = child.stdin.take();
    let request = request.to_vec();
    // A writer and a reader beside the wait, so neither pipe can block the other.
    let writer = std::thread::spawn(move || {
        if let Some(mut stdin) = stdin {
            let _ = stdin.write_all(&request);
        }
    });
    let stdout = child.stdout.take();
    let reader = std::thread::spawn(move || {
        let mut bytes = Vec::new();
        if let Some(stdout) = stdout {
            let _ = stdout
                .take(max_output.saturating_add(1))
                .read_to_end(&mut bytes);
        }
        bytes
    });
    let started = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if started.elapsed() < timeout => std::thread::sleep(POLL),
            _ => break None,
        }
    };
    let Some(status) = status else {
        let _ = rustix::process::kill_process_group(group, rustix::process::Signal::KILL);
        let _ = child.wait();
        let _ = writer.join();
        let _ = reader.join();
        return RunEnd::Timeout;
    };
    // The evaluator exited; anything left of its group goes too (it may hold the pipe).
    let _ = rustix::process::kill_process_group(group, rustix::process::Signal::KILL);
    let _ = writer.join();
    let bytes = reader.join().unwrap_or_default();
    if u64::try_from(bytes.len()).unwrap_or(u64::MAX) > max_output {
        return RunEnd::TooLarge;
    }
    if status.success() {
        RunEnd::Output(bytes)
    } else {
        RunEnd::Failed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(script: &str) -> Vec<String> {
        vec!["/bin/sh".into(), "-c".into(), script.into()]
    }

    #[test]
    fn a_run_returns_output_and_a_slow_one_is_killed() {
        assert_eq!(
            run(&sh("cat"), b"{}", Duration::from_secs(10), 100),
            RunEnd::Output(b"{}".to_vec())
        );
        let started = Instant::now();
        assert_eq!(
            run(
                &sh("sleep 30 & sleep 30"),
                b"",
                Duration::from_millis(200),
                100
            ),
            RunEnd::Timeout
        );
        assert!(started.elapsed() < Duration::from_secs(10));
        assert_eq!(
            run(
                &sh("head -c 200 /dev/zero"),
                b"",
                Duration::from_secs(10),
                100
            ),
            RunEnd::TooLarge
        );
        assert_eq!(
            run(&sh("exit 3"), b"", Duration::from_secs(10), 100),
            RunEnd::Failed
        );
        assert_eq!(
            run(
                &["/nonexistent/evaluator".to_owned()],
                b"",
                Duration::from_secs(1),
                100
            ),
            RunEnd::Unavailable
        );
    }
}
