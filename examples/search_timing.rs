//! Times the embedded store's search in process: each query of a JSON Lines file through
//! the provider's `retrieve` (open, term index, rows read), one at a time, and prints the
//! ranked document numbers per query (for scoring) and the median and p95 time.
//!
//! Usage: `cargo run --release --example search_timing -- STORE QUERIES.jsonl LIMIT SCOPE_REF`
//! (each query line `{"text": ...}`; SCOPE_REF the records' scope, e.g.
//! `embedded://reward-memory/issue-fix`). Output: one line per query, `ranked` followed by
//! the records' resource refs best first, then `timing median_ms p95_ms`. Used by
//! bench/search-quality.sh; it asserts nothing.

use std::io::{BufRead as _, Write as _};
use std::time::Instant;

use reward_memory::provider::embedded::EmbeddedStore;
use reward_memory::provider::{ContextProvider, ResultCap, RetrieveRequest};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let [_, store, queries, limit, scope_ref] = args.as_slice() else {
        return Err("usage: search_timing STORE QUERIES.jsonl LIMIT SCOPE_REF".into());
    };
    let limit: usize = limit.parse()?;
    let store = EmbeddedStore::new(store.into());
    let mut out = std::io::stdout().lock();
    let mut times: Vec<f64> = Vec::new();
    for line in std::io::BufReader::new(std::fs::File::open(queries)?).lines() {
        let line = line?;
        let query: serde_json::Value = serde_json::from_str(&line)?;
        let text = query["text"].as_str().ok_or("a query line without text")?;
        let request = RetrieveRequest {
            namespace: "reward_memory".to_owned(),
            scope_ref: scope_ref.clone(),
            query: text.to_owned(),
            query_summary: "bench".to_owned(),
            max_results: limit,
            cap: ResultCap::Pool,
            timeout_seconds: 5.0,
            observed_at: "2026-07-16T01:00:00+00:00".to_owned(),
        };
        let start = Instant::now();
        let retrieval = store.retrieve(&request);
        times.push(start.elapsed().as_secs_f64() * 1000.0);
        let refs: Vec<&str> = retrieval
            .items
            .iter()
            .map(|item| item.resource_ref.as_str())
            .collect();
        writeln!(out, "ranked {}", refs.join(" "))?;
    }
    times.sort_by(f64::total_cmp);
    let at = |q: f64| times[((times.len() as f64 * q).ceil() as usize).clamp(1, times.len()) - 1];
    if !times.is_empty() {
        writeln!(out, "timing {:.3} {:.3}", at(0.5), at(0.95))?;
    }
    Ok(())
}
