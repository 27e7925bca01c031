//! JSON read as the API documents it: a struct is a JSON object, never an array.
//!
//! Serde's derived structs also accept a sequence of their field values, and `serde_json` offers
//! them one when it sees an array, so `{"allow_similar": []}` or `["file.write", {...}]` would be
//! taken for an object. Everything Assent reads from a client goes through [`Strict`], a
//! deserializer that asks the format for a map wherever a struct is wanted, at every depth, so
//! such input is refused like any other wrong type.
//!
//! Serde buffers untagged and flattened content itself, out of this deserializer's reach: types
//! read from clients use neither (they read a map and split it by hand instead).

use serde::de::{self, DeserializeOwned, DeserializeSeed, Deserializer, Visitor};
use serde_json::Value;
use std::fmt;

/// Reads `T` from a JSON value, structs from objects only.
pub fn from_value<T: DeserializeOwned>(value: Value) -> serde_json::Result<T> {
    named(serde_path_to_error::deserialize(Strict(value)))
}

/// Reads `T` from a borrowed JSON value, structs from objects only. The field an error is at
/// is found by reading again, only when it fails.
pub fn from_ref<T: DeserializeOwned>(value: &Value) -> serde_json::Result<T> {
    T::deserialize(Strict(value)).or_else(|_| named(serde_path_to_error::deserialize(Strict(value))))
}

/// Reads `T` from JSON text, structs from objects only; anything after the value is an error.
/// The field an error is at is found by reading again, only when it fails.
pub fn from_slice<T: DeserializeOwned>(bytes: &[u8]) -> serde_json::Result<T> {
    let read = |track: bool| {
        let mut d = serde_json::Deserializer::from_slice(bytes);
        let v = if track {
            named(serde_path_to_error::deserialize(Strict(&mut d)))?
        } else {
            T::deserialize(Strict(&mut d))?
        };
        d.end()?;
        Ok(v)
    };
    read(false).or_else(|_| read(true))
}

/// The error with the place it was found (`lease_secs: invalid value ...`), so a person reading
/// it knows which field to mend; an error of the whole value is left as it is.
fn named<T>(r: Result<T, serde_path_to_error::Error<serde_json::Error>>) -> serde_json::Result<T> {
    r.map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner();
        if path == "." || path.is_empty() || inner.is_syntax() || inner.is_eof() {
            inner
        } else {
            <serde_json::Error as de::Error>::custom(format!("{path}: {inner}"))
        }
    })
}

/// Integers as JSON Schema reads them: a number with no fractional part, however it is
/// written (`5` or `5.0`), so that a request the API's description allows is read.
macro_rules! integral {
    ($($method:ident),* $(,)?) => {$(
        fn $method<V: Visitor<'de>>(self, v: V) -> Result<V::Value, D::Error> {
            self.0.$method(Integral(Wrap(v)))
        }
    )*};
}

/// A visitor that takes a whole number written with a fraction (`5.0`) as that integer.
struct Integral<V>(V);

/// The largest magnitude a float holds every integer up to.
const EXACT: f64 = 9_007_199_254_740_992.0;

impl<'de, V: Visitor<'de>> Visitor<'de> for Integral<V> {
    type Value = V::Value;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        self.0.expecting(f)
    }
    fn visit_f64<E: de::Error>(self, x: f64) -> Result<Self::Value, E> {
        if x.fract() == 0.0 && x.abs() <= EXACT {
            if x >= 0.0 { self.0.visit_u64(x as u64) } else { self.0.visit_i64(x as i64) }
        } else {
            self.0.visit_f64(x)
        }
    }
    fn visit_i64<E: de::Error>(self, x: i64) -> Result<Self::Value, E> {
        self.0.visit_i64(x)
    }
    fn visit_u64<E: de::Error>(self, x: u64) -> Result<Self::Value, E> {
        self.0.visit_u64(x)
    }
    fn visit_bool<E: de::Error>(self, x: bool) -> Result<Self::Value, E> {
        self.0.visit_bool(x)
    }
    fn visit_str<E: de::Error>(self, x: &str) -> Result<Self::Value, E> {
        self.0.visit_str(x)
    }
    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        self.0.visit_unit()
    }
    fn visit_seq<A: de::SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
        self.0.visit_seq(seq)
    }
    fn visit_map<A: de::MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        self.0.visit_map(map)
    }
}

