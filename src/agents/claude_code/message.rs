//! Claude Code's `message`, decoded into types: a large transcript's lines are read without
//! building a JSON value.

use serde::de::{Deserializer, IgnoredAny, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::Value;

/// An entry's `message`.
#[derive(Deserialize)]
pub(crate) struct Message {
    #[serde(default)]
    pub(super) content: Content,
}

/// `message.content`: a string, or a list of items.
#[derive(Default)]
pub(super) enum Content {
    #[default]
    None,
    Text(String),
    Items(Vec<Item>),
}

impl<'de> Deserialize<'de> for Content {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Content;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a string or a list of content items")
            }
            fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<Content, E> {
                Ok(Content::Text(s.to_owned()))
            }
            fn visit_unit<E: serde::de::Error>(self) -> Result<Content, E> {
                Ok(Content::None)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Content, A::Error> {
                let mut items = Vec::new();
                while let Some(item) = seq.next_element()? {
                    items.push(item);
                }
                Ok(Content::Items(items))
            }
        }
        d.deserialize_any(V)
    }
}

#[derive(Deserialize)]
pub(super) struct Item {
    #[serde(rename = "type", default)]
    pub(super) kind: String,
    #[serde(default)]
    pub(super) text: Text,
    #[serde(default)]
    pub(super) thinking: Text,
    #[serde(default)]
    pub(super) name: String,
    /// A `tool_use`'s ID (a subagent's task is stored under its call's ID).
    #[serde(default)]
    pub(super) id: String,
    #[serde(default)]
    pub(super) input: Option<Value>,
    /// A `tool_result`'s content: a string or a list of parts.
    #[serde(default)]
    pub(super) content: Option<Value>,
}

/// A string, or nothing when the value is of another type (skipped unread).
#[derive(Default)]
pub(super) struct Text(pub(super) Option<String>);

impl Text {
    pub(super) fn as_str(&self) -> &str {
        self.0.as_deref().unwrap_or("")
    }
}

impl<'de> Deserialize<'de> for Text {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Text;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("any value")
            }
            fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<Text, E> {
                Ok(Text(Some(s.to_owned())))
            }
            fn visit_string<E: serde::de::Error>(self, s: String) -> Result<Text, E> {
                Ok(Text(Some(s)))
            }
            fn visit_bool<E: serde::de::Error>(self, _: bool) -> Result<Text, E> {
                Ok(Text(None))
            }
            fn visit_i64<E: serde::de::Error>(self, _: i64) -> Result<Text, E> {
                Ok(Text(None))
            }
            fn visit_u64<E: serde::de::Error>(self, _: u64) -> Result<Text, E> {
                Ok(Text(None))
            }
            fn visit_f64<E: serde::de::Error>(self, _: f64) -> Result<Text, E> {
                Ok(Text(None))
            }
            fn visit_unit<E: serde::de::Error>(self) -> Result<Text, E> {
                Ok(Text(None))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Text, A::Error> {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(Text(None))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Text, A::Error> {
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(Text(None))
            }
        }
        d.deserialize_any(V)
    }
}
