//! How every `--json` output says "no value" (docs/cli.md, "One vocabulary"): `null`, never an
//! empty string.

/// Serializes an empty string as `null`, any other as itself: for `#[serde(serialize_with)]`
/// on a field whose empty value means "not known" or "none".
pub fn empty_as_null<T, S>(value: &T, ser: S) -> Result<S::Ok, S::Error>
where
    T: AsRef<str>,
    S: serde::Serializer,
{
    match value.as_ref() {
        "" => ser.serialize_none(),
        v => ser.serialize_some(v),
    }
}

#[cfg(test)]
mod tests {
    #[derive(serde::Serialize)]
    struct Doc {
        #[serde(serialize_with = "super::empty_as_null")]
        agent: String,
    }

    #[test]
    fn empty_is_null() {
        let json = |agent: &str| {
            serde_json::to_string(&Doc {
                agent: agent.into(),
            })
            .unwrap()
        };
        assert_eq!(json(""), r#"{"agent":null}"#);
        assert_eq!(json("Codex"), r#"{"agent":"Codex"}"#);
    }
}
