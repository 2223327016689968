//! The built-in redaction rules as data: their patterns, what of a match they replace, and the
//! literals every match holds. Shared by the library (`src/model/redact/`) and `build.rs`,
//! which compiles each pattern into the DFAs the library loads without compiling anything
//! (docs/performance.md, note (a)); so this file uses nothing but `std` and `memchr`.

/// How a rule replaces its match.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Replace {
    /// The whole match.
    Whole,
    /// Only capture group `value` (the key and separator are kept).
    Value,
    /// Only `value`, and only when it looks random (high entropy).
    EntropyValue,
    /// Only `value` of an assignment (`name = value`), unless the value is code: unquoted and
    /// a reference a program makes (`token: auth.Token`, `password: string`,
    /// `access_token=access_token`; see `secret::is_code_reference`).
    AssignedValue,
    /// [`Replace::AssignedValue`], and only when the value looks random.
    AssignedEntropyValue,
}

/// A built-in rule.
pub struct Builtin {
    /// Lowercase literals, at least one of which every match contains (ASCII case-insensitively;
    /// the rules' case-insensitive words are ASCII-only, `(?i-u)`, so Unicode case folding such
    /// as the Kelvin sign for `k` cannot match without a trigger).
    pub triggers: &'static [&'static str],
    pub pattern: fn() -> String,
    pub replace: Replace,
    pub token_start: bool,
    /// Group `value` is the whole match (the pattern is `(?P<value>...)` followed by nothing but
    /// a zero-width `\b`), so no capture search is needed to find it.
    pub value_is_match: bool,
    /// A match is a provider's token, recognisable by its prefix alone: found in pieces put
    /// back together (`src/model/redact/decode/`), it is a secret still. The other rules
    /// read a name and a value, which pieces put together make of ordinary text
    /// (`password = password` on one line, `2398` on the next).
    pub prefixed: bool,
    /// A cheaper test than the rule's regex that is true of every text the rule matches in
    /// (and of some others); the rule runs only where it holds.
    pub gate: Option<fn(&[u8]) -> bool>,
}

impl Builtin {
    const fn new(
        triggers: &'static [&'static str],
        pattern: fn() -> String,
        replace: Replace,
        token_start: bool,
    ) -> Builtin {
        Builtin {
            triggers,
            pattern,
            replace,
            token_start,
            value_is_match: false,
            prefixed: false,
            gate: None,
        }
    }
}

/// A line break, real or escaped (in a JSON string, or one nested in another).
const BREAK: &str = r"(?:\r?\n|(?:\\{1,3}r)?\\{1,3}n)";
/// White space between words, a line break, real or escaped, counting as one.
const SPACE: &str = r"(?:[ \t]|\r?\n|\\{1,3}[nt])";

/// A quote as it appears raw or inside a JSON string.
const QUOTE: &str = r#"(?:\\?["'])?"#;

/// Member names whose string value is a credential, matched against the whole name: names that
/// end in a credential word (`api_key`, `clientSecret`, `GITHUB_TOKEN`, `aws_secret_access_key`,
/// `Authorization`), or that are exactly a short one (`pwd`, `auth`). `password_hash`,
/// `token_count` or `max_tokens` end in something else and are kept.
pub const CREDENTIAL_NAME: &str = r"(?i-u:[A-Za-z0-9_.\-]*(?:password|passwd|passphrase|secret|token|api[_\-]?key|access[_\-]?key|private[_\-]?key|authorization)|(?:[A-Za-z0-9_.\-]*[_.\-])?(?:pwd|auth))";

/// An HTTP authorization scheme kept in front of a redacted credential (`Bearer REDACTED`).
pub const AUTH_SCHEME: &str = r"(?i-u:bearer|basic|token|bot)[ \t]+";

/// The bytes of one JSON string, escapes whole: never past its closing quote or a line end.
const IN_STRING: &str = r#"(?:[^"\\\n]|\\.)"#;
/// The bytes of a JSON string nested (escaped) inside another JSON string.
const IN_ESCAPED_STRING: &str = r#"(?:[^"\\\n]|\\[^"\\\n]|\\\\(?:\\[^\n]|[^"\\\n]))"#;
/// Real lines that belong to a PEM block: base64 and the RFC 1421 headers, maybe indented (a
/// YAML `|` block), and the blank line after the headers of an encrypted key.
const PEM_LINE: &str = r"(?:\r?\n[ \t]*\r?(?m:$))?\r?\n[ \t]*(?:[A-Za-z0-9+/=]{4,}|(?:Proc-Type|DEK-Info|Comment): [^\r\n]*)\r?(?m:$)";
const PEM_BEGIN: &str = r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----";

