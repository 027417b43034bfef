//! The application receipt store and the attribution queue under the runtime root:
//! `apply` keeps each receipt it printed as `reward-memory/application-receipts/rma_<hex>.json`
//! (so that `utility-attribute --receipt-id` can name it) and, when a ledger is
//! configured, a pending entry `reward-memory/attribution-pending/rma_<hex>.json`; expired
//! entries are moved aside to `reward-memory/attribution-expired/`, never deleted.
//!
//! Trust ([`crate::io::trust`]): the directories from the runtime root down are checked (and
//! created 0700) before anything is written or read, every file is written 0600 through a
//! private temporary renamed into place, and read without following a link and only when
//! it is ours (or root's) and not writable by others. A receipt read back must be a valid
//! receipt whose `rma_` id is its file name. What an entry means is
//! [`crate::attribution`]'s; this module does the file work.

use std::path::{Path, PathBuf};

use crate::attribution::{PendingEntry, is_receipt_id};
use crate::wire::json::{self, Value};

use crate::io::trust::{self, TrustedDirError, Untrusted};

/// Most bytes read from a stored receipt or pending entry.
const MAX_RECORD_BYTES: u64 = 1 << 20;

const RECEIPT_DIR: &str = "application receipt directory";
const RECEIPT_FILE: &str = "stored application receipt";
const PENDING_DIR: &str = "attribution pending directory";
const PENDING_FILE: &str = "attribution pending entry";
const EXPIRED_DIR: &str = "attribution expired directory";

/// Why a receipt or pending entry could not be stored or read; each message names what
/// to fix.
#[derive(Debug, thiserror::Error)]
pub enum ReceiptStoreError {
    #[error("receipt id must be rma_ followed by 64 lowercase hex digits, as apply prints it")]
    InvalidId,
    #[error(
        "no stored application receipt {0}: apply stores receipts under the same --runtime-root, pass that one (or --receipt FILE)"
    )]
    NotFound(String),
    #[error("{0}")]
    Untrusted(String),
    #[error(
        "stored application receipt {id} is not valid ({why}): remove the file and pass the receipt with --receipt FILE"
    )]
    Invalid { id: String, why: String },
    #[error("cannot write under the runtime root: {0}")]
    Store(String),
}

impl From<Untrusted> for ReceiptStoreError {
    fn from(err: Untrusted) -> ReceiptStoreError {
        ReceiptStoreError::Untrusted(err.to_string())
    }
}

impl From<TrustedDirError> for ReceiptStoreError {
    fn from(err: TrustedDirError) -> ReceiptStoreError {
        match err {
            TrustedDirError::Untrusted(err) => err.into(),
            TrustedDirError::Create(e) => ReceiptStoreError::Store(e.to_string()),
        }
    }
}

fn store_error(e: std::io::Error) -> ReceiptStoreError {
    ReceiptStoreError::Store(e.to_string())
}

/// `<root>/reward-memory/application-receipts`.
pub fn receipt_dir(root: &Path) -> PathBuf {
    root.join("reward-memory").join("application-receipts")
}

/// `<root>/reward-memory/attribution-pending`.
pub fn pending_dir(root: &Path) -> PathBuf {
    root.join("reward-memory").join("attribution-pending")
}

/// `<root>/reward-memory/attribution-expired`.
pub fn expired_dir(root: &Path) -> PathBuf {
    root.join("reward-memory").join("attribution-expired")
}

fn file_of(dir: &Path, id: &str) -> PathBuf {
    dir.join(format!("{id}.json"))
}

/// Stores `receipt` (the `receipt` object apply printed, whose id is `id`) under `root`,
/// mode 0600. Returns the file's path.
pub fn store_receipt(root: &Path, id: &str, receipt: &Value) -> Result<PathBuf, ReceiptStoreError> {
    if !is_receipt_id(id) {
        return Err(ReceiptStoreError::InvalidId);
    }
    let dir = receipt_dir(root);
    trust::ensure_private_dirs(root, &dir, RECEIPT_DIR)?;
    let path = file_of(&dir, id);
    crate::io::replace_private_file(&path, json::to_pretty_line(receipt).as_bytes(), None)
        .map_err(store_error)?;
    Ok(path)
}

