//! The PostgreSQL backend of the utility ledger: one ledger shared by appenders on many
//! machines, through the synchronous `postgres` client.
//!
//! Owns the connection (URL plus the standard `PG*` defaults, no TLS), the schema (tables
//! prefixed `utility_ledger_`, text columns in the `C` collation so that order equals the
//! reducer's byte order) and every SQL statement of this backend; values always travel as
//! parameters. An append is one transaction that first takes a transaction-scoped advisory
//! lock, so concurrent appenders commit one after another and each sees the previous
//! batch; a failed or retried batch leaves nothing behind. Credentials never appear in an
//! error.
//!
//! One file per concern: this one holds the connection and the error mapping;
//! `schema.rs` the tables, column lists and row decoders, `rows.rs` cursors and keyed
//! reads, `backend.rs` the statements of [`super::LedgerBackend`], `copy.rs` the binary
//! `COPY` of new rows, `traffic.rs` the traffic log's tables and statements
//! ([`super::traffic`]).

mod backend;
mod copy;
mod rows;
mod schema;
mod traffic;
mod verdicts;

use std::time::Duration;

use postgres::{Client, NoTls, Row};

use super::backend::{check_format, check_version};
use super::error::{LedgerError, LedgerResult};
use super::rows::DeliveryRow;
use schema::delivery;

/// The advisory lock every append holds (`hashtext('reward_memory_utility_ledger')` would
/// do as well; a constant keeps it independent of the server version).
const APPEND_LOCK: i64 = 0x7265_776d_6c65_6467;

pub use crate::io::PgEnv;

/// The PostgreSQL ledger behind one connection.
pub struct PgLedger {
    client: Client,
    /// Removed from every error message (defence in depth).
    secret: Option<String>,
}

fn scrub(text: &str, secret: Option<&str>) -> String {
    match secret {
        Some(s) if !s.is_empty() => text.replace(s, "***"),
        _ => text.to_owned(),
    }
}

/// Maps a client or server failure to the ledger's error, without credentials.
pub fn map_error(err: &postgres::Error, secret: Option<&str>) -> LedgerError {
    if let Some(db) = err.as_db_error() {
        return map_server_error(db.code().code(), &scrub(db.message(), secret));
    }
    let text = scrub(&err.to_string(), secret);
    if err.is_closed() || text.contains("connect") || text.contains("os error") {
        LedgerError::Unreachable(text)
    } else {
        LedgerError::Storage(text)
    }
}

/// The ledger's error for a server error with this SQLSTATE. A server that is starting
/// up or shutting down (`57P03` cannot_connect_now, `57P01` admin_shutdown, `57P02`
/// crash_shutdown), that closed an idle session (`57P05`) or has no connection slot left
/// (`53300`), and a broken connection (class `08` but a protocol violation) are
/// unreachable-and-retryable like a refused connection: nothing was committed.
pub fn map_server_error(code: &str, message: &str) -> LedgerError {
    match code {
        "28P01" | "28000" => LedgerError::Auth(message.to_owned()),
        "3D000" => LedgerError::Unreachable(format!("the database does not exist ({message})")),
        "57P01" | "57P02" | "57P03" | "57P05" | "53300" => LedgerError::Unreachable(format!(
            "the server cannot take the connection now, retry later ({code}: {message})"
        )),
        _ if code.starts_with("08") && code != "08P01" => LedgerError::Unreachable(format!(
            "the connection to the server failed, retry later ({code}: {message})"
        )),
        "53100" => LedgerError::DiskFull,
        "25006" | "42501" => LedgerError::ReadOnly(message.to_owned()),
        "40001" | "40P01" | "55P03" => LedgerError::Busy,
        _ => LedgerError::Storage(format!("{code}: {message}")),
    }
}

