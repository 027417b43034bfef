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
//!
//! The runtime root itself is the user's choice of place, like the directories above it,
//! which are not checked: when it is a symbolic link, the link is followed if it belongs
//! to this user or to root (the rule of Linux's `fs.protected_symlinks`), and the
//! directory it leads to is checked like any runtime root (a shared, world-writable
//! `/tmp` is refused). Links *below* the root are never followed.
//!
//! A secret (the recall session key) must in addition be unreadable by group and others,
//! as ssh requires of a private key ([`open_secret_file`]). Removal has its own, stricter
//! rule ([`may_remove`]): only a regular file owned by this very user, found without
//! following links.

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
    #[error(
        "{what} {path} is readable by group or others (mode {mode:04o}): run chmod go-rwx on it"
    )]
    Readable {
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
            Untrusted::Readable { .. } => "untrusted_secret_mode",
            Untrusted::Unreadable { .. } => "untrusted_unreadable",
        }
    }

    /// True when something is there that another user could have written or swapped (a
    /// link, a foreign owner, a loose mode): a refusal of trust, as opposed to a path of
    /// the wrong kind or one that could not be inspected, which callers may report as
    /// the plain failures they were before.
    pub fn is_refusal(&self) -> bool {
        matches!(
            self,
            Untrusted::Symlink { .. }
                | Untrusted::Foreign { .. }
                | Untrusted::Writable { .. }
                | Untrusted::Readable { .. }
        )
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

/// [`judge`] for a secret file: also refused when group or others may read it.
pub fn judge_secret(
    facts: Facts,
    me: u32,
    what: &'static str,
    path: &Path,
) -> Result<(), Untrusted> {
    judge(facts, Kind::File, me, what, path)?;
    if facts.mode & 0o077 != 0 {
        return Err(Untrusted::Readable {
            what,
            path: path.display().to_string(),
            mode: facts.mode,
        });
    }
    Ok(())
}

/// May user `me` remove a file with these facts (from `lstat`) while sweeping a
/// directory it trusts? Only a regular file, not a link, owned by `me` itself: a file of
/// root's (trusted for reading) is not ours to delete.
pub fn may_remove(facts: Facts, me: u32) -> bool {
    !facts.is_symlink && facts.is_file && facts.uid == me
}

/// Checks `path` without following links. `Ok(false)` when nothing is there (the caller
/// may create it), `Ok(true)` when it is a trusted `kind`.
pub fn check(path: &Path, kind: Kind, what: &'static str) -> Result<bool, Untrusted> {
    match std::fs::symlink_metadata(path) {
        Ok(meta) => judge(Facts::of(&meta), kind, effective_uid(), what, path).map(|()| true),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(err) => Err(unreadable(what, path, &err)),
    }
}

fn unreadable(what: &'static str, path: &Path, err: &std::io::Error) -> Untrusted {
    Untrusted::Unreadable {
        what,
        path: path.display().to_string(),
        reason: err.kind().to_string(),
    }
}

/// Checks the runtime root: a directory we trust, or a link of ours (or root's) to one.
/// `Ok(false)` when nothing is there (or a link leads nowhere: creating it then fails).
pub fn check_root(root: &Path) -> Result<bool, Untrusted> {
    const WHAT: &str = "runtime root";
    let meta = match std::fs::symlink_metadata(root) {
        Ok(meta) => meta,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(false),
        Err(err) => return Err(unreadable(WHAT, root, &err)),
    };
    let me = effective_uid();
    if !meta.file_type().is_symlink() {
        return judge(Facts::of(&meta), Kind::Directory, me, WHAT, root).map(|()| true);
    }
    let link = Facts::of(&meta);
    if link.uid != me && link.uid != 0 {
        return Err(Untrusted::Foreign {
            what: "runtime root (a symbolic link)",
            path: root.display().to_string(),
            owner: link.uid,
            me,
        });
    }
    match std::fs::metadata(root) {
        Ok(target) => judge(Facts::of(&target), Kind::Directory, me, WHAT, root).map(|()| true),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(err) => Err(unreadable(WHAT, root, &err)),
    }
}

/// `root`, then each directory from it down to `dir` (which must lie under `root`; else
/// only `root`).
fn chain(root: &Path, dir: &Path) -> Vec<PathBuf> {
    let mut chain: Vec<PathBuf> = vec![root.to_path_buf()];
    if let Ok(rest) = dir.strip_prefix(root) {
        let mut at = root.to_path_buf();
        for part in rest.components() {
            at.push(part);
            chain.push(at.clone());
        }
    }
    chain
}

fn check_link(i: usize, path: &Path, what: &'static str) -> Result<bool, Untrusted> {
    if i == 0 {
        check_root(path)
    } else {
        check(path, Kind::Directory, what)
    }
}

/// Checks `root` ([`check_root`]) and each directory from it down to `dir` (which must
/// lie under `root`), creating the missing ones with mode 0700. A shared, world-writable
/// root (`/tmp` itself) is refused.
pub fn ensure_private_dirs(
    root: &Path,
    dir: &Path,
    what: &'static str,
) -> Result<(), TrustedDirError> {
    for (i, path) in chain(root, dir).iter().enumerate() {
        if !check_link(i, path, what)? {
            super::create_private_dir_all(path).map_err(TrustedDirError::Create)?;
            // Created by us a moment ago, or by a racing process of this user; either
            // way it is checked again before anything goes inside.
            if !check_link(i, path, what)? {
                return Err(TrustedDirError::Create(std::io::Error::from(
                    std::io::ErrorKind::NotFound,
                )));
            }
        }
    }
    Ok(())
}

/// [`ensure_private_dirs`] for a reader: checks the same chain and creates nothing.
/// `Ok(false)` when a directory of the chain does not exist yet (so nothing is inside).
pub fn check_private_dirs(root: &Path, dir: &Path, what: &'static str) -> Result<bool, Untrusted> {
    for (i, path) in chain(root, dir).iter().enumerate() {
        if !check_link(i, path, what)? {
            return Ok(false);
        }
    }
    Ok(true)
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
    open_checked(path, what, false)
}

/// [`open_trusted_file`] for a secret: the file must also be unreadable by group and
/// others ([`judge_secret`]).
pub fn open_secret_file(
    path: &Path,
    what: &'static str,
) -> Result<Option<std::fs::File>, Untrusted> {
    open_checked(path, what, true)
}

fn open_checked(
    path: &Path,
    what: &'static str,
    secret: bool,
) -> Result<Option<std::fs::File>, Untrusted> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt as _;
        options.custom_flags(rustix::fs::OFlags::NOFOLLOW.bits() as i32);
    }
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
            return Err(unreadable(what, path, &err));
        }
    };
    let meta = file.metadata().map_err(|e| unreadable(what, path, &e))?;
    let facts = Facts::of(&meta);
    if secret {
        judge_secret(facts, effective_uid(), what, path)?;
    } else {
        judge(facts, Kind::File, effective_uid(), what, path)?;
    }
    Ok(Some(file))
}