/// Reads a trusted file of a checked directory: `Ok(None)` when it is not there.
fn read_trusted(
    root: &Path,
    dir: &Path,
    path: &Path,
    what_dir: &'static str,
    what: &'static str,
) -> Result<Option<Vec<u8>>, ReceiptStoreError> {
    if !trust::check_private_dirs(root, dir, what_dir)? {
        return Ok(None);
    }
    let Some(file) = trust::open_trusted_file(path, what)? else {
        return Ok(None);
    };
    Ok(Some(trust::read_opened(
        file,
        MAX_RECORD_BYTES,
        what,
        path,
    )?))
}

/// Reads the receipt `id` back from under `root`: the name must be an `rma_` id, the
/// directories and the file must pass the trust rule, and the content must be a valid
/// application receipt whose id is `id`.
pub fn load_receipt(root: &Path, id: &str) -> Result<Value, ReceiptStoreError> {
    if !is_receipt_id(id) {
        return Err(ReceiptStoreError::InvalidId);
    }
    let dir = receipt_dir(root);
    let path = file_of(&dir, id);
    let bytes = read_trusted(root, &dir, &path, RECEIPT_DIR, RECEIPT_FILE)?
        .ok_or_else(|| ReceiptStoreError::NotFound(id.to_owned()))?;
    let invalid = |why: String| ReceiptStoreError::Invalid {
        id: id.to_owned(),
        why,
    };
    let value = crate::io::parse_document(&bytes).map_err(|e| invalid(e.to_string()))?;
    let map = value
        .as_object()
        .ok_or_else(|| invalid("not a JSON object".to_owned()))?;
    let actual = crate::recall::application_receipt_id(map).map_err(|e| invalid(e.0))?;
    if actual != id {
        return Err(invalid(format!("its content has the id {actual}")));
    }
    Ok(value)
}

/// Writes the pending entry of its receipt under `root` (mode 0600), replacing an
/// earlier one of the same receipt.
pub fn store_pending(root: &Path, entry: &PendingEntry) -> Result<(), ReceiptStoreError> {
    let dir = pending_dir(root);
    trust::ensure_private_dirs(root, &dir, PENDING_DIR)?;
    crate::io::replace_private_file(
        &file_of(&dir, &entry.application_receipt_id),
        entry.to_text().as_bytes(),
        None,
    )
    .map_err(store_error)
}

/// The pending entries under `root`, in receipt id order; a file that is not ours or not
/// an entry is skipped and named in the second list (with why), never removed.
pub fn list_pending(root: &Path) -> Result<(Vec<PendingEntry>, Vec<String>), ReceiptStoreError> {
    let dir = pending_dir(root);
    if !trust::check_private_dirs(root, &dir, PENDING_DIR)? {
        return Ok((Vec::new(), Vec::new()));
    }
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .map_err(store_error)?
        .flatten()
        .filter_map(|e| e.file_name().into_string().ok())
        .filter_map(|n| n.strip_suffix(".json").map(str::to_owned))
        .filter(|id| is_receipt_id(id))
        .collect();
    names.sort_unstable();
    let mut entries = Vec::with_capacity(names.len());
    let mut skipped = Vec::new();
    for id in names {
        let path = file_of(&dir, &id);
        let read = trust::open_trusted_file(&path, PENDING_FILE).and_then(|file| match file {
            Some(file) => trust::read_opened(file, MAX_RECORD_BYTES, PENDING_FILE, &path).map(Some),
            None => Ok(None),
        });
        match read {
            Ok(Some(bytes)) => match PendingEntry::parse(&bytes) {
                Some(entry) if entry.application_receipt_id == id => entries.push(entry),
                _ => skipped.push(format!("{}: not a pending entry", path.display())),
            },
            Ok(None) => {}
            Err(err) => skipped.push(err.to_string()),
        }
    }
    Ok((entries, skipped))
}

/// Removes the pending entry of `id` once its observation is in the ledger (only our own
/// regular file; nothing there is not an error).
pub fn settle_pending(root: &Path, id: &str) -> Result<(), ReceiptStoreError> {
    if !is_receipt_id(id) {
        return Err(ReceiptStoreError::InvalidId);
    }
    let path = file_of(&pending_dir(root), id);
    match std::fs::symlink_metadata(&path) {
        Ok(meta) if trust::may_remove(trust::Facts::of(&meta), trust::effective_uid()) => {
            std::fs::remove_file(&path).map_err(store_error)
        }
        Ok(_) => Err(Untrusted::Foreign {
            what: PENDING_FILE,
            path: path.display().to_string(),
            owner: 0,
            me: trust::effective_uid(),
        }
        .into()),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(err) => Err(store_error(err)),
    }
}