/// A deserializer that reads structs from maps only, and passes itself down to every nested
/// value.
pub struct Strict<D>(pub D);

/// A visitor whose nested deserializers are [`Strict`].
struct Wrap<V>(V);

/// A seed whose deserializer is [`Strict`].
struct Seed<S>(S);

/// A struct variant's fields, read from a map.
struct MapSeed<V>(V);

macro_rules! forward {
    ($($method:ident),* $(,)?) => {$(
        fn $method<V: Visitor<'de>>(self, v: V) -> Result<V::Value, D::Error> {
            self.0.$method(Wrap(v))
        }
    )*};
}

impl<'de, D: Deserializer<'de>> Deserializer<'de> for Strict<D> {
    type Error = D::Error;

    forward!(
        deserialize_any,
        deserialize_bool,
        deserialize_i128,
        deserialize_u128,
        deserialize_f32,
        deserialize_f64,
        deserialize_char,
        deserialize_str,
        deserialize_string,
        deserialize_bytes,
        deserialize_byte_buf,
        deserialize_option,
        deserialize_unit,
        deserialize_seq,
        deserialize_map,
        deserialize_identifier,
        deserialize_ignored_any,
    );

    integral!(
        deserialize_i8,
        deserialize_i16,
        deserialize_i32,
        deserialize_i64,
        deserialize_u8,
        deserialize_u16,
        deserialize_u32,
        deserialize_u64,
    );

    fn deserialize_unit_struct<V: Visitor<'de>>(self, name: &'static str, v: V) -> Result<V::Value, D::Error> {
        self.0.deserialize_unit_struct(name, Wrap(v))
    }
    fn deserialize_newtype_struct<V: Visitor<'de>>(self, name: &'static str, v: V) -> Result<V::Value, D::Error> {
        self.0.deserialize_newtype_struct(name, Wrap(v))
    }
    fn deserialize_tuple<V: Visitor<'de>>(self, len: usize, v: V) -> Result<V::Value, D::Error> {
        self.0.deserialize_tuple(len, Wrap(v))
    }
    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        len: usize,
        v: V,
    ) -> Result<V::Value, D::Error> {
        self.0.deserialize_tuple_struct(name, len, Wrap(v))
    }
    /// The point of it all: a struct is read from a map.
    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        _: &'static [&'static str],
        v: V,
    ) -> Result<V::Value, D::Error> {
        self.0.deserialize_map(Wrap(v))
    }
    fn deserialize_enum<V: Visitor<'de>>(
        self,
        name: &'static str,
        variants: &'static [&'static str],
        v: V,
    ) -> Result<V::Value, D::Error> {
        self.0.deserialize_enum(name, variants, Wrap(v))
    }
    fn is_human_readable(&self) -> bool {
        self.0.is_human_readable()
    }
}

macro_rules! visit {
    ($($method:ident: $ty:ty),* $(,)?) => {$(
        fn $method<E: de::Error>(self, v: $ty) -> Result<Self::Value, E> {
            self.0.$method(v)
        }
    )*};
}

