//! The embedded store's full-text index: what is indexed for a record, the tokenizer a
//! store was built with, and rebuilding the index (the migration of a v1 store, or a
//! change of tokenizer) without touching a record's bytes.
//!
//! * **What is indexed.** The FTS5 table `resources_fts(body)` holds the record's search
//!   text, not its envelope: for an active record (a JSON object with a text
//!   `content_summary`), that summary; for any other content, the content itself. A
//!   writer may give a longer search text than the record holds (the whole memory text
//!   of an event whose summary the LoopX contract shortened to 500 characters); the
//!   record's bytes in `resources.content` are always the ones written.
//! * **Tokenizer** ([`Tokenizer`]): `porter` (English stemming over `unicode61`, what a
//!   new store is built with unless its binding names another) or `unicode61`, chosen
//!   when the store is created or its index rebuilt, and recorded in `store_meta` under
//!   [`TOKENIZER_KEY`]; a store without the key was built with `unicode61`.
//! * **Rebuild** ([`rebuild`]): in one write transaction, the index is dropped and made
//!   again with the chosen tokenizer; each row keeps its search text (a v1 store, whose
//!   index held the whole record, gets each record's search text from its bytes). The
//!   `resources` table is not written, so every record keeps its bytes and digest.

use rusqlite::{Connection, OptionalExtension as _, params};

use crate::wire::json::Value;

/// The schema marker of a store whose index holds the whole record (before search texts).
pub const STORE_SCHEMA_V1: &str = "reward_memory_embedded_store_v1";
/// The `store_meta` key of the store's tokenizer.
pub const TOKENIZER_KEY: &str = "tokenizer";

/// The FTS5 tokenizer of a store's index.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tokenizer {
    /// Unicode word characters, case and diacritics folded (FTS5 `unicode61`).
    Unicode61,
    /// `unicode61` words reduced to their English stems (FTS5 `porter unicode61`).
    Porter,
}

impl Tokenizer {
    /// Every tokenizer, in documentation order.
    pub const ALL: [Tokenizer; 2] = [Tokenizer::Unicode61, Tokenizer::Porter];

    /// What a new store is built with when its binding names no tokenizer: English
    /// stemming. Measured through the CLI on two real English corpora (known-item search
    /// over this machine's manual pages and over Debian's application descriptions),
    /// stemming raised nDCG@10 over `unicode61` on both (docs/recall.md).
    pub const NEW_STORE: Tokenizer = Tokenizer::Porter;

    /// What a store that records no tokenizer was built with (stores made before the
    /// tokenizer was recorded, and v1 stores, whose migration keeps it).
    pub const UNRECORDED: Tokenizer = Tokenizer::Unicode61;

    /// The name a binding (`store_tokenizer`) and `store_meta` use.
    pub fn name(self) -> &'static str {
        match self {
            Tokenizer::Unicode61 => "unicode61",
            Tokenizer::Porter => "porter",
        }
    }

    /// The tokenizer called `name`.
    pub fn from_name(name: &str) -> Option<Tokenizer> {
        Tokenizer::ALL.into_iter().find(|t| t.name() == name)
    }

    /// The FTS5 `tokenize` option.
    pub fn fts_option(self) -> &'static str {
        match self {
            Tokenizer::Unicode61 => "unicode61",
            Tokenizer::Porter => "porter unicode61",
        }
    }
}

/// The statement creating the index with `tokenizer`.
pub fn create_index_sql(tokenizer: Tokenizer) -> String {
    format!(
        "CREATE VIRTUAL TABLE IF NOT EXISTS resources_fts USING fts5(body, tokenize = '{}');",
        tokenizer.fts_option()
    )
}

/// The search text of a record's bytes: the `content_summary` of a JSON object that has
/// one as text, else the bytes as text (invalid UTF-8 replaced).
pub fn search_text(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    if let Ok(Value::Object(record)) = crate::wire::json::parse(text.trim_end())
        && let Some(summary) = record.get("content_summary").and_then(Value::as_str)
    {
        return summary.to_owned();
    }
    text.into_owned()
}

/// The store's schema marker (`None`: not recorded).
pub fn schema_version(conn: &Connection) -> rusqlite::Result<Option<String>> {
    conn.query_row(
        "SELECT value FROM store_meta WHERE key = 'schema_version'",
        [],
        |row| row.get(0),
    )
    .optional()
}

/// The tokenizer recorded for the store ([`Tokenizer::UNRECORDED`] when none is recorded
/// or the name is unknown: the only one stores without the key were built with).
pub fn recorded_tokenizer(conn: &Connection) -> rusqlite::Result<Tokenizer> {
    let name: Option<String> = conn
        .query_row(
            "SELECT value FROM store_meta WHERE key = ?1",
            params![TOKENIZER_KEY],
            |row| row.get(0),
        )
        .optional()?;
    Ok(name
        .as_deref()
        .and_then(Tokenizer::from_name)
        .unwrap_or(Tokenizer::UNRECORDED))
}

/// Sets a `store_meta` key.
pub fn set_meta(conn: &Connection, key: &str, value: &str) -> rusqlite::Result<()> {
    conn.execute(
        "INSERT INTO store_meta (key, value) VALUES (?1, ?2)
         ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        params![key, value],
    )?;
    Ok(())
}

/// Rebuilds the index with `tokenizer` and records the current schema version and the
/// tokenizer. Run it inside a write transaction. `from_records`: take each row's search
/// text from its record's bytes (a v1 index holds the whole record); otherwise each row
/// keeps the text it was indexed with. Records without an index row get one from their
/// bytes.
pub fn rebuild(
    conn: &Connection,
    tokenizer: Tokenizer,
    from_records: bool,
    schema_version: &str,
) -> rusqlite::Result<()> {
    let mut kept: Vec<(i64, String)> = Vec::new();
    if !from_records {
        let mut stmt = conn.prepare(
            "SELECT f.rowid, f.body FROM resources_fts f JOIN resources r ON r.id = f.rowid",
        )?;
        kept = stmt
            .query_map([], |row| Ok((row.get(0)?, row.get(1)?)))?
            .collect::<rusqlite::Result<_>>()?;
    }
    conn.execute_batch("DROP TABLE IF EXISTS resources_fts;")?;
    conn.execute_batch(&create_index_sql(tokenizer))?;
    {
        let mut insert = conn.prepare("INSERT INTO resources_fts (rowid, body) VALUES (?1, ?2)")?;
        for (id, body) in &kept {
            insert.execute(params![id, body])?;
        }
        let mut missing = conn.prepare(
            "SELECT id, content FROM resources
             WHERE id NOT IN (SELECT rowid FROM resources_fts) ORDER BY id",
        )?;
        let rows = missing
            .query_map([], |row| {
                Ok((row.get::<_, i64>(0)?, row.get::<_, Vec<u8>>(1)?))
            })?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        for (id, content) in rows {
            insert.execute(params![id, search_text(&content)])?;
        }
    }
    set_meta(conn, "schema_version", schema_version)?;
    set_meta(conn, TOKENIZER_KEY, tokenizer.name())?;
    Ok(())
}

#[cfg(test)]
mod tests;
