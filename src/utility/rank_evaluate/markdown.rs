//! The markdown view of a `memory_utility_ranking_evaluation_v0` packet: the verdict, one
//! arm × metric table with intervals, the differences against arm 1, the gate's checks
//! and the sweep. A view of the packet only: it reads nothing else.

use crate::wire::json::Value;

fn f(v: Option<&Value>) -> Option<f64> {
    match v {
        Some(Value::Float(x)) => Some(*x),
        Some(Value::Int(i)) => Some(*i as f64),
        _ => None,
    }
}

fn fixed(x: Option<f64>, signed: bool) -> String {
    match x {
        None => "n/a".to_owned(),
        Some(x) if signed => format!("{x:+.3}"),
        Some(x) => format!("{x:.3}"),
    }
}

/// `0.612 [0.601, 0.623]` for an estimate object.
fn estimate(e: Option<&Value>, signed: bool) -> String {
    let Some(e) = e.filter(|e| e.as_object().is_some()) else {
        return "—".to_owned();
    };
    let est = f(e.get("estimate"));
    if est.is_none() {
        return "n/a".to_owned();
    }
    format!(
        "{} [{}, {}]",
        fixed(est, signed),
        fixed(f(e.get("lower")), signed),
        fixed(f(e.get("upper")), signed)
    )
}

fn text(v: Option<&Value>) -> String {
    match v {
        Some(Value::Str(s)) => s.clone(),
        Some(Value::Int(i)) => i.to_string(),
        Some(Value::Float(x)) => crate::wire::pyfmt::float_repr(*x),
        Some(Value::Bool(b)) => b.to_string(),
        _ => String::new(),
    }
}

fn list(v: Option<&Value>) -> Vec<&Value> {
    v.and_then(Value::as_array)
        .map(|a| a.iter().collect())
        .unwrap_or_default()
}

fn check(passed: Option<&Value>) -> &'static str {
    if passed == Some(&Value::Bool(true)) {
        "[x]"
    } else {
        "[ ]"
    }
}

