//! Which paths under the runtime root (and which ledger files) this process may trust:
//! what it finds there must be of the expected kind, not a symbolic link, owned by this
//! user (or by root) and not writable by group or others, as ssh's `StrictModes` and
//! git's `safe.directory` require of the files they read.
//!
//! A file another user could have written may hold anything, so it is refused with an
//! error that names the path and what to fix, never read or removed. Checking every
//! directory from the runtime root down is what makes the later open safe: nobody else
//! can replace an entry of a directory that only we may write. Off Unix every check
//! passes (there is no owner or mode to compare).

use std::path::{Path, PathBuf};

/// What a checked path is expected to be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    File,
    Directory,
}

impl Kind {
    fn noun(self) -> &'static str {
        match self {
            Kind::File => "regular file",
            Kind::Directory => "directory",
        }
    }
}

/// Why a path may not be trusted; each message names the path and the fix.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Untrusted {
    #[error(
        "{what} {path} is a symbolic link: point it at the real {} instead (links are not followed)",
        kind.noun()
    )]
    Symlink {
        what: &'static str,
        path: String,
        kind: Kind,
    },
    #[error("{what} {path} is not a {}: move it away or choose another path", kind.noun())]
    WrongKind {
        what: &'static str,
        path: String,
        kind: Kind,
    },
    #[error(
        "{what} {path} is owned by uid {owner}, not by this user (uid {me}) or root: use one of your own"
    )]
    Foreign {
        what: &'static str,
        path: String,
        owner: u32,
        me: u32,
    },
    #[error("{what} {path} is writable by group or others (mode {mode:04o}): run chmod go-w on it")]
    Writable {
        what: &'static str,
        path: String,
        mode: u32,
    },
    #[error("cannot inspect {what} {path}: {reason}")]
    Unreadable {
        what: &'static str,
        path: String,
        reason: String,
    },
}

impl Untrusted {
    /// A short public-safe code for packets that must not carry the path, e.g.
    /// `untrusted_symlink`.
    pub fn code(&self) -> &'static str {
        match self {
            Untrusted::Symlink { .. } => "untrusted_symlink",
            Untrusted::WrongKind { .. } => "untrusted_wrong_kind",
            Untrusted::Foreign { .. } => "untrusted_owner",
            Untrusted::Writable { .. } => "untrusted_mode",
            Untrusted::Unreadable { .. } => "untrusted_unreadable",
        }
    }
}

/// The effective user id of this process (0 off Unix).
pub fn effective_uid() -> u32 {
    #[cfg(unix)]
    {
        rustix::process::geteuid().as_raw()
    }
    #[cfg(not(unix))]
    {
        0
    }
}

/// The facts the checks compare, from `lstat` (links are never followed).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Facts {
    pub is_symlink: bool,
    pub is_file: bool,
    pub is_dir: bool,
    pub uid: u32,
    pub mode: u32,
}

impl Facts {
    /// The facts of `meta`, which must come from `symlink_metadata` or an open handle.
    pub fn of(meta: &std::fs::Metadata) -> Facts {
        #[cfg(unix)]
        let (uid, mode) = {
            use std::os::unix::fs::MetadataExt as _;
            (meta.uid(), meta.mode() & 0o7777)
        };
        #[cfg(not(unix))]
        let (uid, mode) = (effective_uid(), 0o700);
        let kind = meta.file_type();
        Facts {
            is_symlink: kind.is_symlink(),
            is_file: kind.is_file(),
            is_dir: kind.is_dir(),
            uid,
            mode,
        }
    }
}

/// The pure rule: may a path with these facts be trusted by user `me` as a `kind`?
pub fn judge(
    facts: Facts,
    kind: Kind,
    me: u32,
    what: &'static str,
    path: &Path,
) -> Result<(), Untrusted> {
    let path = path.display().to_string();
    if facts.is_symlink {
        return Err(Untrusted::Symlink { what, path, kind });
    }
    let right_kind = match kind {
        Kind::File => facts.is_file,
        Kind::Directory => facts.is_dir,
    };
    if !right_kind {
        return Err(Untrusted::WrongKind { what, path, kind });
    }
    if facts.uid != me && facts.uid != 0 {
        return Err(Untrusted::Foreign {
            what,
            path,
            owner: facts.uid,
            me,
        });
    }
    if facts.mode & 0o022 != 0 {
        return Err(Untrusted::Writable {
            what,
            path,
            mode: facts.mode,
        });
    }
    Ok(())
}