/// A built-in rule whose match may start anywhere.
const fn rule(
    triggers: &'static [&'static str],
    pattern: fn() -> String,
    replace: Replace,
) -> Builtin {
    Builtin::new(triggers, pattern, replace, false)
}

/// A built-in rule whose match must begin a token.
const fn word(
    triggers: &'static [&'static str],
    pattern: fn() -> String,
    replace: Replace,
) -> Builtin {
    Builtin::new(triggers, pattern, replace, true)
}

/// A provider token, whole, from a token start up to a word boundary.
const fn token(triggers: &'static [&'static str], pattern: fn() -> String) -> Builtin {
    let mut rule = word(triggers, pattern, Replace::Value);
    rule.value_is_match = true;
    prefixed(rule)
}

/// `rule`, whose match is a provider's token ([`Builtin::prefixed`]).
const fn prefixed(mut rule: Builtin) -> Builtin {
    rule.prefixed = true;
    rule
}

/// The pattern of a [`token`] rule: `body` as group `value`, up to a word boundary (zero-width,
/// so `value` is the whole match).
fn token_pattern(body: &str) -> String {
    format!(r"(?P<value>{body})(?-u:\b)")
}

/// The words of the credential-assignment rules.
const CREDENTIAL_WORDS: &[&str] = &["pass", "pwd", "secret", "token", "key", "auth"];

