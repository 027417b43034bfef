//! Removing a private directory's due files (expired sessions, temporaries whose writer
//! is gone), on every call ([`sweep_private_files`]) or at most once per interval
//! ([`sweep_private_files_paced`], whose one `lstat` of a marker file spares a busy
//! directory a listing and an `lstat` per file on every call).

use std::path::Path;
use std::time::{Duration, SystemTime};

use super::process_may_be_alive;
use super::trust;

/// What a sweep ([`sweep_private_files`]) may remove, as the caller names it from an
/// entry's file name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sweepable {
    /// A file whose modification time is its expiry ([`super::replace_private_file`]'s
    /// `expires`): removed once that has passed.
    Expiring,
    /// A temporary of [`super::replace_private_file`] written by process `pid`: removed once that
    /// process is gone, or an hour after it was written.
    Temporary { pid: u32 },
}

/// A temporary whose writer is still running is left alone for this long.
const STALE_TEMPORARY_AGE: std::time::Duration = std::time::Duration::from_secs(3600);

/// Removes, best effort, the files directly inside `dir` that `classify` names and that
/// are due ([`Sweepable`]). Call it only on a directory checked with
/// [`trust::ensure_private_dirs`]. An entry is judged by its name first, then by its own
/// `lstat` (`DirEntry` metadata; links are never followed): only a regular file owned by
/// this user ([`trust::may_remove`]) goes; a link, a directory, a file of another user
/// or of root, or any name `classify` does not know (a `notes.json` put there by hand)
/// stays. Returns how many went.
pub fn sweep_private_files(dir: &Path, classify: impl Fn(&str) -> Option<Sweepable>) -> usize {
    let now = std::time::SystemTime::now();
    let me = trust::effective_uid();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    let mut removed = 0;
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(kind) = name.to_str().and_then(&classify) else {
            continue;
        };
        let Ok(meta) = entry.metadata() else {
            continue;
        };
        if !trust::may_remove(trust::Facts::of(&meta), me) {
            continue;
        }
        let due = match kind {
            Sweepable::Expiring => meta.modified().is_ok_and(|modified| modified <= now),
            Sweepable::Temporary { pid } => {
                !process_may_be_alive(pid) || changed_before(&meta, now, STALE_TEMPORARY_AGE)
            }
        };
        if due && std::fs::remove_file(entry.path()).is_ok() {
            removed += 1;
        }
    }
    removed
}

/// True when the file's status last changed more than `age` before `now` (its `ctime`:
/// setting the modification time to an expiry does not hide a temporary's age).
fn changed_before(
    meta: &std::fs::Metadata,
    now: std::time::SystemTime,
    age: std::time::Duration,
) -> bool {
    #[cfg(unix)]
    let changed = {
        use std::os::unix::fs::MetadataExt as _;
        u64::try_from(meta.ctime())
            .ok()
            .map(|secs| std::time::UNIX_EPOCH + std::time::Duration::from_secs(secs))
    };
    #[cfg(not(unix))]
    let changed = meta.modified().ok();
    changed
        .and_then(|changed| now.duration_since(changed).ok())
        .is_some_and(|elapsed| elapsed > age)
}

/// True when a paced sweep is due at `now`: never swept (`last` unknown), swept at least
/// `every` ago, or swept "later" than `now` (a clock set back: sweep rather than wait).
pub(crate) fn sweep_due(last: Option<SystemTime>, now: SystemTime, every: Duration) -> bool {
    match last {
        None => true,
        Some(last) => now
            .duration_since(last)
            .map_or(true, |since| since >= every),
    }
}

/// [`sweep_private_files`] at most once per `every`: the time of the last sweep is the
/// modification time of `dir/marker`, a private empty file of ours that the sweep
/// creates (mode 0600) or touches before it runs. The marker is judged by its own
/// `lstat`: one that is not a regular file of this user (a link, a directory, another
/// user's file) is never followed, touched or trusted, and the sweep then runs on every
/// call, as [`sweep_private_files`] does. Returns how many files went, or `None` when
/// the sweep was not due. `classify` must not name the marker.
pub fn sweep_private_files_paced(
    dir: &Path,
    marker: &str,
    every: Duration,
    classify: impl Fn(&str) -> Option<Sweepable>,
) -> Option<usize> {
    let path = dir.join(marker);
    let now = SystemTime::now();
    let ours = match std::fs::symlink_metadata(&path) {
        Ok(meta) if trust::may_remove(trust::Facts::of(&meta), trust::effective_uid()) => {
            Some(meta.modified().ok())
        }
        Ok(_) => None,
        Err(_) => Some(None),
    };
    if let Some(last) = ours {
        if !sweep_due(last, now, every) {
            return None;
        }
        // Best effort: a marker that cannot be written only means the next call sweeps.
        let _ = touch_private(&path, last.is_some(), now);
    }
    Some(sweep_private_files(dir, classify))
}