/// Builds the connection settings: the URL, then the `PG*` defaults for what it omits.
pub fn config(url: &str, env: &PgEnv) -> LedgerResult<postgres::Config> {
    let mut config: postgres::Config = url.parse().map_err(|_| {
        LedgerError::Location(
            "--ledger is not a valid postgres:// URL (postgres://USER:PASSWORD@HOST:PORT/DATABASE)"
                .into(),
        )
    })?;
    if config.get_hosts().is_empty() {
        config.host(env.host.as_deref().unwrap_or("localhost"));
    }
    if config.get_ports().is_empty()
        && let Some(port) = env.port.as_deref().and_then(|p| p.parse::<u16>().ok())
    {
        config.port(port);
    }
    if config.get_user().is_none() {
        let user = env
            .user
            .as_deref()
            .or(env.login.as_deref())
            .unwrap_or("postgres");
        config.user(user);
    }
    if config.get_password().is_none()
        && let Some(password) = &env.password
    {
        config.password(password);
    }
    if config.get_dbname().is_none()
        && let Some(db) = &env.dbname
    {
        config.dbname(db);
    }
    if config.get_connect_timeout().is_none() {
        config.connect_timeout(Duration::from_secs(10));
    }
    config.application_name("reward-memory utility-ledger");
    Ok(config)
}

impl PgLedger {
    /// Connects to the ledger's server.
    pub fn connect(url: &str, env: &PgEnv) -> LedgerResult<PgLedger> {
        let config = config(url, env)?;
        let secret = config
            .get_password()
            .map(|p| String::from_utf8_lossy(p).into_owned());
        let client = config
            .connect(NoTls)
            .map_err(|e| map_error(&e, secret.as_deref()))?;
        Ok(PgLedger { client, secret })
    }

    fn err(&self, e: &postgres::Error) -> LedgerError {
        map_error(e, self.secret.as_deref())
    }

    fn exec(&mut self, sql: &str) -> LedgerResult<()> {
        let r = self.client.batch_execute(sql);
        r.map_err(|e| self.err(&e))
    }

    fn query(
        &mut self,
        sql: &str,
        params: &[&(dyn postgres::types::ToSql + Sync)],
    ) -> LedgerResult<Vec<Row>> {
        let r = self.client.query(sql, params);
        r.map_err(|e| self.err(&e))
    }

    /// `None` when the ledger's tables were never created; else checks its
    /// `ledger_schema_version` and `ledger_format` rows as the SQLite backend does.
    fn check_meta(&mut self) -> LedgerResult<Option<()>> {
        let rows = self.query("SELECT to_regclass('utility_ledger_meta')::text", &[])?;
        let exists: Option<String> = rows.first().and_then(|r| r.get(0));
        if exists.is_none() {
            return Ok(None);
        }
        let rows = self.query(
            "SELECT key, value FROM utility_ledger_meta \
             WHERE key IN ('ledger_schema_version', 'ledger_format')",
            &[],
        )?;
        let value = |key: &str| -> Option<String> {
            rows.iter()
                .find(|r| r.get::<_, &str>(0) == key)
                .map(|r| r.get(1))
        };
        check_version(value("ledger_schema_version").as_deref())?;
        check_format(value("ledger_format").as_deref())?;
        Ok(Some(()))
    }
}

impl PgLedger {
    fn stream(
        &mut self,
        sql: &str,
        params: &[&(dyn postgres::types::ToSql + Sync)],
        visit: &mut dyn FnMut(DeliveryRow) -> LedgerResult<()>,
    ) -> LedgerResult<()> {
        let secret = self.secret.clone();
        let rows = self
            .client
            .query_raw(sql, params.iter().copied())
            .map_err(|e| map_error(&e, secret.as_deref()))?;
        use postgres::fallible_iterator::FallibleIterator as _;
        let mut rows = rows;
        while let Some(row) = rows.next().map_err(|e| map_error(&e, secret.as_deref()))? {
            visit(delivery(&row, 0).map_err(|e| map_error(&e, secret.as_deref()))?)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::{LedgerError, map_server_error};

    #[test]
    fn a_server_that_cannot_take_the_connection_now_is_unreachable_not_a_storage_failure() {
        for code in [
            "57P03", "57P01", "57P02", "57P05", "53300", "08006", "08001",
        ] {
            let err = map_server_error(code, "the database system is starting up");
            assert!(matches!(err, LedgerError::Unreachable(_)), "{code}: {err}");
            assert!(err.to_string().contains("retry later"), "{code}: {err}");
        }
        for code in ["08P01", "42P01", "XX000"] {
            let err = map_server_error(code, "m");
            assert!(matches!(err, LedgerError::Storage(_)), "{code}: {err}");
        }
        assert!(matches!(
            map_server_error("28P01", "m"),
            LedgerError::Auth(_)
        ));
    }
}