impl<'de, V: Visitor<'de>> Visitor<'de> for Wrap<V> {
    type Value = V::Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        self.0.expecting(f)
    }

    visit!(
        visit_bool: bool, visit_i8: i8, visit_i16: i16, visit_i32: i32, visit_i64: i64, visit_i128: i128,
        visit_u8: u8, visit_u16: u16, visit_u32: u32, visit_u64: u64, visit_u128: u128,
        visit_f32: f32, visit_f64: f64, visit_char: char, visit_str: &str, visit_borrowed_str: &'de str,
        visit_string: String, visit_bytes: &[u8], visit_borrowed_bytes: &'de [u8], visit_byte_buf: Vec<u8>,
    );

    fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
        self.0.visit_none()
    }
    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        self.0.visit_unit()
    }
    fn visit_some<D2: Deserializer<'de>>(self, d: D2) -> Result<Self::Value, D2::Error> {
        self.0.visit_some(Strict(d))
    }
    fn visit_newtype_struct<D2: Deserializer<'de>>(self, d: D2) -> Result<Self::Value, D2::Error> {
        self.0.visit_newtype_struct(Strict(d))
    }
    fn visit_seq<A: de::SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
        self.0.visit_seq(Wrap(seq))
    }
    fn visit_map<A: de::MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        self.0.visit_map(Wrap(map))
    }
    fn visit_enum<A: de::EnumAccess<'de>>(self, e: A) -> Result<Self::Value, A::Error> {
        self.0.visit_enum(Wrap(e))
    }
}

impl<'de, S: DeserializeSeed<'de>> DeserializeSeed<'de> for Seed<S> {
    type Value = S::Value;
    fn deserialize<D2: Deserializer<'de>>(self, d: D2) -> Result<S::Value, D2::Error> {
        self.0.deserialize(Strict(d))
    }
}

impl<'de, V: Visitor<'de>> DeserializeSeed<'de> for MapSeed<V> {
    type Value = V::Value;
    fn deserialize<D2: Deserializer<'de>>(self, d: D2) -> Result<V::Value, D2::Error> {
        d.deserialize_map(Wrap(self.0))
    }
}

impl<'de, A: de::SeqAccess<'de>> de::SeqAccess<'de> for Wrap<A> {
    type Error = A::Error;
    fn next_element_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<Option<T::Value>, A::Error> {
        self.0.next_element_seed(Seed(seed))
    }
    fn size_hint(&self) -> Option<usize> {
        self.0.size_hint()
    }
}

impl<'de, A: de::MapAccess<'de>> de::MapAccess<'de> for Wrap<A> {
    type Error = A::Error;
    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>, A::Error> {
        self.0.next_key_seed(Seed(seed))
    }
    fn next_value_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<T::Value, A::Error> {
        self.0.next_value_seed(Seed(seed))
    }
    fn size_hint(&self) -> Option<usize> {
        self.0.size_hint()
    }
}

impl<'de, A: de::EnumAccess<'de>> de::EnumAccess<'de> for Wrap<A> {
    type Error = A::Error;
    type Variant = Wrap<A::Variant>;
    fn variant_seed<T: DeserializeSeed<'de>>(self, seed: T) -> Result<(T::Value, Self::Variant), A::Error> {
        self.0.variant_seed(Seed(seed)).map(|(v, rest)| (v, Wrap(rest)))
    }
}