/// Renders the packet.
pub fn render(packet: &Value) -> String {
    let get = |k: &str| packet.get(k);
    let k = text(get("settings").and_then(|s| s.get("k")));
    let mut out = Vec::new();
    out.push(format!("# Ranking evaluation: `{}`", text(get("verdict"))));
    out.push(String::new());
    out.push(format!("- verdict: `{}`", text(get("verdict"))));
    let reasons: Vec<String> = list(get("reason_codes"))
        .into_iter()
        .map(|r| text(Some(r)))
        .collect();
    out.push(format!("- reason_codes: `{}`", reasons.join(", ")));
    out.push(format!(
        "- profile: `{}` (`{}`)",
        text(get("profile_id")),
        text(get("profile_digest"))
    ));
    let source = get("source");
    let s = |key: &str| text(source.and_then(|s| s.get(key)));
    let held = get("held_out");
    let h = |key: &str| text(held.and_then(|s| s.get(key)));
    let origin = if s("kind") == "simulation" {
        format!("simulation, seed {}", s("seed"))
    } else {
        format!("episodes file sha256 {}", s("input_sha256"))
    };
    out.push(format!(
        "- source: {origin}: {} training, {} held-out episodes ({} with a truly helpful memory in the pool)",
        s("training_episodes"),
        s("held_out_episodes"),
        h("answerable_episodes")
    ));
    let ledger = get("ledger");
    let l = |key: &str| text(ledger.and_then(|s| s.get(key)));
    out.push(format!(
        "- ledger ({}): {} deliveries ({} duplicate, {} conflicting) in {} partitions; {} item and {} set subjects; {} inference deliveries left out for arm 4",
        l("backend"),
        l("deliveries"),
        l("duplicate"),
        l("conflicting"),
        l("partitions"),
        l("item_subjects"),
        l("set_subjects"),
        l("inference_deliveries_removed_for_arm_4")
    ));
    let settings = get("settings");
    let level = f(settings.and_then(|s| s.get("confidence_level"))).unwrap_or(0.0);
    out.push(format!(
        "- intervals: {}% percentile bootstrap over held-out episodes, {} resamples, paired across arms; k = {k}",
        crate::wire::pyfmt::float_repr((level * 1000.0).round() / 10.0).trim_end_matches(".0"),
        text(settings.and_then(|s| s.get("bootstrap_resamples")))
    ));
    out.push(String::new());
    out.push(format!(
        "| # | arm | nDCG@{k} | success@1 | harmful@{k} | task cost | false attenuation | scope leaks | evaluator disagreement |"
    ));
    out.push("| --- | --- | --- | --- | --- | --- | --- | --- | --- |".to_owned());
    for arm in list(get("arms")) {
        let m = |key: &str| estimate(arm.get("metrics").and_then(|m| m.get(key)), false);
        out.push(format!(
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            text(arm.get("number")),
            text(arm.get("arm")),
            m("ndcg_at_k"),
            m("success_at_1"),
            m("harmful_at_k"),
            m("task_cost"),
            m("false_attenuation"),
            text(arm.get("scope_leaks").and_then(|s| s.get("count"))),
            estimate(arm.get("evaluator_disagreement"), false),
        ));
    }
    out.push(String::new());
    out.push("Differences against arm 1 (`semantic`), same resamples:".to_owned());
    out.push(String::new());
    out.push(format!(
        "| # | arm | ΔnDCG@{k} | Δsuccess@1 | Δharmful@{k} | Δtask cost | Δfalse attenuation |"
    ));
    out.push("| --- | --- | --- | --- | --- | --- | --- |".to_owned());
    for d in list(get("differences")) {
        let m = |key: &str| estimate(d.get("metrics").and_then(|m| m.get(key)), true);
        out.push(format!(
            "| {} | {} | {} | {} | {} | {} | {} |",
            text(d.get("number")),
            text(d.get("arm")),
            m("ndcg_at_k"),
            m("success_at_1"),
            m("harmful_at_k"),
            m("task_cost"),
            m("false_attenuation"),
        ));
    }
    out.push(String::new());
    out.push("## Gate".to_owned());
    out.push(String::new());
    let gate = get("gate");
    let g = |key: &str| gate.and_then(|g| g.get(key));
    out.push(format!(
        "- {} nDCG@{k} gain of `bounded_utility` over `semantic` has its interval above 0: {}",
        check(g("ndcg_gain").and_then(|x| x.get("passed"))),
        estimate(g("ndcg_gain").and_then(|x| x.get("difference")), true)
    ));
    out.push(format!(
        "- {} false attenuation of `bounded_utility` at most {}: {}",
        check(g("false_attenuation").and_then(|x| x.get("passed"))),
        fixed(
            f(g("false_attenuation").and_then(|x| x.get("threshold"))),
            false
        ),
        fixed(
            f(g("false_attenuation").and_then(|x| x.get("estimate"))),
            false
        )
    ));
    out.push(format!(
        "- {} harmful@{k} not worse than `semantic`: difference {}",
        check(g("harmful_at_k").and_then(|x| x.get("passed"))),
        fixed(f(g("harmful_at_k").and_then(|x| x.get("difference"))), true)
    ));
    out.push(format!(
        "- {} no scope leaks in any arm: {}",
        check(g("scope_leaks").and_then(|x| x.get("passed"))),
        text(g("scope_leaks").and_then(|x| x.get("count")))
    ));
    if let Some(sweep) = get("sweep").filter(|s| s.as_object().is_some()) {
        let parameter = text(sweep.get("parameter"));
        let points = list(sweep.get("points"));
        let arm_keys: Vec<String> = points
            .first()
            .map(|p| {
                list(p.get("arms"))
                    .into_iter()
                    .map(|a| text(a.get("arm")))
                    .collect()
            })
            .unwrap_or_default();
        out.push(String::new());
        out.push(format!("## Sweep: `{parameter}` (nDCG@{k} per arm)"));
        out.push(String::new());
        let mut header = format!("| {parameter} |");
        for key in &arm_keys {
            header.push_str(&format!(" {key} |"));
        }
        header.push_str(" ΔnDCG@k arm 3 | ΔnDCG@k arm 4 | false attenuation | evaluator disagreement | verdict |");
        out.push(header);
        out.push(format!("|{}", " --- |".repeat(arm_keys.len() + 6)));
        for p in points {
            let arms = list(p.get("arms"));
            let mut row = format!("| {} |", text(p.get("value")));
            for a in &arms {
                row.push_str(&format!(" {} |", estimate(a.get("ndcg_at_k"), false)));
            }
            let diff = |key: &str| {
                arms.iter()
                    .find(|a| text(a.get("arm")) == key)
                    .map_or("—".to_owned(), |a| {
                        estimate(a.get("ndcg_difference_vs_semantic"), true)
                    })
            };
            row.push_str(&format!(
                " {} | {} | {} | {} | {} |",
                diff("bounded_utility"),
                diff("bounded_utility_without_inference"),
                estimate(p.get("false_attenuation"), false),
                estimate(p.get("evaluator_disagreement"), false),
                text(p.get("verdict"))
            ));
            out.push(row);
        }
    }
    let mut s = out.join("\n");
    s.push('\n');
    s
}
