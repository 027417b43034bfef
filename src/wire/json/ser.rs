//! serde straight into a [`Value`]: what `serde_json::to_value` followed by
//! [`super::from_serde`] gives, value for value, without building the `serde_json` tree
//! in between (for a large typed packet that intermediate tree costs more than the
//! packet itself).
//!
//! The rules are `serde_json`'s: integers stay integers (beyond `i64`, a `u64` keeps its
//! digits as [`Value::BigInt`]), a non-finite float becomes `null`, a unit variant its
//! name, an enum's other variants a one-key object, map keys strings (numbers and
//! booleans spelled out, anything else refused); a repeated key keeps its first position
//! and takes the last value.

use serde::Serialize;
use serde::ser::{self, Error as _};

use super::{Map, Text, Value};

/// Serializes `value` into a [`Value`].
pub fn to_value<T: Serialize + ?Sized>(value: &T) -> Result<Value, serde_json::Error> {
    value.serialize(ValueSerializer)
}

type Error = serde_json::Error;

fn float(f: f64) -> Value {
    if f.is_finite() {
        Value::Float(f)
    } else {
        Value::Null
    }
}

fn out_of_range() -> Error {
    Error::custom("number out of range")
}

/// The serializer of [`to_value`].
struct ValueSerializer;

impl ser::Serializer for ValueSerializer {
    type Ok = Value;
    type Error = Error;
    type SerializeSeq = Items;
    type SerializeTuple = Items;
    type SerializeTupleStruct = Items;
    type SerializeTupleVariant = VariantItems;
    type SerializeMap = Fields;
    type SerializeStruct = Fields;
    type SerializeStructVariant = VariantFields;

    fn serialize_bool(self, v: bool) -> Result<Value, Error> {
        Ok(Value::Bool(v))
    }
    fn serialize_i8(self, v: i8) -> Result<Value, Error> {
        Ok(Value::Int(i64::from(v)))
    }
    fn serialize_i16(self, v: i16) -> Result<Value, Error> {
        Ok(Value::Int(i64::from(v)))
    }
    fn serialize_i32(self, v: i32) -> Result<Value, Error> {
        Ok(Value::Int(i64::from(v)))
    }
    fn serialize_i64(self, v: i64) -> Result<Value, Error> {
        Ok(Value::Int(v))
    }
    fn serialize_i128(self, v: i128) -> Result<Value, Error> {
        if let Ok(v) = u64::try_from(v) {
            Ok(Value::from(v))
        } else if let Ok(v) = i64::try_from(v) {
            Ok(Value::Int(v))
        } else {
            Err(out_of_range())
        }
    }
    fn serialize_u8(self, v: u8) -> Result<Value, Error> {
        Ok(Value::Int(i64::from(v)))
    }
    fn serialize_u16(self, v: u16) -> Result<Value, Error> {
        Ok(Value::Int(i64::from(v)))
    }
    fn serialize_u32(self, v: u32) -> Result<Value, Error> {
        Ok(Value::Int(i64::from(v)))
    }
    fn serialize_u64(self, v: u64) -> Result<Value, Error> {
        Ok(Value::from(v))
    }
    fn serialize_u128(self, v: u128) -> Result<Value, Error> {
        u64::try_from(v)
            .map(Value::from)
            .map_err(|_| out_of_range())
    }
    fn serialize_f32(self, v: f32) -> Result<Value, Error> {
        Ok(float(f64::from(v)))
    }
    fn serialize_f64(self, v: f64) -> Result<Value, Error> {
        Ok(float(v))
    }
    fn serialize_char(self, v: char) -> Result<Value, Error> {
        let mut buf = [0u8; 4];
        Ok(Value::Str(Text::new(v.encode_utf8(&mut buf))))
    }
    fn serialize_str(self, v: &str) -> Result<Value, Error> {
        Ok(Value::Str(Text::new(v)))
    }
    fn serialize_bytes(self, v: &[u8]) -> Result<Value, Error> {
        Ok(Value::Array(
            v.iter().map(|b| Value::Int(i64::from(*b))).collect(),
        ))
    }
    fn serialize_none(self) -> Result<Value, Error> {
        Ok(Value::Null)
    }
    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<Value, Error> {
        value.serialize(self)
    }
    fn serialize_unit(self) -> Result<Value, Error> {
        Ok(Value::Null)
    }
    fn serialize_unit_struct(self, _name: &'static str) -> Result<Value, Error> {
        Ok(Value::Null)
    }
    fn serialize_unit_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
    ) -> Result<Value, Error> {
        Ok(Value::from(variant))
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        value: &T,
    ) -> Result<Value, Error> {
        value.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        value: &T,
    ) -> Result<Value, Error> {
        let inner = value.serialize(ValueSerializer)?;
        Ok(Value::Object(Map::from_pairs(vec![(
            Text::new(variant),
            inner,
        )])))
    }
    fn serialize_seq(self, len: Option<usize>) -> Result<Items, Error> {
        Ok(Items(Vec::with_capacity(len.unwrap_or(0))))
    }
    fn serialize_tuple(self, len: usize) -> Result<Items, Error> {
        Ok(Items(Vec::with_capacity(len)))
    }
    fn serialize_tuple_struct(self, _name: &'static str, len: usize) -> Result<Items, Error> {
        Ok(Items(Vec::with_capacity(len)))
    }
    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<VariantItems, Error> {
        Ok(VariantItems {
            variant,
            items: Items(Vec::with_capacity(len)),
        })
    }
    fn serialize_map(self, len: Option<usize>) -> Result<Fields, Error> {
        Ok(Fields::new(len.unwrap_or(0)))
    }
    fn serialize_struct(self, _name: &'static str, len: usize) -> Result<Fields, Error> {
        Ok(Fields::new(len))
    }
    fn serialize_struct_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<VariantFields, Error> {
        Ok(VariantFields {
            variant,
            fields: Fields::new(len),
        })
    }
}

