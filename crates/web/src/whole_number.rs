//! Whole numbers in JSON bodies as JSON Schema reads them: `6731.0` is the integer 6731 (the
//! OpenAPI document says `integer`, and a generated client may send either); `6731.5` is not.

use serde::{Deserialize, Deserializer, de};

/// A whole number that fits in an i64, written with or without a fraction of zero.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Whole(pub i64);

impl<'de> Deserialize<'de> for Whole {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl de::Visitor<'_> for Visitor {
            type Value = Whole;

            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a whole number")
            }

            fn visit_i64<E: de::Error>(self, n: i64) -> Result<Whole, E> {
                Ok(Whole(n))
            }

            fn visit_u64<E: de::Error>(self, n: u64) -> Result<Whole, E> {
                i64::try_from(n).map(Whole).map_err(|_| E::custom(format!("{n} is too large")))
            }

            fn visit_f64<E: de::Error>(self, n: f64) -> Result<Whole, E> {
                // i64::MAX as f64 rounds up to 2^63, which is out of range: hence `<`.
                if n.fract() == 0.0 && n >= i64::MIN as f64 && n < i64::MAX as f64 {
                    Ok(Whole(n as i64))
                } else {
                    Err(E::custom(format!("{n} is not a whole number")))
                }
            }
        }
        deserializer.deserialize_any(Visitor)
    }
}

/// `deserialize_with` for an `Option<i64>` field (give it `#[serde(default)]` too).
pub fn option<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<i64>, D::Error> {
    Ok(Option::<Whole>::deserialize(deserializer)?.map(|whole| whole.0))
}

/// `deserialize_with` for an `Option<Option<i64>>` field that tells `null` (`Some(None)`) from
/// absent (`None`, with `#[serde(default)]`).
pub fn present<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<Option<i64>>, D::Error> {
    Ok(Some(Option::<Whole>::deserialize(deserializer)?.map(|whole| whole.0)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Deserialize)]
    struct Body {
        #[serde(default, deserialize_with = "option")]
        n: Option<i64>,
        #[serde(default, deserialize_with = "present")]
        m: Option<Option<i64>>,
    }

    fn parse(json: &str) -> Result<Body, serde_json::Error> {
        serde_json::from_str(json)
    }

    #[test]
    fn a_whole_number_may_carry_a_zero_fraction_and_nothing_else() {
        assert_eq!(parse(r#"{"n": 6731.0}"#).map(|body| body.n).ok(), Some(Some(6731)));
        assert_eq!(parse(r#"{"n": 7}"#).map(|body| body.n).ok(), Some(Some(7)));
        assert_eq!(parse(r#"{"n": -2.0}"#).map(|body| body.n).ok(), Some(Some(-2)));
        assert_eq!(parse(r#"{}"#).map(|body| (body.n, body.m)).ok(), Some((None, None)));
        assert_eq!(parse(r#"{"m": null}"#).map(|body| body.m).ok(), Some(Some(None)));
        assert_eq!(parse(r#"{"m": 3.0}"#).map(|body| body.m).ok(), Some(Some(Some(3))));
        for bad in [r#"{"n": 6731.5}"#, r#"{"n": 1e300}"#, r#"{"n": 18446744073709551615}"#, r#"{"n": "7"}"#] {
            assert!(parse(bad).is_err(), "{bad}");
        }
    }
}