/// Checks `path` without following links. `Ok(false)` when nothing is there (the caller
/// may create it), `Ok(true)` when it is a trusted `kind`.
pub fn check(path: &Path, kind: Kind, what: &'static str) -> Result<bool, Untrusted> {
    match std::fs::symlink_metadata(path) {
        Ok(meta) => judge(Facts::of(&meta), kind, effective_uid(), what, path).map(|()| true),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(err) => Err(Untrusted::Unreadable {
            what,
            path: path.display().to_string(),
            reason: err.kind().to_string(),
        }),
    }
}

/// Checks `root` and each directory from it down to `dir` (which must lie under
/// `root`), creating the missing ones with mode 0700. The runtime root itself is
/// checked like the rest: a shared, world-writable root (`/tmp` itself) is refused.
pub fn ensure_private_dirs(
    root: &Path,
    dir: &Path,
    what: &'static str,
) -> Result<(), TrustedDirError> {
    let mut chain: Vec<PathBuf> = vec![root.to_path_buf()];
    if let Ok(rest) = dir.strip_prefix(root) {
        let mut at = root.to_path_buf();
        for part in rest.components() {
            at.push(part);
            chain.push(at.clone());
        }
    }
    for (i, path) in chain.iter().enumerate() {
        let label = if i == 0 { "runtime root" } else { what };
        if !check(path, Kind::Directory, label)? {
            super::create_private_dir_all(path).map_err(TrustedDirError::Create)?;
            // Created by us a moment ago, or by a racing process of this user; either
            // way it is checked again before anything goes inside.
            if !check(path, Kind::Directory, label)? {
                return Err(TrustedDirError::Create(std::io::Error::from(
                    std::io::ErrorKind::NotFound,
                )));
            }
        }
    }
    Ok(())
}

