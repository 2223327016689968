//! Secret redaction, applied to transcripts, prompts and summaries before any blob is written
//! (design.md "Where we go beyond" 5).
//!
//! Transcripts are agent JSONL, so a secret usually sits inside a JSON string where quotes are
//! escaped (`\"`) and newlines are the two characters `\n`; the rules allow for both. Rules work
//! on bytes (a transcript need not be UTF-8) and replace only what they match, so output is
//! byte-identical to input when nothing matches, and JSON stays valid because the placeholder
//! contains nothing that needs escaping.

use std::sync::OnceLock;

use regex::bytes::{Captures, Regex};
use serde::Deserialize;
use serde_json::Value;

/// The text every secret is replaced by.
pub const PLACEHOLDER: &str = "REDACTED";

/// Minimum Shannon entropy (bits per character) of a value in a key-like assignment.
const MIN_ENTROPY: f64 = 3.5;

/// Errors building a redactor.
#[derive(Debug, Clone, thiserror::Error)]
pub enum RedactError {
    /// A user rule's pattern does not compile.
    #[error("redaction rule {name:?}: invalid pattern: {message}")]
    InvalidRule {
        /// The rule's name.
        name: String,
        /// The regex error.
        message: String,
    },
}

/// A user rule: the whole match of `pattern` is replaced.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UserRule {
    /// A name for messages.
    pub name: String,
    /// A regular expression (Rust `regex` syntax).
    pub pattern: String,
}

/// The `redaction` block of the settings. Missing block or missing `enabled` = on with the
/// built-in rules; only an explicit `"enabled": false` turns redaction off.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RedactionSettings {
    /// `false` turns redaction off.
    #[serde(default)]
    pub enabled: Option<bool>,
    /// Extra rules, run after the built-ins.
    #[serde(default)]
    pub rules: Vec<UserRule>,
}

/// How a rule replaces its match.
#[derive(Clone, Copy)]
enum Replace {
    /// The whole match.
    Whole,
    /// Only capture group `value` (the key and separator are kept).
    Value,
    /// Only `value`, and only when it looks random (high entropy).
    EntropyValue,
}

struct Rule {
    re: Regex,
    replace: Replace,
}

/// A value that is already a placeholder or obviously not a secret.
fn is_placeholder(v: &[u8]) -> bool {
    let s = String::from_utf8_lossy(v);
    let lower = s.to_ascii_lowercase();
    s == PLACEHOLDER
        || s.starts_with("${")
        || s.starts_with('$')
        || s.starts_with('<')
        || s.chars()
            .all(|c| c == '*' || c == 'x' || c == 'X' || c == '.')
        || [
            "changeme", "redacted", "none", "null", "true", "false", "password", "secret", "token",
        ]
        .contains(&lower.as_str())
}

fn entropy(v: &[u8]) -> f64 {
    let mut counts = [0usize; 256];
    for &b in v {
        counts[b as usize] += 1;
    }
    let n = v.len() as f64;
    counts
        .iter()
        .filter(|&&c| c > 0)
        .map(|&c| {
            let p = c as f64 / n;
            -p * p.log2()
        })
        .sum()
}