/// The built-in rules, in the order they run.
pub static BUILTIN: [Builtin; 29] = [
    // PEM private key blocks: within one JSON string (escaped `\n`), or over real lines that
    // hold only base64 and PEM headers. Never across other lines, which would swallow the
    // transcript lines between two markers.
    rule(
        &["-----begin "],
        || {
            format!(
                r"{PEM_BEGIN}(?:{IN_STRING}*?|(?:{PEM_LINE})*?\r?\n[ \t]*)-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----"
            )
        },
        Replace::Whole,
    ),
    // A block cut off before its END line (a `head` of a key file, a truncated paste): up to
    // the end of its JSON string, or over the PEM lines that follow.
    rule(
        &["-----begin "],
        || format!(r"{PEM_BEGIN}(?:{IN_STRING}+(?:{PEM_LINE})*|(?:{PEM_LINE})+)"),
        Replace::Whole,
    ),
    // Provider tokens with recognisable prefixes.
    token(&["akia", "asia"], || {
        token_pattern(r"(?:AKIA|ASIA)[0-9A-Z]{16}")
    }),
    token(&["ghp_", "gho_", "ghu_", "ghs_", "ghr_"], || {
        token_pattern(r"gh[pousr]_[A-Za-z0-9]{36,255}")
    }),
    token(&["github_pat_"], || {
        token_pattern(r"github_pat_[A-Za-z0-9_]{22,255}")
    }),
    token(&["glpat-"], || token_pattern(r"glpat-[A-Za-z0-9_\-]{20,}")),
    token(&["xox"], || {
        token_pattern(r"xox[abposr]-[A-Za-z0-9\-]{10,}")
    }),
    token(&["xapp-"], || {
        token_pattern(r"xapp-[0-9]-[A-Za-z0-9\-]{10,}")
    }),
    token(&["npm_"], || token_pattern(r"npm_[A-Za-z0-9]{36}")),
    token(&["pypi-age"], || {
        token_pattern(r"pypi-AgE[A-Za-z0-9_\-]{50,}")
    }),
    token(&["aiza"], || token_pattern(r"AIza[0-9A-Za-z_\-]{35}")),
    token(&["k_live_", "k_test_"], || {
        token_pattern(r"[sr]k_(?:live|test)_[A-Za-z0-9]{16,}")
    }),
    // More providers' tokens, by their documented shapes (issue 56): SendGrid, GitLab runner,
    // Hugging Face, DigitalOcean, Vault, Shopify, Databricks, age, Mailgun, Stripe webhook
    // signing secrets, Square.
    token(
        &[
            "sg.",
            "glrt-",
            "hf_",
            "_v1_",
            "hvs.",
            "hvb.",
            "shp",
            "dapi",
            "age-secret-key-1",
            "key-",
            "whsec_",
            "sq0",
        ],
        || {
            token_pattern(concat!(
                r"SG\.[A-Za-z0-9_\-]{22}\.[A-Za-z0-9_\-]{43}",
                r"|glrt-[A-Za-z0-9_\-]{20,}",
                r"|hf_[A-Za-z]{34}",
                r"|do[opr]_v1_[a-f0-9]{64}",
                r"|hv[sb]\.[A-Za-z0-9_\-]{24,}",
                r"|shp(?:at|ss|ca|pa)_[a-fA-F0-9]{32}",
                r"|dapi[a-f0-9]{32}(?:-[0-9])?",
                r"|AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}",
                r"|key-[a-f0-9]{32}",
                r"|whsec_[A-Za-z0-9+/=]{32,}",
                r"|sq0(?:atp|csp)-[A-Za-z0-9_\-]{22,43}",
            ))
        },
    ),
    // Tokens without a literal prefix: Twilio API keys (`SK` and 32 hex digits), Telegram bot
    // tokens (the bot's number, `:AA` and 33 more), Discord bot tokens (three dotted parts);
    // only where the gate finds their shape.
    gated_token(provider_shape_gate, &["sk", ":aa", "."], || {
        token_pattern(concat!(
            r"SK[0-9a-fA-F]{32}",
            r"|[0-9]{5,16}:AA[A-Za-z0-9_\-]{33}",
            r"|[MNO][A-Za-z0-9_\-]{23,25}\.[A-Za-z0-9_\-]{6}\.[A-Za-z0-9_\-]{27,38}",
        ))
    }),
    // OpenAI and Anthropic keys: a random run of 20 or more; a hyphenated slug such as
    // `sk-learn-...` has no such run.
    prefixed(word(
        &["sk-"],
        || r"(?P<value>sk-[A-Za-z0-9_\-]*?[A-Za-z0-9]{20}[A-Za-z0-9_\-]*)(?-u:\b)".to_owned(),
        Replace::EntropyValue,
    )),
    // JWTs; the trigger is the `.eyJ` every one holds, whose `.` makes the search fast.
    token(&[".eyj"], || {
        token_pattern(r"eyJ[A-Za-z0-9_\-]{5,}\.eyJ[A-Za-z0-9_\-]{5,}\.[A-Za-z0-9_\-]{10,}")
    }),
    // Slack incoming webhooks: the path is the credential.
    rule(
        &["hooks.slack.com/services/"],
        || r"https://hooks\.slack\.com/services/(?P<value>[A-Za-z0-9/]{20,})".to_owned(),
        Replace::Value,
    ),
    // Credentials in URLs: keep the user, drop the password (up to the last `@` of the
    // authority, so a password with a raw `@` goes whole). A password may hold a `/` when it
    // does not start with a digit (`host:8080/path@x` is a port and a path).
    rule(
        &["://"],
        || {
            r#"[A-Za-z][A-Za-z0-9+.\-]*://[^\s:/@\\"']*:(?P<value>[^\s/\\"'?#]+|[^\s/\\"'?#0-9][^\s\\"'?#]*)@"#.to_owned()
        },
        Replace::Value,
    ),
    // Credential members of JSON objects, raw and inside a JSON string: the whole string value
    // (spaces included) goes, the name and an authorization scheme stay.
    rule(
        CREDENTIAL_WORDS,
        || {
            format!(
                r#""{CREDENTIAL_NAME}"[ \t]*:[ \t]*"(?:{AUTH_SCHEME})?(?P<value>{IN_STRING}+)""#
            )
        },
        Replace::Value,
    ),
    rule(
        CREDENTIAL_WORDS,
        || {
            format!(
                r#"\\"{CREDENTIAL_NAME}\\"[ \t]*:[ \t]*\\"(?:{AUTH_SCHEME})?(?P<value>{IN_ESCAPED_STRING}+)\\""#
            )
        },
        Replace::Value,
    ),
    // Authorization headers (`curl -H 'Authorization: Bearer ...'`).
    rule(
        &["auth"],
        || {
            format!(
                r"(?i-u)authorization{QUOTE}[ \t]*[:=][ \t]*{QUOTE}{AUTH_SCHEME}(?P<value>[A-Za-z0-9._~+/\-]+=*)"
            )
        },
        Replace::Value,
    ),
    // A bearer token in prose; only a random-looking one (not "bearer authentication").
    word(
        &["bearer"],
        || r"(?i-u)bearer[ \t]+(?P<value>[A-Za-z0-9._~+/\-]{16,}=*)".to_owned(),
        Replace::EntropyValue,
    ),
    // A PuTTY key's private part: the lines after `Private-Lines: N`, over real line breaks
    // or escaped ones (a JSON string, one nested in another).
    rule(
        &["private-lines:"],
        || format!(r"Private-Lines: [0-9]+(?P<value>(?:{BREAK}[A-Za-z0-9+/=]+)+)"),
        Replace::Value,
    ),
    // Passwords on command lines and in config files, by the word before them: `curl -u
    // user:pw`, `mysql -ppw`, `docker login -p pw`, `sshpass -p pw`, `--password pw`,
    // `--passphrase pw`, a `.netrc` `password`, and a value assigned to a name holding
    // `openai` and ending in `key` (an Azure OpenAI key is 32 hex digits, too regular for the
    // entropy test of the last rule).
    word(
        &[
            "curl", "mysql", "mariadb", "login", "sshpass", "--pass", "machine", "openai",
        ],
        || {
            format!(
                concat!(
                    r#"(?:curl[^\n|;&\\]*?[ \t](?:-u|--user)[ \t=]*['"]?[^\s:'"\\]+:"#,
                    r#"|(?:mysql|mysqldump|mysqladmin|mariadb)[^\n|;&\\]*?[ \t]-p"#,
                    r#"|(?:docker|podman|nerdctl)[ \t]+login[^\n|;&\\]*?[ \t]-p[ \t]+['"]?"#,
                    r#"|sshpass[ \t]+-p[ \t]*['"]?"#,
                    r#"|--pass(?:word|phrase)[ \t=]+['"]?"#,
                    r#"|machine[ \t]+[^\s\\]+(?:{SPACE}+(?:login|account)[ \t]+[^\s\\]+)*{SPACE}+password[ \t]+"#,
                    r#"|(?i-u:[A-Za-z0-9_\-]*openai[A-Za-z0-9_\-]*key){QUOTE}[ \t]*[:=][ \t]*{QUOTE}"#,
                    r#")(?P<value>[^\s'"\\]{{3,}})"#,
                ),
                SPACE = SPACE,
                QUOTE = QUOTE,
            )
        },
        Replace::Value,
    ),
    // A passphrase piped to gpg: `echo pw | gpg --batch --passphrase-fd 0`, where the word that
    // names it comes after it.
    word(
        &["passphrase-fd"],
        || {
            format!(
                r#"(?:echo|printf)[ \t]+(?:-[A-Za-z]+[ \t]+)*{QUOTE}(?P<value>[^\s'"\\|]{{3,}}){QUOTE}[ \t]*\|[^\n|;&]*?gpg[^\n|;&]*?--passphrase-fd"#
            )
        },
        Replace::Value,
    ),
    // A YAML `pass:` key, alone on its line (maybe a list item), with a value of letters and
    // other characters: not Go's `--- PASS: TestX` (capitals, after dashes), prose ("second
    // pass: rewrite"), a word or a count. Its line starts at a real or an escaped line break.
    rule(
        &["pass"],
        || {
            format!(
                concat!(
                    r#"(?:(?m:^)|{BREAK})[ \t]*(?:-[ \t]+)?pass[ \t]*:[ \t]+{QUOTE}"#,
                    r#"(?P<value>[A-Za-z][^\s'"\\#]*[^A-Za-z\s'"\\#][^\s'"\\#]*"#,
                    r#"|[^A-Za-z\s'"\\#][^\s'"\\#]*[A-Za-z][^\s'"\\#]*)"#,
                    r#"{QUOTE}[ \t]*(?:\r?(?m:$)|{BREAK}|\\?")"#,
                ),
                BREAK = BREAK,
                QUOTE = QUOTE,
            )
        },
        Replace::Value,
    ),
    // ADO-style connection strings.
    word(
        &["pass", "pwd"],
        || r"(?i-u:password|pwd)\s*=\s*(?P<value>[^;\s\\]{4,})\s*;".to_owned(),
        Replace::AssignedValue,
    ),
    // Credential assignments: `password=...`, `'api_key': '...'`, `DB_PASSWORD=...`.
    word(
        CREDENTIAL_WORDS,
        || {
            format!(
                r#"(?i-u:_pass|_?(?:password|passwd|sshpass|pwd|secret|token|api[_\-]?key|access[_\-]?key|client[_\-]?secret|auth[_\-]?token|aws_secret_access_key)){QUOTE}\s*[:=]\s*{QUOTE}(?P<value>[^\s"'\\,;]{{4,}})"#
            )
        },
        Replace::AssignedValue,
    ),
    // High-entropy values assigned to key-like identifiers.
    gated(
        key_assignment_gate,
        &["key", "secret", "token"],
        || {
            format!(
                r"(?-u:\b)(?i-u:[A-Za-z0-9_\-]*(?:key|secret|token)[A-Za-z0-9_\-]*){QUOTE}\s*[:=]\s*{QUOTE}(?P<value>(?i-u:[A-Za-z0-9+/=_\-]{{20,}}))"
            )
        },
        Replace::AssignedEntropyValue,
    ),
];

