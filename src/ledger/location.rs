//! Where a ledger lives: the `--ledger` location rules (a SQLite file or a PostgreSQL
//! URL), the default SQLite path under the runtime root, the public display of a
//! location (never its credentials) and the trust rule a SQLite location must pass
//! before any backend opens it.

use std::path::{Path, PathBuf};

use super::error::{LedgerError, LedgerResult};

/// Where a ledger lives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Location {
    /// A SQLite file.
    Sqlite(PathBuf),
    /// A PostgreSQL URL (`postgres://` or `postgresql://`), credentials included.
    Postgres(String),
}

impl Location {
    /// Reads a `--ledger` value: a PostgreSQL URL, else a file path (`~` expanded by the
    /// caller).
    pub fn parse(text: &str, expand: impl Fn(&str) -> PathBuf) -> LedgerResult<Location> {
        let trimmed = text.trim();
        if trimmed.is_empty() {
            return Err(LedgerError::Location(
                "--ledger must name a SQLite file or a postgres:// URL".into(),
            ));
        }
        let lower = trimmed.to_ascii_lowercase();
        if lower.starts_with("postgres://") || lower.starts_with("postgresql://") {
            return Ok(Location::Postgres(trimmed.to_owned()));
        }
        if lower.contains("://") {
            return Err(LedgerError::Location(
                "--ledger must name a SQLite file or a postgres:// URL (other URL schemes are not supported)"
                    .into(),
            ));
        }
        Ok(Location::Sqlite(expand(text)))
    }

    /// The location as a person may see it (`--detail`): a SQLite path as given, a
    /// PostgreSQL URL reduced to `scheme://host:port/database`, without the user, the
    /// password or query parameters (which may carry either).
    pub fn public_display(&self) -> String {
        match self {
            Location::Sqlite(path) => path.display().to_string(),
            Location::Postgres(url) => {
                let (scheme, rest) = url.split_once("://").unwrap_or(("postgres", url));
                let host = rest.rfind('@').map_or(rest, |at| &rest[at + 1..]);
                let host = host.split('?').next().unwrap_or_default();
                format!("{scheme}://{host}")
            }
        }
    }

    /// `sqlite` or `postgres`.
    pub fn backend_name(&self) -> &'static str {
        match self {
            Location::Sqlite(_) => "sqlite",
            Location::Postgres(_) => "postgres",
        }
    }
}

/// `<runtime_root>/reward-memory/utility-ledger.sqlite3`, next to the embedded store.
pub fn default_sqlite_path(runtime_root: &Path) -> PathBuf {
    runtime_root
        .join("reward-memory")
        .join("utility-ledger.sqlite3")
}

/// The trust rule ([`crate::io::trust`]) for a SQLite ledger at `path`, applied where the
/// location is resolved, before any backend opens the file: the file and the files SQLite
/// keeps beside it (`-wal`, `-shm`, `-journal`) must not be links, files of another user
/// (root's are fine) or writable by group or others; at the default location (`root`:
/// the runtime root) so must the directories from the runtime root down. What does not
/// exist yet passes (an append creates the file 0600 and its directories 0700); a
/// directory at the path keeps its own error ([`LedgerError::NotAFile`]).
pub fn check_sqlite_trust(path: &Path, root: Option<&Path>) -> LedgerResult<()> {
    use crate::io::stat_record::beside;
    use crate::io::trust::{self, Kind, Untrusted};
    let refusal = |result: Result<bool, Untrusted>| match result {
        Err(err) if err.is_refusal() => Err(LedgerError::Untrusted(err.to_string())),
        _ => Ok(()),
    };
    if let Some(root) = root
        && let Some(parent) = path.parent()
    {
        refusal(trust::check_private_dirs(
            root,
            parent,
            "utility ledger directory",
        ))?;
    }
    refusal(trust::check(path, Kind::File, "utility ledger"))?;
    for suffix in ["-wal", "-shm", "-journal", "-checked"] {
        refusal(trust::check(
            &beside(path, suffix),
            Kind::File,
            "utility ledger file",
        ))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::Location;

    #[test]
    fn public_display_never_shows_credentials() {
        let shown = |url: &str| Location::Postgres(url.to_owned()).public_display();
        assert_eq!(
            shown("postgres://ledger:s3cret@db.internal:5432/utility_ledger"),
            "postgres://db.internal:5432/utility_ledger"
        );
        assert_eq!(
            shown("postgresql://u:p@ss@w0rd@host/db?password=x&user=y"),
            "postgresql://host/db"
        );
        assert_eq!(shown("postgres:///db?host=/run/pg"), "postgres:///db");
        assert_eq!(
            Location::Sqlite("/tmp/l.sqlite3".into()).public_display(),
            "/tmp/l.sqlite3"
        );
    }
}
