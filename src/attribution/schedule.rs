//! The quota and sample decisions, pure functions of what the shell passes in: the runs
//! an evaluator made (unix seconds, from its quota state file), the current time, and a
//! deterministic hash of the observation key (no clock or randomness inside).

use crate::wire::json::{self, Value};

use super::profile::Quota;

/// Schema of an evaluator's quota state file.
pub const QUOTA_SCHEMA_VERSION: &str = "memory_utility_attribution_quota_v0";

/// Where in [0, 1) the key falls: the first 8 bytes of its SHA-256 over 2^64.
pub fn sample_point(key: &str) -> f64 {
    use sha2::Digest as _;
    let digest = sha2::Sha256::digest(key.as_bytes());
    let mut first = [0u8; 8];
    first.copy_from_slice(&digest[..8]);
    u64::from_be_bytes(first) as f64 / 18_446_744_073_709_551_616.0
}

/// The key an attribution is sampled by: the receipt, the evaluator and the outcome.
pub fn sample_key(receipt_id: &str, evaluator_id: &str, outcome_ref: &str) -> String {
    format!("{receipt_id}\n{evaluator_id}\n{outcome_ref}")
}

/// True when an evaluator with `rate` runs for `key`.
pub fn sampled_in(key: &str, rate: f64) -> bool {
    rate >= 1.0 || sample_point(key) < rate
}

/// The runs within the window ending at `now` (both in unix seconds).
pub fn runs_in_window(runs: &[i64], now: i64, window_seconds: u64) -> u64 {
    let start = now.saturating_sub(i64::try_from(window_seconds).unwrap_or(i64::MAX));
    runs.iter().filter(|&&t| t > start && t <= now).count() as u64
}

/// May one more run start, given `used` runs in the window?
pub fn quota_allows(used: u64, quota: Option<Quota>) -> bool {
    quota.is_none_or(|q| used < q.max)
}

/// The runs kept in a quota state file: those still inside the window, plus `added`.
pub fn kept_runs(runs: &[i64], now: i64, window_seconds: u64, added: &[i64]) -> Vec<i64> {
    let start = now.saturating_sub(i64::try_from(window_seconds).unwrap_or(i64::MAX));
    let mut kept: Vec<i64> = runs.iter().copied().filter(|&t| t > start).collect();
    kept.extend_from_slice(added);
    kept.sort_unstable();
    kept
}

/// The quota state file's text.
pub fn quota_text(evaluator_id: &str, runs: &[i64]) -> String {
    json::to_pretty_line(&Value::Object(crate::obj! {
        "schema_version" => QUOTA_SCHEMA_VERSION,
        "evaluator_id" => evaluator_id,
        "runs" => Value::Array(runs.iter().map(|&t| Value::Int(t)).collect()),
    }))
}

/// Reads a quota state file's runs; `None` when it is not one (the shell then refuses to
/// run the evaluator rather than forget its quota).
pub fn parse_quota(bytes: &[u8]) -> Option<Vec<i64>> {
    let value = json::parse(json::decode_utf8(bytes).ok()?).ok()?;
    let map = value.as_object()?;
    if map.get("schema_version").and_then(Value::as_str) != Some(QUOTA_SCHEMA_VERSION) {
        return None;
    }
    match map.get("runs")? {
        Value::Array(items) => items
            .iter()
            .map(|v| match v {
                Value::Int(t) => Some(*t),
                _ => None,
            })
            .collect(),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quota_counts_runs_inside_the_window_only() {
        let runs = [100, 150, 200];
        assert_eq!(runs_in_window(&runs, 200, 60), 2);
        let q = Quota {
            max: 2,
            window_seconds: 60,
        };
        assert!(!quota_allows(2, Some(q)));
        assert!(quota_allows(1, Some(q)));
        assert!(quota_allows(99, None));
        assert_eq!(kept_runs(&runs, 200, 60, &[201]), vec![150, 200, 201]);
        assert_eq!(
            parse_quota(quota_text("evaluator:x", &[1, 2]).as_bytes()),
            Some(vec![1, 2])
        );
    }

    #[test]
    fn sampling_is_a_deterministic_function_of_the_key() {
        let key = sample_key("rma_x", "evaluator:x", "effect:1");
        assert_eq!(sampled_in(&key, 0.5), sampled_in(&key, 0.5));
        assert!(sampled_in(&key, 1.0));
        assert!(!sampled_in(&key, 0.0));
        let inside = (0..1000)
            .filter(|i| sampled_in(&format!("k{i}"), 0.3))
            .count();
        assert!((200..400).contains(&inside), "{inside}");
    }
}