/// A provider [`token`] rule that runs only where `gate` holds.
const fn gated_token(
    gate: fn(&[u8]) -> bool,
    triggers: &'static [&'static str],
    pattern: fn() -> String,
) -> Builtin {
    let mut rule = token(triggers, pattern);
    rule.gate = Some(gate);
    rule
}

/// Whether `text` may hold a Twilio, Telegram or Discord token (the rule before the OpenAI
/// keys): `SK` and 32 hex digits; `:AA` after a digit; a `.`, 6 token characters and a `.`
/// with 23 token characters before. Most texts have none, which spares the rule's scan.
fn provider_shape_gate(text: &[u8]) -> bool {
    let is_token = |b: &u8| b.is_ascii_alphanumeric() || *b == b'_' || *b == b'-';
    let twilio = memchr::memmem::find_iter(text, b"SK").any(|at| {
        text.get(at + 2..at + 34)
            .is_some_and(|h| h.iter().all(u8::is_ascii_hexdigit))
    });
    let telegram = || {
        memchr::memmem::find_iter(text, b":AA").any(|at| at > 0 && text[at - 1].is_ascii_digit())
    };
    let discord = || {
        memchr::memchr_iter(b'.', text).any(|at| {
            at >= 23
                && text[at - 23..at].iter().all(is_token)
                && text
                    .get(at + 1..at + 7)
                    .is_some_and(|p| p.iter().all(is_token))
                && text.get(at + 7) == Some(&b'.')
        })
    };
    twilio || telegram() || discord()
}

