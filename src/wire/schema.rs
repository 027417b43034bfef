//! The JSON Schema vocabulary of typed packets: keys whose value is one constant (a string
//! declared with [`const_string!`](crate::const_string), [`AlwaysTrue`], [`AlwaysFalse`]),
//! keys that are always present but may be `null` ([`Nullable`]), and string enums whose
//! spellings come from their own table ([`string_enum`]).
//!
//! The constants are values too: each prints its constant (serde) and describes it
//! (schemars), so a packet type holding [`AlwaysFalse`] can only be built, and printed,
//! with `false`. Packet types of every layer use these; [`crate::schema`] collects their
//! schemas. Depends on nothing else of the crate.

use std::borrow::Cow;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};

/// A boolean that is always `false` in the packet.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AlwaysFalse;

impl serde::Serialize for AlwaysFalse {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_bool(false)
    }
}

impl JsonSchema for AlwaysFalse {
    fn schema_name() -> Cow<'static, str> {
        "AlwaysFalse".into()
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({"type": "boolean", "const": false})
    }
}

/// A boolean that is always `true` in the packet.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AlwaysTrue;

impl serde::Serialize for AlwaysTrue {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_bool(true)
    }
}

impl JsonSchema for AlwaysTrue {
    fn schema_name() -> Cow<'static, str> {
        "AlwaysTrue".into()
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({"type": "boolean", "const": true})
    }
}

/// The schema of a key that is always present and may be `null` (an `Option<T>` field
/// printed as `null` when it is `None`): `#[schemars(with = "Nullable<T>")]`.
pub struct Nullable<T>(std::marker::PhantomData<T>);

impl<T: JsonSchema> JsonSchema for Nullable<T> {
    fn schema_name() -> Cow<'static, str> {
        format!("Nullable_{}", T::schema_name()).into()
    }
    fn inline_schema() -> bool {
        true
    }
    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        json_schema!({"anyOf": [generator.subschema_for::<T>(), {"type": "null"}]})
    }
}

/// The schema of a string enum: `{"type": "string", "enum": names, "description"}`, for
/// an enum whose wire spellings come from its own table rather than a derive.
pub fn string_enum<'a>(description: &str, names: impl IntoIterator<Item = &'a str>) -> Schema {
    let names: Vec<&str> = names.into_iter().collect();
    json_schema!({"type": "string", "enum": names, "description": description})
}

/// Declares a string type whose value is one constant: `$name::VALUE` is the text, the
/// type prints it (serde) and its schema is that constant (schemars).
#[macro_export]
macro_rules! const_string {
    ($name:ident, $value:expr) => {
        #[doc = concat!("The constant `", $value, "`.")]
        #[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
        pub struct $name;
        impl $name {
            /// The constant.
            pub const VALUE: &'static str = $value;
        }
        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_str($value)
            }
        }
        impl schemars::JsonSchema for $name {
            fn schema_name() -> std::borrow::Cow<'static, str> {
                stringify!($name).into()
            }
            fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
                schemars::json_schema!({"type": "string", "const": $value})
            }
        }
    };
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::json::{self, Value};

    crate::const_string!(Example, "example_v0");

    #[test]
    fn kinds_serialize_as_what_their_schema_promises() {
        assert_eq!(json::to_value(&AlwaysTrue).ok(), Some(Value::Bool(true)));
        assert_eq!(json::to_value(&AlwaysFalse).ok(), Some(Value::Bool(false)));
        assert_eq!(
            json::to_value(&Example).ok(),
            Some(Value::from("example_v0"))
        );
        assert_eq!(Example::VALUE, "example_v0");
        let schema = schemars::schema_for!(Example);
        assert_eq!(schema.get("const"), Some(&serde_json::json!("example_v0")));
    }

    #[test]
    fn a_string_enum_schema_lists_its_names_in_order() {
        let schema = string_enum("Two values.", ["b", "a"]);
        assert_eq!(
            schema.as_value(),
            &serde_json::json!({"type": "string", "enum": ["b", "a"], "description": "Two values."})
        );
    }
}