/// The items of a sequence or tuple.
struct Items(Vec<Value>);

impl ser::SerializeSeq for Items {
    type Ok = Value;
    type Error = Error;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        self.0.push(value.serialize(ValueSerializer)?);
        Ok(())
    }
    fn end(self) -> Result<Value, Error> {
        Ok(Value::Array(self.0.into_boxed_slice()))
    }
}

impl ser::SerializeTuple for Items {
    type Ok = Value;
    type Error = Error;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        ser::SerializeSeq::serialize_element(self, value)
    }
    fn end(self) -> Result<Value, Error> {
        ser::SerializeSeq::end(self)
    }
}

impl ser::SerializeTupleStruct for Items {
    type Ok = Value;
    type Error = Error;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        ser::SerializeSeq::serialize_element(self, value)
    }
    fn end(self) -> Result<Value, Error> {
        ser::SerializeSeq::end(self)
    }
}

/// A tuple variant: `{variant: [items]}`.
struct VariantItems {
    variant: &'static str,
    items: Items,
}

impl ser::SerializeTupleVariant for VariantItems {
    type Ok = Value;
    type Error = Error;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        ser::SerializeSeq::serialize_element(&mut self.items, value)
    }
    fn end(self) -> Result<Value, Error> {
        let items = ser::SerializeSeq::end(self.items)?;
        Ok(Value::Object(Map::from_pairs(vec![(
            Text::new(self.variant),
            items,
        )])))
    }
}

/// The entries of a map or struct, in order, then one [`Map`].
struct Fields {
    entries: Vec<(Text, Value)>,
    key: Option<Text>,
}

impl Fields {
    fn new(len: usize) -> Fields {
        Fields {
            entries: Vec::with_capacity(len),
            key: None,
        }
    }

    fn end(self) -> Value {
        Value::Object(Map::from_pairs(self.entries))
    }
}

impl ser::SerializeMap for Fields {
    type Ok = Value;
    type Error = Error;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), Error> {
        self.key = Some(key.serialize(KeySerializer)?);
        Ok(())
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        let key = self
            .key
            .take()
            .ok_or_else(|| Error::custom("a map value without its key"))?;
        self.entries.push((key, value.serialize(ValueSerializer)?));
        Ok(())
    }
    fn end(self) -> Result<Value, Error> {
        Ok(Fields::end(self))
    }
}

impl ser::SerializeStruct for Fields {
    type Ok = Value;
    type Error = Error;
    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), Error> {
        self.entries
            .push((Text::new(key), value.serialize(ValueSerializer)?));
        Ok(())
    }
    fn end(self) -> Result<Value, Error> {
        Ok(Fields::end(self))
    }
}

/// A struct variant: `{variant: {fields}}`.
struct VariantFields {
    variant: &'static str,
    fields: Fields,
}