/// A rule that runs only where `gate` holds.
const fn gated(
    gate: fn(&[u8]) -> bool,
    triggers: &'static [&'static str],
    pattern: fn() -> String,
    replace: Replace,
) -> Builtin {
    let mut rule = rule(triggers, pattern, replace);
    rule.gate = Some(gate);
    rule
}

/// Whether `text` may hold a match of the last rule (a value of 20 or more characters assigned
/// to a key-like identifier): whether some `:` or `=` has, after it, spaces, maybe a quote and
/// 20 value characters, and before it spaces, maybe a quote and a run of identifier characters
/// holding `key`, `secret` or `token`. Spaces are read as any ASCII space or any byte of a
/// non-ASCII character (every Unicode space `\s` matches is one), so whatever the rule matches
/// passes; almost all of a transcript's `"uuid": "..."` members fail, which spares compiling
/// the rule (its DFAs are too large to build ahead).
fn key_assignment_gate(text: &[u8]) -> bool {
    let is_space = |b: u8| b.is_ascii_whitespace() || b == 0x0b || b >= 0x80;
    let is_quote = |b: u8| b == b'"' || b == b'\'';
    let is_value = |b: u8| b.is_ascii_alphanumeric() || b"+/=_-".contains(&b);
    let is_ident = |b: u8| b.is_ascii_alphanumeric() || b == b'_' || b == b'-';
    memchr::memchr2_iter(b':', b'=', text).any(|at| {
        // After: spaces, `\"`, `"` or nothing, 20 value characters.
        let mut i = at + 1;
        while text.get(i).is_some_and(|&c| is_space(c)) {
            i += 1;
        }
        if text.get(i) == Some(&b'\\') && text.get(i + 1).is_some_and(|&c| is_quote(c)) {
            i += 2;
        } else if text.get(i).is_some_and(|&c| is_quote(c)) {
            i += 1;
        }
        if text.len() < i + 20 || !text[i..i + 20].iter().all(|&c| is_value(c)) {
            return false;
        }
        // Before: spaces, a quote maybe escaped, identifier characters holding a key word.
        let mut j = at;
        while j > 0 && is_space(text[j - 1]) {
            j -= 1;
        }
        if j > 0 && is_quote(text[j - 1]) {
            j -= 1;
            if j > 0 && text[j - 1] == b'\\' {
                j -= 1;
            }
        }
        let end = j;
        while j > 0 && is_ident(text[j - 1]) {
            j -= 1;
        }
        let ident = text[j..end].to_ascii_lowercase();
        [&b"key"[..], b"secret", b"token"]
            .iter()
            .any(|w| ident.windows(w.len()).any(|x| x == *w))
    })
}