/// Reads a file opened by [`open_trusted_file`] or [`open_secret_file`], at most `limit`
/// bytes (a larger file is refused as unreadable).
pub fn read_opened(
    file: std::fs::File,
    limit: u64,
    what: &'static str,
    path: &Path,
) -> Result<Vec<u8>, Untrusted> {
    use std::io::Read as _;
    let mut bytes = Vec::new();
    file.take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| unreadable(what, path, &e))?;
    if u64::try_from(bytes.len()).unwrap_or(u64::MAX) > limit {
        return Err(Untrusted::Unreadable {
            what,
            path: path.display().to_string(),
            reason: format!("larger than {limit} bytes"),
        });
    }
    Ok(bytes)
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
    #[test]
    fn a_secret_must_not_be_readable_by_others_and_only_our_files_are_removable() {
        let p = Path::new("/k");
        assert_eq!(judge_secret(facts(1000, 0o600), 1000, "key", p), Ok(()));
        for mode in [0o640, 0o604, 0o644] {
            assert_eq!(
                judge_secret(facts(1000, mode), 1000, "key", p)
                    .expect_err("readable")
                    .code(),
                "untrusted_secret_mode",
                "{mode:o}"
            );
        }
        assert_eq!(
            judge_secret(facts(1000, 0o622), 1000, "key", p)
                .expect_err("writable")
                .code(),
            "untrusted_mode"
        );
        assert!(may_remove(facts(1000, 0o600), 1000));
        assert!(
            !may_remove(facts(0, 0o600), 1000),
            "root's file is not ours"
        );
        assert!(!may_remove(facts(1001, 0o600), 1000));
        let link = Facts {
            is_symlink: true,
            is_file: false,
            ..facts(1000, 0o777)
        };
        assert!(!may_remove(link, 1000));
        let dir = Facts {
            is_file: false,
            is_dir: true,
            ..facts(1000, 0o700)
        };
        assert!(!may_remove(dir, 1000));
    }

    #[cfg(unix)]
    #[test]
    fn a_linked_runtime_root_of_ours_is_followed_and_checked_and_readers_create_nothing() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().expect("tempdir");
        let real = dir.path().join("real-root");
        std::fs::create_dir(&real).expect("mkdir");
        let root = dir.path().join("rt");
        std::os::unix::fs::symlink(&real, &root).expect("symlink");
        let sessions = root.join("reward-memory").join("recall-sessions");
        assert_eq!(check_private_dirs(&root, &sessions, "d"), Ok(false));
        assert!(
            !real.join("reward-memory").exists(),
            "a reader creates nothing"
        );
        ensure_private_dirs(&root, &sessions, "d").expect("followed");
        assert!(real.join("reward-memory/recall-sessions").is_dir());
        assert_eq!(check_private_dirs(&root, &sessions, "d"), Ok(true));
        std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o777)).expect("chmod");
        assert_eq!(
            check_private_dirs(&root, &sessions, "d")
                .expect_err("the target is checked")
                .code(),
            "untrusted_mode"
        );
        std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o700)).expect("chmod");
        // A link somebody else made is not our choice.
        if effective_uid() == 0 {
            std::os::unix::fs::lchown(&root, Some(65534), Some(65534)).expect("lchown");
            let err = check_private_dirs(&root, &sessions, "d").expect_err("foreign link");
            assert_eq!(err.code(), "untrusted_owner");
            assert!(err.to_string().contains("symbolic link"), "{err}");
        }
    }
}
