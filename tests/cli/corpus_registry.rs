//! `corpus-registry`: the seven reference corpora.

use crate::snap;
use crate::support::run;

#[test]
fn corpus_registry_markdown_counts_seven_corpora() {
    snap!("corpus_registry_markdown", run(&["corpus-registry"]));
}

#[test]
fn corpus_registry_json_covers_every_class() {
    let out = run(&["corpus-registry", "--format", "json"]);
    assert_eq!(out.code, 0);
    let packet = out.json();
    assert_eq!(packet["corpus_count"], 7);
    let coverage = packet["class_coverage"].as_object().expect("coverage");
    assert_eq!(coverage.len(), 5);
    assert_eq!(
        coverage["procedural_experience"],
        serde_json::json!(["distilled_experiences", "execution_trajectories"])
    );
}

#[test]
fn bad_format_value_is_an_argument_error() {
    snap!(
        "corpus_registry_bad_format",
        run(&["corpus-registry", "--format", "yaml"])
    );
}