fn builtin() -> &'static [Rule] {
    static RULES: OnceLock<Vec<Rule>> = OnceLock::new();
    RULES.get_or_init(|| {
        // A quote as it appears raw or inside a JSON string.
        const Q: &str = r#"(?:\\?["'])?"#;
        let rule = |pattern: &str, replace| Rule {
            re: Regex::new(pattern).expect("built-in redaction rules compile"),
            replace,
        };
        vec![
            // PEM private key blocks: within one line (escaped `\n` inside a JSON string), or
            // over real lines that hold only base64 and PEM headers. Never across other lines,
            // which would swallow the transcript lines between two markers.
            rule(
                r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----(?:[^\n]*?|\n(?:[A-Za-z0-9+/=:, \-]*\n)*?)-----END [A-Z0-9 ]*PRIVATE KEY-----",
                Replace::Whole,
            ),
            // Provider tokens with recognisable prefixes.
            rule(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b", Replace::Whole),
            rule(r"\bgh[pousr]_[A-Za-z0-9]{36,255}\b", Replace::Whole),
            rule(r"\bgithub_pat_[A-Za-z0-9_]{22,255}\b", Replace::Whole),
            rule(r"\bglpat-[A-Za-z0-9_\-]{20,}", Replace::Whole),
            rule(r"\bxox[abprs]-[A-Za-z0-9\-]{10,}", Replace::Whole),
            // JWTs.
            rule(r"\beyJ[A-Za-z0-9_\-]{5,}\.eyJ[A-Za-z0-9_\-]{5,}\.[A-Za-z0-9_\-]{10,}", Replace::Whole),
            // Credentials in URLs: keep the user, drop the password.
            rule(r"[A-Za-z][A-Za-z0-9+.\-]*://[^\s:/@\\]+:(?P<value>[^\s@/\\]+)@", Replace::Value),
            // ADO-style connection strings.
            rule(r"(?i)\b(?:password|pwd)\s*=\s*(?P<value>[^;\s\\]{4,})\s*;", Replace::Value),
            // Credential assignments: `password=...`, `"api_key": "..."`, `DB_PASSWORD=...`.
            rule(
                &format!(
                    r#"(?i)(?:\b|_)(?:password|passwd|pwd|secret|token|api[_\-]?key|access[_\-]?key|client[_\-]?secret|auth[_\-]?token|aws_secret_access_key){Q}\s*[:=]\s*{Q}(?P<value>[^\s"'\\,;]{{4,}})"#
                ),
                Replace::Value,
            ),
            // High-entropy values assigned to key-like identifiers.
            rule(
                &format!(
                    r"(?i)\b[A-Za-z0-9_\-]*(?:key|secret|token)[A-Za-z0-9_\-]*{Q}\s*[:=]\s*{Q}(?P<value>[A-Za-z0-9+/=_\-]{{20,}})"
                ),
                Replace::EntropyValue,
            ),
        ]
    })
}

/// Redacts secrets. Cheap to build: the built-in rules are compiled once per process.
pub struct Redactor {
    enabled: bool,
    user: Vec<Rule>,
}

impl Redactor {
    /// A redactor with the built-in rules plus the settings' user rules.
    pub fn new(settings: &RedactionSettings) -> Result<Redactor, RedactError> {
        let mut user = Vec::new();
        for r in &settings.rules {
            let re = Regex::new(&r.pattern).map_err(|e| RedactError::InvalidRule {
                name: r.name.clone(),
                message: e.to_string(),
            })?;
            user.push(Rule {
                re,
                replace: Replace::Whole,
            });
        }
        Ok(Redactor {
            enabled: settings.enabled != Some(false),
            user,
        })
    }

    /// A redactor with the built-in rules only.
    pub fn builtin() -> Redactor {
        Redactor {
            enabled: true,
            user: Vec::new(),
        }
    }

    /// A redactor that changes nothing.
    pub fn disabled() -> Redactor {
        Redactor {
            enabled: false,
            user: Vec::new(),
        }
    }

    /// Whether redaction is on.
    pub fn is_enabled(&self) -> bool {
        self.enabled
    }

