//! The value kinds of an observation: the utility label, the attribution level, the
//! evidence tier (each with its wire spellings, serialization and JSON Schema) and the
//! four scope ids.

use crate::obj;
use crate::wire::credential;
use crate::wire::json::{Json, Map, Text, Value};
use crate::wire::text::FieldResult;

macro_rules! string_enum {
    ($(#[$doc:meta])* $name:ident { $($variant:ident => $text:literal),+ $(,)? }) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum $name { $($variant),+ }

        impl $name {
            /// Every value in the contract's canonical order.
            pub const ALL: &'static [$name] = &[$($name::$variant),+];
            /// Every wire spelling in the contract's canonical order.
            pub const NAMES: &'static [&'static str] = &[$($text),+];

            /// The wire spelling.
            pub fn as_str(self) -> &'static str {
                match self { $($name::$variant => $text),+ }
            }

            /// Parses the wire spelling.
            pub fn parse(text: &str) -> Option<$name> {
                match text { $($text => Some($name::$variant),)+ _ => None }
            }

            /// Position in [`Self::ALL`].
            pub fn index(self) -> usize {
                self as usize
            }
        }

        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_str(self.as_str())
            }
        }
    };
}

/// The JSON Schema of one of the string enums above: its wire spellings in `names`.
macro_rules! enum_schema {
    ($name:ident, $description:literal, $names:expr) => {
        impl schemars::JsonSchema for $name {
            fn schema_name() -> std::borrow::Cow<'static, str> {
                stringify!($name).into()
            }
            fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
                crate::wire::schema::string_enum($description, $names)
            }
        }
    };
}

string_enum!(
    /// The evaluator's judgment of one memory (or set) for one outcome.
    UtilityLabel {
        Helpful => "helpful",
        Harmful => "harmful",
        Neutral => "neutral",
        Unknown => "unknown",
    }
);

string_enum!(
    /// What the evidence can tell apart: one memory, the whole set, or nothing.
    AttributionLevel {
        Item => "item",
        Set => "set",
        None => "none",
    }
);

string_enum!(
    /// Evidence tiers, weakest first: the derived `Ord` is the precedence order.
    EvidenceBasis {
        Insufficient => "insufficient",
        EvaluatorInference => "evaluator_inference",
        DeterministicEffect => "deterministic_effect",
        ControlledReplay => "controlled_replay",
        OwnerCorrection => "owner_correction",
    }
);

enum_schema!(
    UtilityLabel,
    "`helpful`, `harmful`, `neutral` or `unknown`.",
    UtilityLabel::NAMES.iter().copied()
);
enum_schema!(
    AttributionLevel,
    "`item`, `set` or `none`.",
    AttributionLevel::NAMES.iter().copied()
);
enum_schema!(
    EvidenceBasis,
    "Evidence tiers, strongest first: owner correction, controlled replay, deterministic\neffect, evaluator inference, insufficient.",
    EvidenceBasis::NAMES.iter().rev().copied()
);

impl UtilityLabel {
    /// helpful +1, harmful −1, neutral 0; unknown has no direction.
    pub fn direction(self) -> Option<f64> {
        match self {
            UtilityLabel::Helpful => Some(1.0),
            UtilityLabel::Harmful => Some(-1.0),
            UtilityLabel::Neutral => Some(0.0),
            UtilityLabel::Unknown => None,
        }
    }
}

impl EvidenceBasis {
    /// The three tiers that require at least one evidence reference.
    pub fn is_strong(self) -> bool {
        matches!(
            self,
            EvidenceBasis::OwnerCorrection
                | EvidenceBasis::ControlledReplay
                | EvidenceBasis::DeterministicEffect
        )
    }
}

/// The four scope ids of an observation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scope {
    pub agent_id: Text,
    pub project_id: Text,
    pub corpus_id: Text,
    pub surface_id: Text,
}

impl Scope {
    /// The four ids with their keys, in declaration order.
    pub fn ids(&self) -> [(&'static str, &str); 4] {
        [
            ("agent_id", &self.agent_id),
            ("project_id", &self.project_id),
            ("corpus_id", &self.corpus_id),
            ("surface_id", &self.surface_id),
        ]
    }

    /// [`credential::check`] on the four ids, labelled `{label}.agent_id` and so on.
    pub fn credential_free(&self, label: &str) -> FieldResult<()> {
        for (key, id) in self.ids() {
            credential::check_labelled(id, || format!("{label}.{key}"))?;
        }
        Ok(())
    }

    /// The scope object in declaration order (`agent_id, project_id, corpus_id, surface_id`).
    pub fn to_map(&self) -> Map {
        obj! {
            "agent_id" => self.agent_id.as_str(),
            "project_id" => self.project_id.as_str(),
            "corpus_id" => self.corpus_id.as_str(),
            "surface_id" => self.surface_id.as_str(),
        }
    }

    /// The scope entries in declaration order, borrowed.
    pub fn entries(&self) -> [(&'static str, Json<'_>); 4] {
        [
            ("agent_id", Json::Str(&self.agent_id)),
            ("project_id", Json::Str(&self.project_id)),
            ("corpus_id", Json::Str(&self.corpus_id)),
            ("surface_id", Json::Str(&self.surface_id)),
        ]
    }

    /// The scope entries in sorted key order, borrowed.
    pub fn sorted_entries(&self) -> [(&'static str, Json<'_>); 4] {
        [
            ("agent_id", Json::Str(&self.agent_id)),
            ("corpus_id", Json::Str(&self.corpus_id)),
            ("project_id", Json::Str(&self.project_id)),
            ("surface_id", Json::Str(&self.surface_id)),
        ]
    }

    /// The scope object in sorted key order, as projections print it.
    pub fn to_sorted_map(&self) -> Map {
        obj! {
            "agent_id" => self.agent_id.as_str(),
            "corpus_id" => self.corpus_id.as_str(),
            "project_id" => self.project_id.as_str(),
            "surface_id" => self.surface_id.as_str(),
        }
    }

    /// Reads a scope whose four values were already validated as strings.
    pub fn from_map(map: &Map) -> Scope {
        let get = |k: &str| {
            map.get(k)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned()
        };
        Scope {
            agent_id: Text::from(get("agent_id")),
            project_id: Text::from(get("project_id")),
            corpus_id: Text::from(get("corpus_id")),
            surface_id: Text::from(get("surface_id")),
        }
    }
}