/// Moves the pending entry of `id` aside to the expired directory (kept, not deleted).
pub fn expire_pending(root: &Path, id: &str) -> Result<(), ReceiptStoreError> {
    if !is_receipt_id(id) {
        return Err(ReceiptStoreError::InvalidId);
    }
    let to = expired_dir(root);
    trust::ensure_private_dirs(root, &to, EXPIRED_DIR)?;
    std::fs::rename(file_of(&pending_dir(root), id), file_of(&to, id)).map_err(store_error)
}

const QUOTA_DIR: &str = "attribution quota directory";
const QUOTA_FILE: &str = "attribution quota state";

/// `<root>/reward-memory/attribution-quota/<16 hex of the evaluator id>.json`.
fn quota_path(root: &Path, evaluator_id: &str) -> (PathBuf, PathBuf) {
    let dir = root.join("reward-memory").join("attribution-quota");
    let name = format!("{}.json", crate::wire::digest::short16(evaluator_id));
    (dir.clone(), dir.join(name))
}

/// The runs (unix seconds) an evaluator's quota state records; none when there is no
/// file yet. A file that is not a quota state is an error (the quota is not forgotten).
pub fn load_quota_runs(root: &Path, evaluator_id: &str) -> Result<Vec<i64>, ReceiptStoreError> {
    let (dir, path) = quota_path(root, evaluator_id);
    match read_trusted(root, &dir, &path, QUOTA_DIR, QUOTA_FILE)? {
        None => Ok(Vec::new()),
        Some(bytes) => crate::attribution::schedule::parse_quota(&bytes).ok_or_else(|| {
            ReceiptStoreError::Store(format!(
                "{} is not a quota state file: move it away",
                path.display()
            ))
        }),
    }
}

/// Replaces an evaluator's quota state (mode 0600).
pub fn store_quota_runs(
    root: &Path,
    evaluator_id: &str,
    runs: &[i64],
) -> Result<(), ReceiptStoreError> {
    let (dir, path) = quota_path(root, evaluator_id);
    trust::ensure_private_dirs(root, &dir, QUOTA_DIR)?;
    let text = crate::attribution::schedule::quota_text(evaluator_id, runs);
    crate::io::replace_private_file(&path, text.as_bytes(), None).map_err(store_error)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn receipt() -> (String, Value) {
        let value = crate::wire::json::parse(include_str!(
            "../../fixtures/utility_attribute/receipt.json"
        ))
        .expect("fixture");
        let id =
            crate::recall::application_receipt_id(value.as_object().expect("object")).expect("id");
        (id, value)
    }

    #[test]
    fn a_stored_receipt_reads_back_by_its_id_and_is_private() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().join("rt");
        let (id, value) = receipt();
        let path = store_receipt(&root, &id, &value).expect("store");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            let mode = std::fs::metadata(&path).expect("meta").permissions().mode() & 0o777;
            assert_eq!(mode, 0o600);
            let dmode = std::fs::metadata(receipt_dir(&root))
                .expect("meta")
                .permissions()
                .mode()
                & 0o777;
            assert_eq!(dmode, 0o700);
        }
        assert_eq!(load_receipt(&root, &id).expect("load"), value);
        assert!(matches!(
            load_receipt(&root, "rma_x"),
            Err(ReceiptStoreError::InvalidId)
        ));
        let other = format!("rma_{}", "0".repeat(64));
        assert!(matches!(
            load_receipt(&root, &other),
            Err(ReceiptStoreError::NotFound(_))
        ));
    }

    #[test]
    fn a_receipt_under_another_name_or_through_a_link_is_refused() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().join("rt");
        let (id, value) = receipt();
        let path = store_receipt(&root, &id, &value).expect("store");
        let other = format!("rma_{}", "a".repeat(64));
        std::fs::copy(&path, receipt_dir(&root).join(format!("{other}.json"))).expect("copy");
        let err = load_receipt(&root, &other).expect_err("renamed");
        assert!(err.to_string().contains("its content has the id"), "{err}");
        #[cfg(unix)]
        {
            let linked = format!("rma_{}", "b".repeat(64));
            std::os::unix::fs::symlink(&path, receipt_dir(&root).join(format!("{linked}.json")))
                .expect("symlink");
            let err = load_receipt(&root, &linked).expect_err("link");
            assert!(err.to_string().contains("symbolic link"), "{err}");
        }
    }
}
