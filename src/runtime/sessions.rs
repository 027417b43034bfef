//! The recall session store: where `recall` keeps a session for `apply` and where `apply`
//! reads it back, under the runtime root (`reward-memory/recall-sessions/`, the key
//! `reward-memory/recall-session.key`). The document's rules (its shape, ref, expiry,
//! integrity tag, which names are ours) are [`crate::recall::session`]'s; this module
//! does the file work around them.
//!
//! Trust ([`crate::io::trust`]): the session directories from the runtime root down are
//! checked before a session is written or read, the session key and each session are
//! opened without following links and checked, and the expiry sweep removes only our
//! own `rms_<hex>.json` files (and our stale temporaries), never through a link. A store
//! that fails the rule is [`SessionError::Untrusted`] (recall fails open on it; apply
//! refuses).

use std::path::Path;

use crate::recall::RecallSession;
use crate::recall::session::{self, SessionContext, SessionError, SessionKey, StoredSession};
use crate::wire::timestamp::parse_aware;

use crate::io::trust::{self, TrustedDirError, Untrusted};

/// Most bytes read from a session file or the session key.
const MAX_SESSION_BYTES: u64 = 4 << 20;

/// What the trust rule's messages call the session directory (and those above it).
const SESSION_DIR: &str = "recall session directory";
/// ... the session key.
const SESSION_KEY: &str = "recall session key";
/// ... a session file.
const SESSION_FILE: &str = "recall session";

/// A trust failure of the session store: a refusal is [`SessionError::Untrusted`]; a path
/// of the wrong kind or one that cannot be inspected is the plain failure `other`.
fn trust_error(err: Untrusted, other: impl Fn(String) -> SessionError) -> SessionError {
    if err.is_refusal() {
        SessionError::Untrusted(err.to_string())
    } else {
        other(err.to_string())
    }
}

/// Reads the runtime root's session key (`None`: there is none yet); a failure that is
/// not a trust refusal becomes `other`.
fn read_key(
    path: &Path,
    other: impl Fn(String) -> SessionError,
) -> Result<Option<SessionKey>, SessionError> {
    let opened = trust::open_secret_file(path, SESSION_KEY);
    let file = match opened {
        Ok(Some(file)) => file,
        Ok(None) => return Ok(None),
        Err(err) => return Err(trust_error(err, &other)),
    };
    let bytes = trust::read_opened(file, MAX_SESSION_BYTES, SESSION_KEY, path)
        .map_err(|err| trust_error(err, &other))?;
    SessionKey::parse(&bytes)
        .map(Some)
        .ok_or_else(|| SessionError::BadKey(path.display().to_string()))
}

/// The runtime root's session key, created (0600) by the first recall.
fn write_key(path: &Path) -> Result<SessionKey, SessionError> {
    if let Some(key) = read_key(path, SessionError::Store)? {
        return Ok(key);
    }
    let store = |e: std::io::Error| SessionError::Store(e.kind().to_string());
    let random = crate::io::random_hex(session::KEY_BYTES).map_err(store)?;
    crate::io::create_private_file_once(path, SessionKey::file_text(&random).as_bytes())
        .map_err(store)?;
    // Ours, or the one a concurrent recall created first.
    read_key(path, SessionError::Store)?
        .ok_or_else(|| SessionError::Store("the session key vanished".to_owned()))
}

/// The session directory's sweep marker: its modification time is the last sweep's.
const SWEEP_MARKER: &str = ".swept";

/// The session directory is swept at most this often: a recall costs one `lstat` of the
/// marker instead of a listing and an `lstat` per session file (about 2.5 µs a file on a
/// loaded 2-core machine: with 1,300 live sessions, 8.4 ms a recall before, 4.7 ms). An
/// expired session is refused by `apply` whatever the sweep (the expiry inside the file
/// decides); its file just stays up to this much longer.
const SWEEP_EVERY: std::time::Duration = std::time::Duration::from_secs(60);

