//! The validation order of one ingest request (§9.2), pure: [`form`] checks the route
//! options and the input's keys, the shell then resolves the experiment route of the
//! configured form, [`plan`] selects the event, corpus, standing policy, provider binding
//! and time, and [`ingest`] runs the adapter in the given [`Mode`].

use crate::contract::experiment::{
    self, ISSUE_FIX_ADAPTER, Resolution, SCOPED_FEEDBACK_ADAPTER, SurfaceRoute,
};
use crate::wire::json::{Map, Value};
use crate::wire::pyfmt::pystr;

use super::adapters::{self, Mode, Route, Staged};
use super::{CONFIGURED_FORM_FIELDS, FULL_FORM_FIELDS, IngestError};

/// The two input forms of a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Form<'a> {
    /// The input carries its own corpus, standing policy and provider binding; the
    /// result is a dry run.
    Full,
    /// The route comes from the experiment config of the goal, for the agent.
    Configured { goal_id: &'a str, agent_id: &'a str },
}

/// Step 1: the form of the request. An empty goal or agent id counts as absent; both
/// or neither must be given, an executed write needs the configured form, and the input
/// may only have the keys of its form.
pub fn form<'a>(
    source: &Map,
    goal_id: Option<&'a str>,
    agent_id: Option<&'a str>,
    execute: bool,
) -> Result<Form<'a>, IngestError> {
    let goal_id = goal_id.filter(|s| !s.is_empty());
    let agent_id = agent_id.filter(|s| !s.is_empty());
    let form = match (goal_id, agent_id) {
        (Some(goal_id), Some(agent_id)) => Form::Configured { goal_id, agent_id },
        (None, None) => Form::Full,
        _ => return Err(IngestError::UnpairedRoute),
    };
    if execute && form == Form::Full {
        return Err(IngestError::ExecuteWithoutRoute);
    }
    let allowed = match form {
        Form::Full => FULL_FORM_FIELDS,
        Form::Configured { .. } => CONFIGURED_FORM_FIELDS,
    };
    let unexpected: Vec<&str> = source.keys().filter(|k| !allowed.contains(k)).collect();
    if !unexpected.is_empty() {
        return Err(IngestError::UnsupportedFields(crate::wire::keys::list(
            unexpected,
        )));
    }
    Ok(form)
}

/// A request ready for its adapter: what [`ingest`] runs.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    /// `str()` of the adapter: the configured one, else the input's.
    pub adapter: String,
    /// The event object.
    pub event: Value,
    /// The corpus, standing policy and provider binding, from the route or the input
    /// (each an object; normalized by the adapter's steps).
    pub corpus: Value,
    pub standing_policy: Value,
    pub provider_binding: Map,
    /// `str(input.observed_at or "")`, unstripped.
    pub observed_at: String,
    /// The experiment status packet of the configured form, added to the receipt as
    /// `experiment`.
    pub experiment: Option<Map>,
}

/// Steps 2–4 for the parsed input of a request whose [`form`] passed: `resolution` is
/// the experiment of the configured form (`None` for the full form). The route must be
/// available, the event an object; the configured form takes the route of the event's
/// surface (a supplied adapter must match it), the full form the input's own parts.
pub fn plan(source: &Map, resolution: Option<Resolution>) -> Result<Plan, IngestError> {
    plan_with(source, resolution.as_ref())
}

/// [`plan`] with a borrowed resolution: a JSON Lines ingest resolves the route once and
/// plans every line with it.
pub fn plan_with(source: &Map, resolution: Option<&Resolution>) -> Result<Plan, IngestError> {
    let experiment = match resolution {
        Some(resolution) => {
            let Some(config) = resolution.config.as_ref() else {
                let status = resolution.status_name();
                return Err(IngestError::ExperimentUnavailable(if status.is_empty() {
                    "unavailable".to_owned()
                } else {
                    status
                }));
            };
            Some((&resolution.status, config))
        }
        None => None,
    };
    let event = match source.get("event") {
        Some(v @ Value::Object(_)) => v.clone(),
        _ => return Err(IngestError::NotAnObject("event")),
    };
    let supplied_adapter = source.get("adapter").filter(|v| v.is_truthy());
    let route: Option<SurfaceRoute> = match &experiment {
        Some((_, config)) => {
            let surface_id = pystr(event.get("surface_id"));
            let adapter = supplied_adapter.map(|v| pystr(Some(v)));
            Some(experiment::surface_route(
                config,
                &surface_id,
                adapter.as_deref(),
            )?)
        }
        None => None,
    };
    let field = |key: &str| source.get(key).cloned().unwrap_or(Value::Null);
    let (adapter, corpus, standing_policy, binding) = match route {
        Some(route) => (
            Value::from(&route.adapter),
            Value::Object(route.ingest.corpus),
            Value::Object(route.ingest.standing_policy),
            Value::Object(route.ingest.provider_binding),
        ),
        None => (
            supplied_adapter.cloned().unwrap_or(Value::Null),
            field("corpus"),
            field("standing_policy"),
            field("provider_binding"),
        ),
    };
    for (key, value) in [
        ("corpus", &corpus),
        ("standing_policy", &standing_policy),
        ("provider_binding", &binding),
    ] {
        if value.as_object().is_none() {
            return Err(IngestError::NotAnObject(key));
        }
    }
    Ok(Plan {
        adapter: pystr(Some(&adapter)),
        event,
        corpus,
        standing_policy,
        provider_binding: binding.as_object().cloned().unwrap_or_default(),
        observed_at: pystr(source.get("observed_at")),
        experiment: experiment.map(|(status, _)| status.clone()),
    })
}

