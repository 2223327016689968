//! User rules: compiled from the settings, refused when they would destroy the text rather than
//! hide secrets in it (a pattern that can match the empty string; from an untrusted file, one
//! that matches a large share of a sample transcript).

use regex::bytes::Regex;

use super::json::{decode, tokens};
use super::matching::replace_secrets;
use super::rules::Replace;
use super::{RedactError, UserRule};

/// The most of the [`SAMPLE`] transcript's text a rule of an untrusted file may match, as a
/// share: a rule for secrets matches none of it; `(?s).+`, `\w+` or `[a-z]` match most of it.
pub(super) const MAX_SAMPLE_SHARE: f64 = 0.05;

/// An ordinary agent transcript (Claude Code's JSONL: prompts, tool calls and results, code,
/// test output) without a secret in it, that a broad rule is tried on.
const SAMPLE: &str = include_str!("sample.jsonl");

/// A user rule, compiled when the redactor is built: its whole match is replaced.
#[derive(Clone)]
pub(super) struct Rule {
    re: Regex,
}

impl Rule {
    /// Compiles `rule`; a pattern that does not compile, or can match the empty string (it
    /// would put the placeholder between every two characters), is an error.
    pub(super) fn compile(rule: &UserRule) -> Result<Rule, RedactError> {
        let re = Regex::new(&rule.pattern).map_err(|e| RedactError::InvalidRule {
            name: rule.name.clone(),
            message: e.to_string(),
        })?;
        if matches_empty(&rule.pattern) {
            return Err(RedactError::MatchesEmpty {
                name: rule.name.clone(),
            });
        }
        Ok(Rule { re })
    }

    /// The pattern the rule was compiled from.
    pub(super) fn pattern(&self) -> &str {
        self.re.as_str()
    }

    /// The rule, unless it matches more than [`MAX_SAMPLE_SHARE`] of the text of the
    /// [`SAMPLE`] transcript (the decoded strings and the numbers, as the rule would see them).
    pub(super) fn narrow(self, name: &str) -> Result<Rule, RedactError> {
        let share = self.sample_share();
        if share <= MAX_SAMPLE_SHARE {
            return Ok(self);
        }
        Err(RedactError::TooBroad {
            name: name.to_owned(),
            percent: (share * 100.0).round() as u32,
            max: (MAX_SAMPLE_SHARE * 100.0).round() as u32,
        })
    }

    fn sample_share(&self) -> f64 {
        let (mut total, mut matched) = (0usize, 0usize);
        for line in SAMPLE.lines() {
            for t in tokens(line.as_bytes()) {
                let raw = &line.as_bytes()[t.range];
                let text = if t.string { decode(raw) } else { raw.into() };
                total += text.len();
                matched += self.re.find_iter(&text).map(|m| m.len()).sum::<usize>();
            }
        }
        matched as f64 / total.max(1) as f64
    }

    /// `text` with the rule's matches replaced, counted in `count`; `None` when it does not
    /// match.
    pub(super) fn replace(&self, text: &[u8], count: &mut usize) -> Option<Vec<u8>> {
        replace_secrets(&self.re, Replace::Whole, false, text, count)
    }
}

/// Whether a pattern can match the empty string (somewhere: `a*`, `\b`, `^` as well as ``).
fn matches_empty(pattern: &str) -> bool {
    regex_syntax::ParserBuilder::new()
        .utf8(false)
        .build()
        .parse(pattern)
        .is_ok_and(|hir| hir.properties().minimum_len() == Some(0))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(pattern: &str) -> Result<Rule, RedactError> {
        Rule::compile(&UserRule {
            name: "r".into(),
            pattern: pattern.into(),
        })
        .and_then(|r| r.narrow("r"))
    }

    #[test]
    fn broad_rules_are_refused_and_narrow_ones_kept() {
        for pattern in [
            "(?s).+",
            r"\w+",
            "[a-z]",
            "[^\"]{2,}",
            r"\S+",
            "e",
            r"\d+",
            r"[0-9a-f]{8}-[0-9a-f]{4}",
        ] {
            assert!(
                matches!(rule(pattern), Err(RedactError::TooBroad { .. })),
                "{pattern}"
            );
        }
        for pattern in [
            r"ACME-\d{6}",
            "CORPSECRET-[0-9]+",
            r"\bhunter2\b",
            r"[a-z0-9._%+-]+@corp\.example",
            "(?i)internal-only",
        ] {
            assert!(rule(pattern).is_ok(), "{pattern}");
        }
    }

    #[test]
    fn the_sample_is_a_clean_jsonl_transcript() {
        assert!(SAMPLE.len() > 8_000);
        for line in SAMPLE.lines() {
            serde_json::from_str::<serde_json::Value>(line).unwrap();
        }
        let r = super::super::Redactor::builtin();
        assert_eq!(r.redact_str(SAMPLE).1, 0, "the sample holds no secret");
    }
}
