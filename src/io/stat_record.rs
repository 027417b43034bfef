//! The checked record of a SQLite file this crate writes (the embedded store, the utility
//! ledger): `<file>-checked`, the file's identity, size and change times as a writer of
//! this crate last left it, so that the next writer runs `PRAGMA quick_check` (which
//! reads the whole file) only when the file changed in between.
//!
//! Any write, even one that keeps the size, changes the change time (`ctime`), which
//! cannot be set back; a different stat or a missing record means one check. The record
//! is mode 0600 and never written through a link. Each kind of file has its own
//! [`StatRecord`] version word, so a record of one kind never vouches for another.

use std::path::{Path, PathBuf};

/// `<path><suffix>`, e.g. the `-wal` file beside a database.
pub fn beside(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(suffix);
    PathBuf::from(name)
}

/// The file recording `path`'s stat as the last writer left it: `<path>-checked`.
pub fn record_path(path: &Path) -> PathBuf {
    beside(path, "-checked")
}

/// One kind of checked record: the first word of its lines (a record in another format
/// is ignored).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StatRecord {
    pub version: &'static str,
}

impl StatRecord {
    /// What `path` looks like to `stat`, as one record line (`None` when there is nothing
    /// to stat).
    #[cfg(unix)]
    pub fn stat_line(&self, path: &Path) -> Option<String> {
        use std::os::unix::fs::MetadataExt as _;
        let m = std::fs::metadata(path).ok()?;
        Some(format!(
            "{} dev={} ino={} size={} mtime={}.{:09} ctime={}.{:09}\n",
            self.version,
            m.dev(),
            m.ino(),
            m.size(),
            m.mtime(),
            m.mtime_nsec(),
            m.ctime(),
            m.ctime_nsec()
        ))
    }

    /// What `path` looks like to `stat`, as one record line (`None` when there is nothing
    /// to stat).
    #[cfg(not(unix))]
    pub fn stat_line(&self, path: &Path) -> Option<String> {
        let m = std::fs::metadata(path).ok()?;
        Some(format!(
            "{} size={} modified={:?}\n",
            self.version,
            m.len(),
            m.modified().ok()?
        ))
    }

    /// True when `path` is exactly as the last record of this kind says.
    pub fn unchanged(&self, path: &Path) -> bool {
        let recorded = std::fs::read_to_string(record_path(path)).ok();
        recorded.is_some() && recorded == self.stat_line(path)
    }

    /// Records `path`'s current stat as checked. Call it only after the connection of a
    /// verified write was closed. Failing to record only costs one `quick_check` next
    /// time.
    pub fn record(&self, path: &Path) {
        let Some(line) = self.stat_line(path) else {
            return;
        };
        let record = record_path(path);
        // A write that left the file as recorded (e.g. one kept in the `-wal`) needs no
        // new record.
        if std::fs::read_to_string(&record).is_ok_and(|old| old == line) {
            return;
        }
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create(true).truncate(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt as _;
            // A link at the record's path is never written through (ELOOP).
            options
                .mode(0o600)
                .custom_flags(rustix::fs::OFlags::NOFOLLOW.bits() as i32);
        }
        if let Ok(mut file) = options.open(&record) {
            use std::io::Write as _;
            if file.write_all(line.as_bytes()).is_err() {
                let _ = std::fs::remove_file(&record);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const RECORD: StatRecord = StatRecord {
        version: "reward_memory_test_check_v1",
    };

    #[test]
    fn a_record_matches_only_the_stat_and_the_kind_it_recorded() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("db.sqlite3");
        std::fs::write(&path, b"db").expect("write");
        assert!(!RECORD.unchanged(&path), "no record yet");
        RECORD.record(&path);
        assert!(RECORD.unchanged(&path));
        let other = StatRecord {
            version: "reward_memory_other_check_v1",
        };
        assert!(
            !other.unchanged(&path),
            "another kind's record vouches for nothing"
        );
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            let mode = std::fs::metadata(record_path(&path))
                .expect("record")
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600);
        }
    }

    #[cfg(unix)]
    #[test]
    fn a_record_is_never_written_through_a_link() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("db.sqlite3");
        std::fs::write(&path, b"db").expect("write");
        let target = dir.path().join("elsewhere");
        std::fs::write(&target, b"keep").expect("write");
        std::os::unix::fs::symlink(&target, record_path(&path)).expect("link");
        RECORD.record(&path);
        assert_eq!(std::fs::read(&target).expect("read"), b"keep");
        assert!(!RECORD.unchanged(&path));
    }
}