impl<'de, A: de::VariantAccess<'de>> de::VariantAccess<'de> for Wrap<A> {
    type Error = A::Error;
    fn unit_variant(self) -> Result<(), A::Error> {
        self.0.unit_variant()
    }
    fn newtype_variant_seed<T: DeserializeSeed<'de>>(self, seed: T) -> Result<T::Value, A::Error> {
        self.0.newtype_variant_seed(Seed(seed))
    }
    fn tuple_variant<V: Visitor<'de>>(self, len: usize, v: V) -> Result<V::Value, A::Error> {
        self.0.tuple_variant(len, Wrap(v))
    }
    /// A struct variant's content is read like a newtype's, from a map.
    fn struct_variant<V: Visitor<'de>>(self, _: &'static [&'static str], v: V) -> Result<V::Value, A::Error> {
        self.0.newtype_variant_seed(MapSeed(v))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;
    use serde_json::json;

    #[test]
    fn a_whole_number_is_an_integer_however_written_and_errors_name_the_field() {
        #[derive(Debug, Deserialize, PartialEq)]
        struct N {
            n: u64,
            m: Option<i32>,
        }
        let n: N = from_value(json!({"n": 5.0, "m": -3.0})).expect("5.0 is 5");
        assert_eq!(n, N { n: 5, m: Some(-3) });
        let n: N = from_slice(br#"{"n": 7, "m": null}"#).expect("7 is 7");
        assert_eq!(n, N { n: 7, m: None });
        for bad in [json!({"n": 5.5}), json!({"n": -1.0}), json!({"n": 1e300}), json!({"n": 1, "m": 3e9})] {
            let e = from_value::<N>(bad.clone()).expect_err("refused").to_string();
            assert!(e.starts_with("n:") || e.starts_with("m:"), "{bad}: {e}");
        }
    }

    #[derive(Debug, Deserialize, PartialEq)]
    #[serde(deny_unknown_fields)]
    struct Inner {
        #[serde(default)]
        n: Option<u32>,
    }

    #[derive(Debug, Deserialize, PartialEq)]
    #[serde(deny_unknown_fields)]
    struct Outer {
        name: String,
        #[serde(default)]
        inner: Option<Inner>,
        #[serde(default)]
        list: Vec<Inner>,
        #[serde(default)]
        kind: Option<Kind>,
    }

    #[derive(Debug, Deserialize, PartialEq)]
    #[serde(rename_all = "snake_case")]
    enum Kind {
        Plain,
        Shaped { n: u32 },
    }

    #[test]
    fn plain_serde_json_takes_an_array_for_a_struct_and_strict_does_not() {
        // What this module exists for: the derived impl accepts `[]` for an all-optional struct.
        assert!(serde_json::from_value::<Inner>(json!([])).is_ok());
        let e = from_value::<Inner>(json!([])).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(e.contains("invalid type: sequence"), "{e}");
        assert!(from_slice::<Inner>(b"[]").is_err());
        assert!(from_slice::<Outer>(br#"["x"]"#).is_err());
    }

    #[test]
    fn nested_structs_in_options_lists_and_variants_are_objects_only() {
        for bad in [
            json!({"name": "x", "inner": []}),
            json!({"name": "x", "inner": [7]}),
            json!({"name": "x", "list": [{}, []]}),
            json!({"name": "x", "kind": {"shaped": [3]}}),
        ] {
            assert!(from_value::<Outer>(bad.clone()).is_err(), "{bad}");
            assert!(from_ref::<Outer>(&bad).is_err(), "{bad}");
            assert!(from_slice::<Outer>(bad.to_string().as_bytes()).is_err(), "{bad}");
        }
    }

    #[test]
    fn well_formed_input_reads_as_before() {
        let good = json!({"name": "x", "inner": {"n": 1}, "list": [{}, {"n": 2}], "kind": {"shaped": {"n": 3}}});
        let want = Outer {
            name: "x".into(),
            inner: Some(Inner { n: Some(1) }),
            list: vec![Inner { n: None }, Inner { n: Some(2) }],
            kind: Some(Kind::Shaped { n: 3 }),
        };
        assert_eq!(from_value::<Outer>(good.clone()).ok(), Some(want));
        assert_eq!(from_slice::<Outer>(good.to_string().as_bytes()).ok().map(|o| o.name), Some("x".into()));
        assert_eq!(
            from_value::<Outer>(json!({"name": "y", "kind": "plain"})).ok().and_then(|o| o.kind),
            Some(Kind::Plain)
        );
        // Unknown fields, wrong types and trailing text are still refused.
        assert!(from_value::<Outer>(json!({"name": "x", "extra": 1})).is_err());
        assert!(from_value::<Outer>(json!({"name": 1})).is_err());
        assert!(from_slice::<Outer>(br#"{"name": "x"} {}"#).is_err());
    }
}
