//! Closed sets of names: an enum whose every value has one fixed spelling ([`Choice`]) and
//! the [`choice!`](crate::choice) macro that declares one.
//!
//! A contract declares its domain enums here (fixture cases, review decisions, operator
//! actions, the output format) without knowing who reads them: the command line builds
//! its value parser and its list of possible values from [`Choice::ALL`] and
//! [`Choice::as_str`] (`cli.rs`), a JSON front end deserializes the same spellings
//! (`serde`), and the schema generator lists them (`schemars`). Nothing here knows clap.

/// An enum with a fixed spelling for each value.
pub trait Choice: Copy + Eq + Send + Sync + 'static {
    /// Every value, in the order a listing shows them.
    const ALL: &'static [Self];

    /// The value's spelling.
    fn as_str(self) -> &'static str;

    /// The value spelled `name` exactly, if any.
    fn from_name(name: &str) -> Option<Self> {
        Self::ALL.iter().copied().find(|v| v.as_str() == name)
    }

    /// Every spelling, in [`Choice::ALL`] order.
    fn names() -> Vec<&'static str> {
        Self::ALL.iter().map(|v| v.as_str()).collect()
    }
}

/// A name that is not one of a [`Choice`]'s spellings.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid value '{name}' (one of: {allowed})")]
pub struct UnknownChoice {
    /// The name as given.
    pub name: String,
    /// The allowed spellings, comma separated.
    pub allowed: String,
}

impl UnknownChoice {
    /// The error for `name` against the spellings of `T`.
    pub fn of<T: Choice>(name: &str) -> UnknownChoice {
        UnknownChoice {
            name: name.to_owned(),
            allowed: T::names().join(", "),
        }
    }
}

/// Declares a [`Choice`] enum: `Variant => "spelling"` per value, in listing order.
///
/// The enum derives `Debug`, `Clone`, `Copy`, `PartialEq`, `Eq` and `Hash`, and gets an
/// inherent `ALL`, `as_str()` and `from_name()`, [`Choice`], `FromStr` (error [`UnknownChoice`]),
/// `Display`, `serde` (de)serialization as the spelling and a `schemars` string enum.
#[macro_export]
macro_rules! choice {
    (
        $(#[$meta:meta])*
        $vis:vis enum $name:ident {
            $( $(#[$vmeta:meta])* $variant:ident => $text:literal ),+ $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        $vis enum $name {
            $( $(#[$vmeta])* $variant ),+
        }

        impl $name {
            /// Every value, in listing order.
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            /// The value's spelling.
            pub const fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $text),+
                }
            }

            /// The value spelled `name` exactly, if any.
            pub fn from_name(name: &str) -> Option<$name> {
                <$name as $crate::wire::choice::Choice>::from_name(name)
            }
        }

        impl $crate::wire::choice::Choice for $name {
            const ALL: &'static [$name] = $name::ALL;

            fn as_str(self) -> &'static str {
                $name::as_str(self)
            }
        }

        impl ::std::str::FromStr for $name {
            type Err = $crate::wire::choice::UnknownChoice;

            fn from_str(name: &str) -> Result<$name, Self::Err> {
                <$name as $crate::wire::choice::Choice>::from_name(name)
                    .ok_or_else(|| $crate::wire::choice::UnknownChoice::of::<$name>(name))
            }
        }

        impl ::std::fmt::Display for $name {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl ::serde::Serialize for $name {
            fn serialize<S: ::serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_str(self.as_str())
            }
        }

        impl<'de> ::serde::Deserialize<'de> for $name {
            fn deserialize<D: ::serde::Deserializer<'de>>(deserializer: D) -> Result<$name, D::Error> {
                let name = <::std::borrow::Cow<'de, str> as ::serde::Deserialize>::deserialize(
                    deserializer,
                )?;
                name.parse().map_err(::serde::de::Error::custom)
            }
        }

        impl ::schemars::JsonSchema for $name {
            fn schema_name() -> ::std::borrow::Cow<'static, str> {
                stringify!($name).into()
            }

            fn json_schema(_: &mut ::schemars::SchemaGenerator) -> ::schemars::Schema {
                ::schemars::json_schema!({"type": "string", "enum": [$($text),+]})
            }
        }
    };
}

#[cfg(test)]
mod tests {
    use super::{Choice, UnknownChoice};

    crate::choice! {
        /// A test set.
        enum Sample {
            First => "first",
            /// With a doc comment.
            SecondOne => "second-one",
        }
    }

    #[test]
    fn spellings_round_trip_through_from_str_display_and_serde() {
        for value in Sample::ALL {
            let name = value.as_str();
            assert_eq!(name.parse::<Sample>(), Ok(*value));
            assert_eq!(Sample::from_name(name), Some(*value));
            assert_eq!(value.to_string(), name);
            let json = serde_json::to_string(value).expect("serializes");
            assert_eq!(json, format!("\"{name}\""));
            let back: Sample = serde_json::from_str(&json).expect("deserializes");
            assert_eq!(back, *value);
        }
        assert_eq!(Sample::names(), ["first", "second-one"]);
    }

    #[test]
    fn an_unknown_name_lists_the_allowed_ones() {
        let err = "second_one".parse::<Sample>().expect_err("unknown");
        assert_eq!(err, UnknownChoice::of::<Sample>("second_one"));
        assert_eq!(
            err.to_string(),
            "invalid value 'second_one' (one of: first, second-one)"
        );
        let err = serde_json::from_str::<Sample>("\"First\"").expect_err("unknown");
        assert!(
            err.to_string().contains("one of: first, second-one"),
            "{err}"
        );
    }

    #[test]
    fn the_schema_lists_every_spelling() {
        let schema = schemars::schema_for!(Sample);
        assert_eq!(
            schema.get("enum"),
            Some(&serde_json::json!(["first", "second-one"]))
        );
    }
}
