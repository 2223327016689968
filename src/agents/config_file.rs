//! An agent's JSON configuration file, edited the way a person would: our hook entries added to
//! or removed from what is there, every other key, value and their order kept, written back with
//! the file's own indentation.

use serde_json::{Map, Value};

/// Why a configuration file cannot be edited.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigFileError {
    /// The file is not valid JSON: rewriting it would lose what it says.
    #[error("it is not valid JSON ({0}); fix it by hand first")]
    Syntax(String),
    /// The file is JSON but not an object, or a key we write into holds something else.
    #[error("{0} is not a JSON object; fix it by hand first")]
    NotAnObject(String),
    /// A hook script of someone else's is where ours goes (the agent names its scripts after
    /// its events).
    #[error("it is a hook script that is not ours; move its commands elsewhere first")]
    NotOurs,
}

/// A JSON configuration document, with how its text was laid out.
#[derive(Debug, Clone)]
pub struct JsonConfig {
    doc: Map<String, Value>,
    indent: Vec<u8>,
    trailing_newline: bool,
}

impl JsonConfig {
    /// Parses `text` (`None`: the file does not exist, an empty document).
    pub fn parse(text: Option<&str>) -> Result<JsonConfig, ConfigFileError> {
        let text = text.unwrap_or("");
        let doc = if text.trim().is_empty() {
            Map::new()
        } else {
            match serde_json::from_str(text) {
                Ok(Value::Object(m)) => m,
                Ok(_) => return Err(ConfigFileError::NotAnObject("the file".into())),
                Err(e) => return Err(ConfigFileError::Syntax(e.to_string())),
            }
        };
        Ok(JsonConfig {
            doc,
            indent: indent_of(text),
            trailing_newline: text.is_empty() || text.ends_with('\n'),
        })
    }

    /// The document.
    pub fn doc(&self) -> &Map<String, Value> {
        &self.doc
    }

    /// The document, to edit.
    pub fn doc_mut(&mut self) -> &mut Map<String, Value> {
        &mut self.doc
    }

    /// The text of the document, laid out with the file's indentation.
    pub fn to_text(&self) -> String {
        use serde::Serialize;
        let mut out = Vec::new();
        let formatter = serde_json::ser::PrettyFormatter::with_indent(&self.indent);
        let mut ser = serde_json::Serializer::with_formatter(&mut out, formatter);
        self.doc
            .serialize(&mut ser)
            .expect("a JSON value serializes");
        let mut text = String::from_utf8(out).expect("JSON is UTF-8");
        if self.trailing_newline {
            text.push('\n');
        }
        text
    }
}

/// The indentation of the first indented line of `text` (two spaces when none is).
fn indent_of(text: &str) -> Vec<u8> {
    text.lines()
        .skip(1)
        .map(|l| {
            l.bytes()
                .take_while(|b| *b == b' ' || *b == b'\t')
                .collect::<Vec<u8>>()
        })
        .find(|i| !i.is_empty())
        .unwrap_or_else(|| b"  ".to_vec())
}

/// The object at `key` of `map`, made when missing; [`ConfigFileError::NotAnObject`] when
/// something else is there.
pub fn object_at<'m>(
    map: &'m mut Map<String, Value>,
    key: &str,
) -> Result<&'m mut Map<String, Value>, ConfigFileError> {
    match map
        .entry(key.to_owned())
        .or_insert_with(|| Value::Object(Map::new()))
    {
        Value::Object(m) => Ok(m),
        _ => Err(ConfigFileError::NotAnObject(key.to_owned())),
    }
}

/// The array at `key` of `map`, made when missing; [`ConfigFileError::NotAnObject`] when
/// something else is there.
pub fn array_at<'m>(
    map: &'m mut Map<String, Value>,
    key: &str,
) -> Result<&'m mut Vec<Value>, ConfigFileError> {
    match map
        .entry(key.to_owned())
        .or_insert_with(|| Value::Array(Vec::new()))
    {
        Value::Array(a) => Ok(a),
        _ => Err(ConfigFileError::NotAnObject(key.to_owned())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_files_layout_is_kept() {
        let text = "{\n    \"b\": 1,\n    \"a\": {\n        \"x\": [1, 2]\n    }\n}\n";
        let c = JsonConfig::parse(Some(text)).unwrap();
        assert_eq!(
            c.to_text(),
            "{\n    \"b\": 1,\n    \"a\": {\n        \"x\": [\n            1,\n            2\n        ]\n    }\n}\n"
        );
        let tabs = "{\n\t\"k\": true\n}";
        assert_eq!(JsonConfig::parse(Some(tabs)).unwrap().to_text(), tabs);
        assert_eq!(JsonConfig::parse(None).unwrap().to_text(), "{}\n");
        assert!(matches!(
            JsonConfig::parse(Some("{,}")),
            Err(ConfigFileError::Syntax(_))
        ));
        assert!(matches!(
            JsonConfig::parse(Some("[]")),
            Err(ConfigFileError::NotAnObject(_))
        ));
    }
}
