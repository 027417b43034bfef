//! The names ledger packets print: their schema versions and the ledger reducer's (each a
//! constant type, [`crate::const_string`]), the backend names, and the ledger identity
//! every ledger packet of a partition carries.

use crate::const_string;
use crate::obj;
use crate::utility::reducer::ReducerContext;
use crate::wire::digest;
use crate::wire::json::Value;

const_string!(AppendVersion, "memory_utility_ledger_append_v0");
const_string!(
    LedgerProjectionVersion,
    "memory_utility_ledger_projection_v0"
);
const_string!(LedgerSubjectVersion, "memory_utility_ledger_subject_v0");
const_string!(LedgerVerifyVersion, "memory_utility_ledger_verify_v0");
const_string!(LedgerReducerVersion, "memory_utility_ledger_reducer_v0");

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