/// What the sweep of the session directory may remove: our sessions and temporaries.
fn sweepable(name: &str) -> Option<crate::io::Sweepable> {
    if session::is_session_file_name(name) {
        return Some(crate::io::Sweepable::Expiring);
    }
    session::temporary_pid(name).map(|pid| crate::io::Sweepable::Temporary { pid })
}

/// Stores the session (mode 0600) with the context its receipt records under `root` and
/// removes expired ones (at most once a minute); returns the ref and its expiry.
/// The directories from the runtime root down are checked (and created 0700) first.
pub fn store(
    root: &Path,
    session: &RecallSession,
    opaque: &[String],
    context: &SessionContext,
    ttl: u64,
) -> Result<(String, String), SessionError> {
    let store = |e: std::io::Error| SessionError::Store(e.kind().to_string());
    let dir = session::session_dir(root);
    trust::ensure_private_dirs(root, &dir, SESSION_DIR).map_err(|err| match err {
        TrustedDirError::Untrusted(err) => trust_error(err, SessionError::Store),
        TrustedDirError::Create(e) => store(e),
    })?;
    crate::io::sweep_private_files_paced(&dir, SWEEP_MARKER, SWEEP_EVERY, sweepable);
    let key = write_key(&session::key_path(root))?;
    let created = crate::io::utc_now_iso();
    let random = crate::io::random_hex(session::SESSION_REF_BYTES).map_err(store)?;
    let session_ref = session::session_ref(&random);
    let expires = session::expiry(&created, ttl)
        .ok_or_else(|| SessionError::Store("the clock reading is not a timestamp".to_owned()))?;
    let bytes = session::encode(
        session,
        opaque,
        &session_ref,
        &created,
        &expires,
        context,
        &key,
    );
    let expires_time = chrono::DateTime::parse_from_rfc3339(&expires)
        .ok()
        .map(std::time::SystemTime::from);
    crate::io::replace_private_file(
        &session::session_path(&dir, &session_ref),
        bytes.as_bytes(),
        expires_time,
    )
    .map_err(store)?;
    Ok((session_ref, expires))
}

/// Reads a live session back from under `root`: the directories from the runtime root
/// down, the session file and the key must pass the trust rule, and the document its
/// integrity check.
pub fn load(root: &Path, session_ref: &str) -> Result<StoredSession, SessionError> {
    if !session::is_session_ref(session_ref) {
        return Err(SessionError::InvalidRef);
    }
    let not_found = || SessionError::NotFound(session_ref.to_owned());
    let unreadable = |_: String| SessionError::Unreadable(session_ref.to_owned());
    let dir = session::session_dir(root);
    match trust::check_private_dirs(root, &dir, SESSION_DIR) {
        Ok(true) => {}
        Ok(false) => return Err(not_found()),
        Err(err) => return Err(trust_error(err, unreadable)),
    }
    let path = session::session_path(&dir, session_ref);
    let file = match trust::open_trusted_file(&path, SESSION_FILE) {
        Ok(Some(file)) => file,
        Ok(None) => return Err(not_found()),
        Err(err) => return Err(trust_error(err, unreadable)),
    };
    let bytes = trust::read_opened(file, MAX_SESSION_BYTES, SESSION_FILE, &path)
        .map_err(|err| trust_error(err, unreadable))?;
    let key_path = session::key_path(root);
    let key = read_key(&key_path, unreadable)?.ok_or_else(|| SessionError::Unverified {
        session: session_ref.to_owned(),
        why: format!("the session key {} is missing", key_path.display()),
    })?;
    let stored = session::decode(&bytes, session_ref, &key)?;
    let now = parse_aware(&crate::io::utc_now_iso())
        .map_err(|_| SessionError::Unreadable(session_ref.to_owned()))?;
    stored.check_live(now)?;
    Ok(stored)
}