    /// The redacted bytes and the number of secrets replaced.
    pub fn redact_bytes(&self, input: &[u8]) -> (Vec<u8>, usize) {
        if !self.enabled {
            return (input.to_vec(), 0);
        }
        let mut text = input.to_vec();
        let mut count = 0;
        for rule in builtin().iter().chain(&self.user) {
            if !rule.re.is_match(&text) {
                continue;
            }
            let replaced = rule.re.replace_all(&text, |c: &Captures<'_>| {
                let whole = c.get(0).expect("group 0 always matches");
                let value = c.name("value");
                let secret = match (rule.replace, value) {
                    (Replace::Whole, _) => Some(whole),
                    (Replace::Value, Some(v)) if !is_placeholder(v.as_bytes()) => Some(v),
                    (Replace::EntropyValue, Some(v))
                        if !is_placeholder(v.as_bytes())
                            && entropy(v.as_bytes()) >= MIN_ENTROPY =>
                    {
                        Some(v)
                    }
                    _ => None,
                };
                match secret {
                    Some(s) if s.as_bytes() != PLACEHOLDER.as_bytes() => {
                        count += 1;
                        let mut out = whole.as_bytes()[..s.start() - whole.start()].to_vec();
                        out.extend_from_slice(PLACEHOLDER.as_bytes());
                        out.extend_from_slice(&whole.as_bytes()[s.end() - whole.start()..]);
                        out
                    }
                    _ => whole.as_bytes().to_vec(),
                }
            });
            text = replaced.into_owned();
        }
        (text, count)
    }

    /// [`Redactor::redact_bytes`] for text.
    pub fn redact_str(&self, input: &str) -> (String, usize) {
        let (bytes, n) = self.redact_bytes(input.as_bytes());
        // Only ASCII is ever inserted and matches end on character boundaries of valid input.
        (
            String::from_utf8(bytes)
                .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned()),
            n,
        )
    }

    /// Redacts every string inside a JSON value; returns the count.
    pub fn redact_json(&self, value: &mut Value) -> usize {
        match value {
            Value::String(s) => {
                let (r, n) = self.redact_str(s);
                *s = r;
                n
            }
            Value::Array(a) => a.iter_mut().map(|v| self.redact_json(v)).sum(),
            Value::Object(m) => m.values_mut().map(|v| self.redact_json(v)).sum(),
            _ => 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn on() -> Redactor {
        Redactor::new(&RedactionSettings::default()).unwrap()
    }

    fn red(s: &str) -> (String, usize) {
        on().redact_str(s)
    }

    fn assert_json_lines(s: &str) {
        for line in s.lines() {
            serde_json::from_str::<Value>(line)
                .unwrap_or_else(|e| panic!("not JSON after redaction: {line}: {e}"));
        }
    }

    #[test]
    fn aws_keys_in_a_jsonl_tool_result() {
        let line = r#"{"type":"tool_result","content":"export AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE\nexport AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"}"#;
        let (out, n) = red(line);
        assert_eq!(
            out,
            r#"{"type":"tool_result","content":"export AWS_ACCESS_KEY_ID=REDACTED\nexport AWS_SECRET_ACCESS_KEY=REDACTED"}"#
        );
        assert_eq!(n, 2);
        assert_json_lines(&out);
    }

    #[test]
    fn password_inside_an_escaped_json_string() {
        let line = r#"{"message":"{\"password\": \"hunter22\", \"user\": \"bob\"}"}"#;
        let (out, n) = red(line);
        assert_eq!(
            out,
            r#"{"message":"{\"password\": \"REDACTED\", \"user\": \"bob\"}"}"#
        );
        assert_eq!(n, 1);
        assert_json_lines(&out);
    }

    #[test]
    fn pem_block_with_escaped_newlines() {
        let line = r#"{"content":"key:\n-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA7\nabc==\n-----END RSA PRIVATE KEY-----\nend"}"#;
        let (out, n) = red(line);
        assert_eq!(out, r#"{"content":"key:\nREDACTED\nend"}"#);
        assert_eq!(n, 1);
        assert_json_lines(&out);
        let real = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEA\n-----END OPENSSH PRIVATE KEY-----\n";
        assert_eq!(red(real), ("REDACTED\n".to_owned(), 1));
        let split = "{\"a\":\"-----BEGIN RSA PRIVATE KEY-----\"}\n{\"b\":\"keep me\"}\n{\"c\":\"-----END RSA PRIVATE KEY-----\"}\n";
        assert_eq!(
            red(split),
            (split.to_owned(), 0),
            "never merges transcript lines"
        );
    }

    #[test]
    fn provider_tokens() {
        let gh = format!("token ghp_{}", "a1B2".repeat(9));
        assert_eq!(red(&gh), ("token REDACTED".to_owned(), 1));
        let pat = format!("github_pat_{}", "A1b_".repeat(8));
        assert_eq!(red(&pat).0, "REDACTED");
        assert_eq!(red("glpat-abcdefghij0123456789XY").0, "REDACTED");
        assert_eq!(
            red("use xoxb-1234567890-abcdefghij now").0,
            "use REDACTED now"
        );
        let jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U";
        assert_eq!(red(&format!("Bearer {jwt}")).0, "Bearer REDACTED");
    }

    #[test]
    fn assignments_keep_key_and_separator() {
        assert_eq!(red("DB_PASSWORD=hunter22").0, "DB_PASSWORD=REDACTED");
        assert_eq!(red("api_key: 'abcd1234efgh'").0, "api_key: 'REDACTED'");
        assert_eq!(
            red("Server=db;User Id=sa;Password=S3cr3t!x;").0,
            "Server=db;User Id=sa;Password=REDACTED;"
        );
        assert_eq!(
            red("git clone https://alice:s3cretpass@example.com/r.git").0,
            "git clone https://alice:REDACTED@example.com/r.git"
        );
    }

    #[test]
    fn high_entropy_key_values() {
        assert_eq!(
            red("MY_SIGNING_KEY=Zx8Qv3Lr9Tb2Nw7Pk4Hs6Jd1").0,
            "MY_SIGNING_KEY=REDACTED"
        );
        let low = "MONKEY_KEY=aaaaaaaaaaaaaaaaaaaaaaaa";
        assert_eq!(red(low), (low.to_owned(), 0));
    }

    #[test]
    fn placeholders_and_prose_are_left_alone() {
        for s in [
            "password=REDACTED",
            "password=${DB_PASSWORD}",
            "password: <your password>",
            "token=***",
            "password=changeme",
            "let token_count = 5;",
            "the password_hint field",
            "commit 3f786850e387550fdab836ed7e6dc881de23001b",
            "id 123e4567-e89b-12d3-a456-426614174000",
            "see src/auth/token_store.rs",
            "Plain prose about keys and secrets.",
        ] {
            assert_eq!(red(s), (s.to_owned(), 0), "{s}");
        }
    }

    #[test]
    fn binary_bytes_unchanged_and_idempotent() {
        let bin: Vec<u8> = (0u8..=255).chain([0xff, 0xfe, 0x00]).collect();
        assert_eq!(on().redact_bytes(&bin), (bin.clone(), 0));
        let (once, n) = red("DB_PASSWORD=hunter22 AKIAIOSFODNN7EXAMPLE");
        assert_eq!(n, 2);
        assert_eq!(red(&once), (once.clone(), 0));
    }

    #[test]
    fn disabled_and_user_rules() {
        let off = Redactor::new(&RedactionSettings {
            enabled: Some(false),
            rules: vec![],
        })
        .unwrap();
        assert!(!off.is_enabled());
        assert_eq!(off.redact_str("DB_PASSWORD=hunter22").1, 0);
        let custom = Redactor::new(&RedactionSettings {
            enabled: None,
            rules: vec![UserRule {
                name: "ticket".into(),
                pattern: r"ACME-\d{6}".into(),
            }],
        })
        .unwrap();
        assert_eq!(custom.redact_str("see ACME-123456").0, "see REDACTED");
        let bad = Redactor::new(&RedactionSettings {
            enabled: None,
            rules: vec![UserRule {
                name: "broken".into(),
                pattern: "(".into(),
            }],
        });
        assert!(matches!(bad, Err(RedactError::InvalidRule { name, .. }) if name == "broken"));
    }

    #[test]
    fn json_values() {
        let mut v = serde_json::json!({"intent": "rotate AKIAIOSFODNN7EXAMPLE", "n": 3, "l": ["DB_PASSWORD=hunter22"]});
        assert_eq!(on().redact_json(&mut v), 2);
        assert_eq!(v["intent"], "rotate REDACTED");
        assert_eq!(v["l"][0], "DB_PASSWORD=REDACTED");
    }
}