/// Step 5 on: the plan's adapter in `mode`, and the experiment status of the configured
/// form as the receipt's `experiment`.
pub fn ingest(plan: &Plan, mode: &Mode<'_>) -> Result<Map, IngestError> {
    stage(plan)?.finish(mode)
}

/// [`ingest`] up to the write: the adapter's checks, the candidate, the guard and the
/// record, with nothing written; [`Staged::finish`] runs the rest.
pub fn stage(plan: &Plan) -> Result<Staged, IngestError> {
    let route = Route {
        corpus: &plan.corpus,
        standing_policy: &plan.standing_policy,
        provider_binding: &plan.provider_binding,
        observed_at: &plan.observed_at,
    };
    let staged = match plan.adapter.as_str() {
        ISSUE_FIX_ADAPTER => adapters::stage_issue_fix_event(&plan.event, &route)?,
        SCOPED_FEEDBACK_ADAPTER => adapters::stage_scoped_feedback_event(&plan.event, &route)?,
        _ => return Err(IngestError::UnsupportedAdapter),
    };
    Ok(staged.with_experiment(plan.experiment.clone()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::obj;

    const FIXTURE: &str =
        include_str!("../../../fixtures/ingest_event/valid/issue-fix-planned.json");

    fn fixture() -> Map {
        match crate::wire::json::parse(FIXTURE) {
            Ok(Value::Object(map)) => map,
            other => panic!("fixture is an object: {other:?}"),
        }
    }

    fn message<T: std::fmt::Debug>(result: Result<T, IngestError>) -> String {
        result.expect_err("refused").to_string()
    }

    #[test]
    fn the_form_is_checked_before_the_keys() {
        let source = fixture().with("extra", 1);
        assert_eq!(
            message(form(&source, Some("g"), None, false)),
            "--goal-id and --agent-id must be supplied together"
        );
        assert_eq!(
            message(form(&source, Some(""), Some(""), true)),
            "--execute requires an enabled experiment route via --goal-id and --agent-id"
        );
        assert_eq!(
            message(form(&source, None, None, false)),
            "ingest input contains unsupported fields: extra"
        );
        assert_eq!(
            message(form(&fixture(), Some("g"), Some("a"), true)),
            "ingest input contains unsupported fields: corpus, provider_binding, standing_policy"
        );
        assert_eq!(
            form(&fixture(), None, Some(""), false).ok(),
            Some(Form::Full)
        );
        assert_eq!(
            form(&obj! {"event" => obj! {}}, Some("g"), Some("a"), true).ok(),
            Some(Form::Configured {
                goal_id: "g",
                agent_id: "a"
            })
        );
    }

    #[test]
    fn an_unavailable_route_is_refused_before_the_event_is_read() {
        let resolution = Resolution {
            status: obj! {"status" => "agent_not_enabled"},
            config: None,
            problem: None,
        };
        assert_eq!(
            message(plan(&Map::new(), Some(resolution))),
            "Reward Memory experiment is unavailable for this agent: agent_not_enabled"
        );
        let resolution = Resolution {
            status: Map::new(),
            config: None,
            problem: None,
        };
        assert_eq!(
            message(plan(&Map::new(), Some(resolution))),
            "Reward Memory experiment is unavailable for this agent: unavailable"
        );
        assert_eq!(message(plan(&Map::new(), None)), "event must be an object");
    }

    #[test]
    fn the_full_form_takes_its_own_parts_in_order() {
        let source = fixture();
        let planned = plan(&source, None).expect("plan");
        assert_eq!(planned.adapter, ISSUE_FIX_ADAPTER);
        assert_eq!(planned.observed_at, pystr(source.get("observed_at")));
        assert_eq!(planned.experiment, None);
        for key in ["corpus", "standing_policy", "provider_binding"] {
            let mut broken = fixture();
            broken.insert(key, "nope");
            assert_eq!(
                message(plan(&broken, None)),
                format!("{key} must be an object")
            );
        }
        let unsupported = fixture().with("adapter", "semantic_router");
        let planned = plan(&unsupported, None).expect("plan");
        assert_eq!(
            message(ingest(&planned, &Mode::DryRun)),
            "adapter is unsupported; semantic routing is intentionally not inferred"
        );
        let receipt = ingest(&plan(&source, None).expect("plan"), &Mode::DryRun).expect("ingest");
        assert_eq!(receipt.get("status"), Some(&Value::from("planned")));
    }
}