/// Failure of [`ensure_private_dirs`].
#[derive(Debug, thiserror::Error)]
pub enum TrustedDirError {
    #[error(transparent)]
    Untrusted(#[from] Untrusted),
    #[error("cannot create the directory: {0}")]
    Create(std::io::Error),
}

/// Opens a regular file for reading without following a link at its last component and
/// checks the opened file itself (no window between check and read). `Ok(None)` when
/// nothing is there.
pub fn open_trusted_file(
    path: &Path,
    what: &'static str,
) -> Result<Option<std::fs::File>, Untrusted> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt as _;
        options.custom_flags(rustix::fs::OFlags::NOFOLLOW.bits() as i32);
    }
    let unreadable = |err: &std::io::Error| Untrusted::Unreadable {
        what,
        path: path.display().to_string(),
        reason: err.kind().to_string(),
    };
    let file = match options.open(path) {
        Ok(file) => file,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(err) => {
            // ELOOP: the last component is a link.
            if std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) {
                return Err(Untrusted::Symlink {
                    what,
                    path: path.display().to_string(),
                    kind: Kind::File,
                });
            }
            return Err(unreadable(&err));
        }
    };
    let meta = file.metadata().map_err(|e| unreadable(&e))?;
    judge(Facts::of(&meta), Kind::File, effective_uid(), what, path)?;
    Ok(Some(file))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts(uid: u32, mode: u32) -> Facts {
        Facts {
            is_symlink: false,
            is_file: true,
            is_dir: false,
            uid,
            mode,
        }
    }

    #[test]
    fn own_private_file_is_trusted_and_root_owned_too() {
        let p = Path::new("/x");
        assert_eq!(
            judge(facts(1000, 0o600), Kind::File, 1000, "ledger", p),
            Ok(())
        );
        assert_eq!(
            judge(facts(0, 0o644), Kind::File, 1000, "ledger", p),
            Ok(())
        );
    }

    #[test]
    fn foreign_owner_is_refused_with_both_uids() {
        let err = judge(
            facts(1001, 0o600),
            Kind::File,
            1000,
            "ledger",
            Path::new("/x"),
        )
        .expect_err("foreign");
        assert_eq!(err.code(), "untrusted_owner");
        assert!(err.to_string().contains("uid 1001"), "{err}");
        assert!(err.to_string().contains("uid 1000"), "{err}");
    }

    #[test]
    fn group_or_other_writable_is_refused() {
        for mode in [0o620, 0o602, 0o666, 0o1777] {
            let err = judge(
                facts(1000, mode),
                Kind::File,
                1000,
                "store",
                Path::new("/x"),
            )
            .expect_err("writable");
            assert_eq!(err.code(), "untrusted_mode", "{mode:o}");
        }
        assert!(
            judge(
                facts(1000, 0o644),
                Kind::File,
                1000,
                "store",
                Path::new("/x")
            )
            .is_ok()
        );
    }

    #[test]
    fn symlink_and_wrong_kind_are_refused() {
        let link = Facts {
            is_symlink: true,
            is_file: false,
            ..facts(1000, 0o777)
        };
        let p = Path::new("/x");
        assert_eq!(
            judge(link, Kind::Directory, 1000, "d", p)
                .expect_err("link")
                .code(),
            "untrusted_symlink"
        );
        assert_eq!(
            judge(facts(1000, 0o600), Kind::Directory, 1000, "d", p)
                .expect_err("kind")
                .code(),
            "untrusted_wrong_kind"
        );
    }

    #[cfg(unix)]
    #[test]
    fn check_and_open_do_not_follow_links() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().expect("tempdir");
        let real = dir.path().join("real.json");
        std::fs::write(&real, b"{}").expect("write");
        std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o600)).expect("chmod");
        let link = dir.path().join("link.json");
        std::os::unix::fs::symlink(&real, &link).expect("symlink");
        assert_eq!(check(&real, Kind::File, "f"), Ok(true));
        assert_eq!(check(&dir.path().join("none"), Kind::File, "f"), Ok(false));
        assert_eq!(
            check(&link, Kind::File, "f").expect_err("link").code(),
            "untrusted_symlink"
        );
        assert!(open_trusted_file(&real, "f").expect("open").is_some());
        assert_eq!(
            open_trusted_file(&link, "f").expect_err("link").code(),
            "untrusted_symlink"
        );
        assert!(
            open_trusted_file(&dir.path().join("none"), "f")
                .expect("missing")
                .is_none()
        );
        std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o666)).expect("chmod");
        assert_eq!(
            open_trusted_file(&real, "f").expect_err("mode").code(),
            "untrusted_mode"
        );
    }

    #[cfg(unix)]
    #[test]
    fn ensure_private_dirs_creates_0700_and_refuses_a_linked_component() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().join("rt");
        let sessions = root.join("reward-memory").join("recall-sessions");
        ensure_private_dirs(&root, &sessions, "session directory").expect("create");
        let mode = std::fs::metadata(&sessions)
            .expect("meta")
            .permissions()
            .mode()
            & 0o777;
        assert_eq!(mode, 0o700);
        std::fs::remove_dir(&sessions).expect("rm");
        let elsewhere = dir.path().join("elsewhere");
        std::fs::create_dir(&elsewhere).expect("mkdir");
        std::os::unix::fs::symlink(&elsewhere, &sessions).expect("symlink");
        let err = ensure_private_dirs(&root, &sessions, "session directory").expect_err("link");
        assert!(
            matches!(err, TrustedDirError::Untrusted(Untrusted::Symlink { .. })),
            "{err}"
        );
        std::fs::set_permissions(&root, std::fs::Permissions::from_mode(0o777)).expect("chmod");
        let err = ensure_private_dirs(&root, &sessions, "session directory").expect_err("mode");
        assert!(err.to_string().starts_with("runtime root "), "{err}");
    }
}