impl ser::SerializeStructVariant for VariantFields {
    type Ok = Value;
    type Error = Error;
    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), Error> {
        ser::SerializeStruct::serialize_field(&mut self.fields, key, value)
    }
    fn end(self) -> Result<Value, Error> {
        Ok(Value::Object(Map::from_pairs(vec![(
            Text::new(self.variant),
            self.fields.end(),
        )])))
    }
}

/// A map key: a string, or a number, boolean or unit variant spelled out.
struct KeySerializer;

fn key_must_be_a_string() -> Error {
    Error::custom("key must be a string")
}

impl ser::Serializer for KeySerializer {
    type Ok = Text;
    type Error = Error;
    type SerializeSeq = ser::Impossible<Text, Error>;
    type SerializeTuple = ser::Impossible<Text, Error>;
    type SerializeTupleStruct = ser::Impossible<Text, Error>;
    type SerializeTupleVariant = ser::Impossible<Text, Error>;
    type SerializeMap = ser::Impossible<Text, Error>;
    type SerializeStruct = ser::Impossible<Text, Error>;
    type SerializeStructVariant = ser::Impossible<Text, Error>;

    fn serialize_bool(self, v: bool) -> Result<Text, Error> {
        Ok(Text::new(if v { "true" } else { "false" }))
    }
    fn serialize_i8(self, v: i8) -> Result<Text, Error> {
        Ok(Text::from(v.to_string()))
    }
    fn serialize_i16(self, v: i16) -> Result<Text, Error> {
        Ok(Text::from(v.to_string()))
    }
    fn serialize_i32(self, v: i32) -> Result<Text, Error> {
        Ok(Text::from(v.to_string()))
    }
    fn serialize_i64(self, v: i64) -> Result<Text, Error> {
        Ok(Text::from(v.to_string()))
    }
    fn serialize_i128(self, v: i128) -> Result<Text, Error> {
        Ok(Text::from(v.to_string()))
    }
    fn serialize_u8(self, v: u8) -> Result<Text, Error> {
        Ok(Text::from(v.to_string()))
    }
    fn serialize_u16(self, v: u16) -> Result<Text, Error> {
        Ok(Text::from(v.to_string()))
    }
    fn serialize_u32(self, v: u32) -> Result<Text, Error> {
        Ok(Text::from(v.to_string()))
    }
    fn serialize_u64(self, v: u64) -> Result<Text, Error> {
        Ok(Text::from(v.to_string()))
    }
    fn serialize_u128(self, v: u128) -> Result<Text, Error> {
        Ok(Text::from(v.to_string()))
    }
    fn serialize_f32(self, v: f32) -> Result<Text, Error> {
        if v.is_finite() {
            serde_json::to_string(&v).map(Text::from)
        } else {
            Err(Error::custom(
                "float key must be finite (got NaN or +/-inf)",
            ))
        }
    }
    fn serialize_f64(self, v: f64) -> Result<Text, Error> {
        if v.is_finite() {
            serde_json::to_string(&v).map(Text::from)
        } else {
            Err(Error::custom(
                "float key must be finite (got NaN or +/-inf)",
            ))
        }
    }
    fn serialize_char(self, v: char) -> Result<Text, Error> {
        let mut buf = [0u8; 4];
        Ok(Text::new(v.encode_utf8(&mut buf)))
    }
    fn serialize_str(self, v: &str) -> Result<Text, Error> {
        Ok(Text::new(v))
    }
    fn serialize_bytes(self, _v: &[u8]) -> Result<Text, Error> {
        Err(key_must_be_a_string())
    }
    fn serialize_none(self) -> Result<Text, Error> {
        Err(key_must_be_a_string())
    }
    fn serialize_some<T: Serialize + ?Sized>(self, _value: &T) -> Result<Text, Error> {
        Err(key_must_be_a_string())
    }
    fn serialize_unit(self) -> Result<Text, Error> {
        Err(key_must_be_a_string())
    }
    fn serialize_unit_struct(self, _name: &'static str) -> Result<Text, Error> {
        Err(key_must_be_a_string())
    }
    fn serialize_unit_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
    ) -> Result<Text, Error> {
        Ok(Text::new(variant))
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        value: &T,
    ) -> Result<Text, Error> {
        value.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _value: &T,
    ) -> Result<Text, Error> {
        Err(key_must_be_a_string())
    }
    fn serialize_seq(self, _len: Option<usize>) -> Result<Self::SerializeSeq, Error> {
        Err(key_must_be_a_string())
    }
    fn serialize_tuple(self, _len: usize) -> Result<Self::SerializeTuple, Error> {
        Err(key_must_be_a_string())
    }
    fn serialize_tuple_struct(
        self,
        _name: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeTupleStruct, Error> {
        Err(key_must_be_a_string())
    }
    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeTupleVariant, Error> {
        Err(key_must_be_a_string())
    }
    fn serialize_map(self, _len: Option<usize>) -> Result<Self::SerializeMap, Error> {
        Err(key_must_be_a_string())
    }
    fn serialize_struct(
        self,
        _name: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeStruct, Error> {
        Err(key_must_be_a_string())
    }
    fn serialize_struct_variant(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeStructVariant, Error> {
        Err(key_must_be_a_string())
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use proptest::prelude::*;

    use super::super::{from_serde, parse};
    use super::*;

    /// What `to_value` replaces: the `serde_json` tree, then [`from_serde`].
    fn through_serde_json<T: Serialize>(value: &T) -> Result<Value, String> {
        serde_json::to_value(value)
            .map(from_serde)
            .map_err(|e| e.to_string())
    }

    fn same<T: Serialize>(value: &T) {
        assert_eq!(
            to_value(value).map_err(|e| e.to_string()),
            through_serde_json(value)
        );
    }

    #[derive(Serialize)]
    enum Kind {
        Unit,
        Newtype(i32),
        Tuple(u8, String),
        Struct { a: f64, b: Option<bool> },
    }

    #[derive(Serialize)]
    struct Packet {
        ok: bool,
        status: Kind,
        count: u64,
        big: u64,
        small: i8,
        wide: i128,
        ratio: f32,
        nan: f64,
        letter: char,
        missing: Option<String>,
        bytes: serde_bytes_like::Bytes,
        list: Vec<Kind>,
        pair: (u16, &'static str),
        by_number: BTreeMap<i32, u8>,
        by_flag: BTreeMap<bool, u8>,
        #[serde(flatten)]
        rest: Value,
    }

    mod serde_bytes_like {
        /// Serialized with `serialize_bytes`.
        pub struct Bytes(pub Vec<u8>);
        impl serde::Serialize for Bytes {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_bytes(&self.0)
            }
        }
    }

    #[test]
    fn typed_values_become_what_serde_json_and_from_serde_make_of_them() {
        let rest =
            parse(r#"{"count": "again", "z": [1, 2.5, -0.0, null, {"k": true}]}"#).expect("json");
        let packet = Packet {
            ok: true,
            status: Kind::Struct {
                a: 1.0,
                b: Some(false),
            },
            count: 3,
            big: u64::MAX,
            small: -7,
            wide: -5,
            ratio: 0.1,
            nan: f64::NAN,
            letter: 'é',
            missing: None,
            bytes: serde_bytes_like::Bytes(vec![0, 255]),
            list: vec![Kind::Unit, Kind::Newtype(-1), Kind::Tuple(2, "t".into())],
            pair: (9, "p"),
            by_number: BTreeMap::from([(-1, 1), (10, 2)]),
            by_flag: BTreeMap::from([(true, 1)]),
            rest,
        };
        same(&packet);
        same(&f64::INFINITY);
        same(&u128::MAX);
        same(&i128::MIN);
        same(&BTreeMap::from([((1, 2), 3)]));
    }

    fn json_values() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(Value::Int),
            any::<f64>().prop_map(Value::Float),
            "[a-z]{0,30}".prop_map(|s| Value::from(s.as_str())),
        ];
        leaf.prop_recursive(4, 64, 8, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..8).prop_map(Value::from),
                prop::collection::vec(("[a-c]{1,2}", inner), 0..30).prop_map(|pairs| {
                    Value::Object(pairs.into_iter().map(|(k, v)| (Text::from(k), v)).collect())
                }),
            ]
        })
    }

    proptest! {
        /// Any ordered value (repeated keys, large objects, non-finite floats included)
        /// comes out as the `serde_json` round trip makes it.
        #[test]
        fn values_come_out_as_the_serde_json_round_trip_makes_them(value in json_values()) {
            prop_assert_eq!(
                to_value(&value).map_err(|e| e.to_string()),
                through_serde_json(&value)
            );
        }
    }
}
