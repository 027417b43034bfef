//! What every ledger packet builds on: the names it prints (its schema version and the
//! ledger reducer's, each a constant type, [`crate::const_string`]; the backend names),
//! the ledger identity every packet of a partition carries, and [`to_value`], the typed
//! packet as the value the output layer prints.

use crate::const_string;
use crate::obj;
use crate::utility::reducer::ReducerContext;
use crate::wire::digest;
use serde::Serialize;

use crate::wire::json::{self, Value};

use super::super::error::{LedgerError, LedgerResult};

const_string!(AppendVersion, "memory_utility_ledger_append_v0");
const_string!(
    LedgerProjectionVersion,
    "memory_utility_ledger_projection_v0"
);
const_string!(LedgerSubjectVersion, "memory_utility_ledger_subject_v0");
const_string!(
    LedgerProjectionV1Version,
    "memory_utility_ledger_projection_v1"
);
const_string!(LedgerSubjectV1Version, "memory_utility_ledger_subject_v1");
const_string!(LedgerVerifyVersion, "memory_utility_ledger_verify_v0");
const_string!(LedgerReducerVersion, "memory_utility_ledger_reducer_v0");

/// The schema version of a projection or subject packet of stored subjects: v0 for the
/// v0 subject rules, v1 for `memory_utility_reducer_v1`'s.
pub trait PacketVersion: Default + Copy + Serialize + schemars::JsonSchema {
    /// The version's spelling.
    const NAME: &'static str;
}

impl PacketVersion for LedgerProjectionVersion {
    const NAME: &'static str = Self::VALUE;
}
impl PacketVersion for LedgerProjectionV1Version {
    const NAME: &'static str = Self::VALUE;
}
impl PacketVersion for LedgerSubjectVersion {
    const NAME: &'static str = Self::VALUE;
}
impl PacketVersion for LedgerSubjectV1Version {
    const NAME: &'static str = Self::VALUE;
}

// The schema of `ledger_backend`: the names `LedgerBackend::backend_name` returns.
/// `sqlite` or `postgres`.
#[derive(schemars::JsonSchema)]
#[schemars(rename = "LedgerBackend")]
#[serde(rename_all = "snake_case")]
#[allow(dead_code)] // Describes a `&'static str`; never built.
pub(super) enum BackendName {
    Sqlite,
    Postgres,
}

/// `mur_` + SHA-256 of canonical `{ledger_reducer_version, policy_snapshot_ref,
/// reducer_version, retrieval_snapshot_ref, schema_version, scope}` for ledger packets:
/// never equal to a v0 identity, so a reader cannot mistake one for the other.
pub fn ledger_identity(context: &ReducerContext, schema_version: &str) -> String {
    digest::prefixed_canonical(
        "mur_",
        &Value::Object(obj! {
            "schema_version" => schema_version,
            "ledger_reducer_version" => LedgerReducerVersion::VALUE,
            "reducer_version" => context.reducer_version.as_str(),
            "scope" => context.scope.to_sorted_map(),
            "retrieval_snapshot_ref" => context.retrieval_snapshot_ref.as_str(),
            "policy_snapshot_ref" => context.policy_snapshot_ref.as_str(),
        }),
    )
}

/// A typed packet as the ordered value the output layer prints (field order = key order;
/// integers and floats keep their type and value).
pub fn to_value<T: Serialize>(packet: &T) -> LedgerResult<Value> {
    json::to_value(packet)
        .map_err(|e| LedgerError::Storage(format!("the packet cannot be printed: {e}")))
}