/// Sets the modification time of the private file `path` to `now`, creating it (mode
/// 0600, never through a link) when `exists` is false.
fn touch_private(path: &Path, exists: bool, now: SystemTime) -> std::io::Result<()> {
    use std::os::unix::fs::OpenOptionsExt as _;
    let mut options = std::fs::OpenOptions::new();
    options.write(true).mode(0o600);
    if exists {
        options.custom_flags(rustix::fs::OFlags::NOFOLLOW.bits() as i32);
    } else {
        options.create_new(true);
    }
    options.open(path)?.set_modified(now)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    #[cfg(unix)]
    #[test]
    fn a_sweep_removes_only_our_own_due_files_and_never_follows_a_link() {
        let dir = tempfile::tempdir().expect("tempdir");
        let elsewhere = tempfile::tempdir().expect("tempdir");
        let past = std::time::SystemTime::now() - std::time::Duration::from_secs(60);
        let future = std::time::SystemTime::now() + std::time::Duration::from_secs(600);
        let make = |at: &Path, name: &str, modified: std::time::SystemTime| {
            let path = at.join(name);
            std::fs::write(&path, b"{}").expect("write");
            std::fs::File::options()
                .write(true)
                .open(&path)
                .and_then(|f| f.set_modified(modified))
                .expect("set mtime");
            path
        };
        let expired = make(dir.path(), "s_expired.json", past);
        let live = make(dir.path(), "s_live.json", future);
        let notes = make(dir.path(), "notes.json", past);
        let target = make(elsewhere.path(), "package.json", past);
        std::os::unix::fs::symlink(&target, dir.path().join("s_link.json")).expect("symlink");
        std::fs::create_dir(dir.path().join("s_dir.json")).expect("mkdir");
        let dead_tmp = make(dir.path(), "t_4294967295", future);
        let own_tmp = make(dir.path(), &format!("t_{}", std::process::id()), future);
        let foreign = make(dir.path(), "s_foreign.json", past);
        let as_root = trust::effective_uid() == 0;
        if as_root {
            std::os::unix::fs::chown(&foreign, Some(65534), Some(65534)).expect("chown");
        }
        let classify = |name: &str| {
            if name.starts_with("s_") {
                Some(Sweepable::Expiring)
            } else {
                name.strip_prefix("t_")
                    .and_then(|pid| pid.parse().ok())
                    .map(|pid| Sweepable::Temporary { pid })
            }
        };
        let removed = sweep_private_files(dir.path(), classify);
        assert!(!expired.exists() && !dead_tmp.exists());
        assert!(live.exists() && notes.exists() && own_tmp.exists());
        assert!(target.exists(), "the file behind a link is never touched");
        assert!(dir.path().join("s_link.json").symlink_metadata().is_ok());
        assert!(dir.path().join("s_dir.json").is_dir());
        assert_eq!(foreign.exists(), as_root, "another user's file stays");
        assert_eq!(removed, if as_root { 2 } else { 3 });
    }

    #[test]
    fn a_paced_sweep_is_due_when_never_run_after_the_interval_or_when_the_clock_went_back() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000);
        let minute = Duration::from_secs(60);
        assert!(sweep_due(None, now, minute));
        assert!(!sweep_due(Some(now - Duration::from_secs(59)), now, minute));
        assert!(sweep_due(Some(now - minute), now, minute));
        assert!(sweep_due(Some(now + Duration::from_secs(5)), now, minute));
    }

    #[cfg(unix)]
    #[test]
    fn a_paced_sweep_runs_once_per_interval_and_never_trusts_a_foreign_marker() {
        let dir = tempfile::tempdir().expect("tempdir");
        let expired = |name: &str| -> PathBuf {
            let path = dir.path().join(name);
            std::fs::write(&path, b"x").expect("write");
            std::fs::File::options()
                .write(true)
                .open(&path)
                .expect("open")
                .set_modified(SystemTime::now() - Duration::from_secs(10))
                .expect("set mtime");
            path
        };
        let classify = |name: &str| name.starts_with("s_").then_some(Sweepable::Expiring);
        let hour = Duration::from_secs(3600);
        let first = expired("s_1");
        assert_eq!(
            sweep_private_files_paced(dir.path(), ".swept", hour, classify),
            Some(1)
        );
        assert!(!first.exists());
        let marker = dir.path().join(".swept");
        let meta = std::fs::symlink_metadata(&marker).expect("the marker");
        assert!(meta.is_file());
        {
            use std::os::unix::fs::PermissionsExt as _;
            assert_eq!(meta.permissions().mode() & 0o777, 0o600);
        }
        // Within the hour: not due, the expired file stays until the next sweep.
        let second = expired("s_2");
        assert_eq!(
            sweep_private_files_paced(dir.path(), ".swept", hour, classify),
            None
        );
        assert!(second.exists());
        // An interval of zero: due at once.
        assert_eq!(
            sweep_private_files_paced(dir.path(), ".swept", Duration::ZERO, classify),
            Some(1)
        );
        // A marker that is a link is neither followed nor trusted: every call sweeps, and
        // the file behind the link keeps its time.
        let elsewhere = tempfile::tempdir().expect("tempdir");
        let target = elsewhere.path().join("target");
        std::fs::write(&target, b"").expect("target");
        let old = SystemTime::now() - hour;
        std::fs::File::options()
            .write(true)
            .open(&target)
            .expect("open")
            .set_modified(old)
            .expect("set mtime");
        std::fs::remove_file(&marker).expect("remove");
        std::os::unix::fs::symlink(&target, &marker).expect("symlink");
        let third = expired("s_3");
        assert_eq!(
            sweep_private_files_paced(dir.path(), ".swept", hour, classify),
            Some(1)
        );
        assert!(!third.exists());
        let kept = std::fs::metadata(&target)
            .expect("target")
            .modified()
            .expect("mtime");
        assert_eq!(kept, old);
    }
}
