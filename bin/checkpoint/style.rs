//! Color in human output, decided the way git decides it (docs/cli.md, "Color").
//!
//! `--color=<when>` wins; else `color.entire-checkpoint`, else `color.ui` (`always`, `never` or
//! `false`, and `auto` or `true` or unset for "on a terminal"). On a terminal (or in the pager
//! a terminal got, unless `color.pager` is false) color is on, unless `NO_COLOR` is set and not
//! empty or `TERM` is unset or `dumb`. `--json` is never colored. Each part has a slot whose
//! color `color.entire-checkpoint.<slot>` sets, in git's syntax (`bold red`, `#ff8700 ul`).

use std::fmt;

use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

use entire_checkpoints::git::repo::Repo;
use entire_checkpoints::ops::blame::Attribution;

use super::args::ColorWhen;
use super::pager::{self, Output};
use crate::common::text::escape_except;

/// The parts of human output that have a color.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Slot {
    /// Checkpoint IDs and commit hashes (git's commit color).
    Id,
    /// Headings (`Checkpoint ...`, `Session N`).
    Header,
    /// blame's `agent` label.
    Agent,
    /// blame's `commit-linked` label.
    CommitLinked,
    /// blame's `human` label.
    Human,
    /// blame's `uncommitted` label.
    Uncommitted,
    /// What only the remote holds (`list --remote`).
    RemoteOnly,
    /// A checkpoint a commit names that no store holds, or one that cannot be read.
    Missing,
}

impl Slot {
    const ALL: [Slot; 8] = [
        Slot::Id,
        Slot::Header,
        Slot::Agent,
        Slot::CommitLinked,
        Slot::Human,
        Slot::Uncommitted,
        Slot::RemoteOnly,
        Slot::Missing,
    ];

    /// The slot's name in `color.entire-checkpoint.<slot>`.
    pub fn name(self) -> &'static str {
        match self {
            Slot::Id => "id",
            Slot::Header => "header",
            Slot::Agent => "agent",
            Slot::CommitLinked => "commit-linked",
            Slot::Human => "human",
            Slot::Uncommitted => "uncommitted",
            Slot::RemoteOnly => "remote-only",
            Slot::Missing => "missing",
        }
    }

    /// The color without configuration: IDs yellow as git's commit hashes, headings bold, the
    /// blame labels each their own.
    fn default_style(self) -> &'static str {
        match self {
            Slot::Id => "yellow",
            Slot::Header => "bold",
            Slot::Agent => "magenta",
            Slot::CommitLinked => "cyan",
            Slot::Human => "green",
            Slot::Uncommitted => "dim",
            Slot::RemoteOnly => "blue",
            Slot::Missing => "red",
        }
    }

    /// The label of a blame attribution.
    pub fn of(a: Attribution) -> Slot {
        match a {
            Attribution::Agent => Slot::Agent,
            Attribution::CommitLinked => Slot::CommitLinked,
            Attribution::Human => Slot::Human,
            Attribution::Uncommitted => Slot::Uncommitted,
        }
    }
}

/// `text` safe for a one-line field of human output: every terminal control, newlines
/// included, written out (`\e`, `\u{202e}`; see `common::text`).
pub fn escape(text: &str) -> std::borrow::Cow<'_, str> {
    escape_except(text, |_| false)
}

/// How human output is colored: no color at all, or a style per [`Slot`].
#[derive(Debug, Clone, Default)]
pub struct Style {
    colors: Option<Vec<anstyle::Style>>,
}

impl Style {
    /// No color.
    pub fn plain() -> Style {
        Style::default()
    }

    /// The style of a command's human output: `when` from `--color`, the rest from `repo`'s
    /// config and the environment. Reads no config when color is off anyway.
    pub fn decide(when: Option<ColorWhen>, repo: &Repo) -> Style {
        let config = |key: &str| repo.config_string(key);
        let on = match when {
            Some(ColorWhen::Always) => true,
            Some(ColorWhen::Never) => false,
            Some(ColorWhen::Auto) => auto(config),
            None => match config_when(config) {
                Some(ColorWhen::Always) => true,
                Some(ColorWhen::Never) => false,
                _ => auto(config),
            },
        };
        if !on {
            return Style::plain();
        }
        let colors = Slot::ALL
            .iter()
            .map(|slot| {
                config(&format!("color.entire-checkpoint.{}", slot.name()))
                    .and_then(|v| anstyle_git::parse(&v).ok())
                    .unwrap_or_else(|| {
                        anstyle_git::parse(slot.default_style())
                            .unwrap_or_else(|_| unreachable!("the defaults parse"))
                    })
            })
            .collect();
        Style {
            colors: Some(colors),
        }
    }

    /// Whether anything is colored.
    pub fn is_colored(&self) -> bool {
        self.colors.is_some()
    }

    /// Appends to `line` (plain text so far, or colored) two spaces and the first non-empty line
    /// of `text`, escaped, cut with `…` where the line would pass the terminal's width (as
    /// `columns` of [`pager::output`] says; never cut into a pipe). Nothing when `text` has no
    /// such line.
    pub fn append_subject(&self, line: &mut String, text: &str) {
        let Some(first) = text.lines().map(str::trim).find(|l| !l.is_empty()) else {
            return;
        };
        let subject = escape(first);
        let room = match pager::output() {
            Output::Terminal { columns } | Output::Pager { columns } => columns.map(|c| {
                let used = UnicodeWidthStr::width(strip_ansi(line).as_str());
                c.saturating_sub(used + 2)
            }),
            Output::Other => None,
        };
        match room {
            // Too little room for a word: no subject rather than a stump.
            Some(room) if room < 4 => {}
            Some(room) if UnicodeWidthStr::width(&*subject) > room => {
                line.push_str("  ");
                let mut width = 0;
                for c in subject.chars() {
                    let w = UnicodeWidthChar::width(c).unwrap_or(0);
                    if width + w + 1 > room {
                        break;
                    }
                    width += w;
                    line.push(c);
                }
                line.push('…');
            }
            _ => {
                line.push_str("  ");
                line.push_str(&subject);
            }
        }
    }

    /// `text` in the color of `slot` (as it is without color).
    pub fn paint<T: fmt::Display>(&self, slot: Slot, text: T) -> Painted<T> {
        let style = self
            .colors
            .as_ref()
            .and_then(|c| c.get(Slot::ALL.iter().position(|s| *s == slot)?).copied())
            .unwrap_or_default();
        Painted { style, text }
    }
}

/// Text in a color: its escape sequences around it, none for the plain style.
pub struct Painted<T> {
    style: anstyle::Style,
    text: T,
}

impl<T: fmt::Display> fmt::Display for Painted<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.style == anstyle::Style::new() {
            return self.text.fmt(f);
        }
        write!(
            f,
            "{}{}{}",
            self.style.render(),
            self.text,
            self.style.render_reset()
        )
    }
}

/// `line` without the escape sequences of its colors (which take no room on the terminal).
fn strip_ansi(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        if c == '\x1b' {
            // A color is ESC [ parameters m.
            for c in chars.by_ref() {
                if c == 'm' {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// `color.entire-checkpoint`, else `color.ui`, as git reads a color boolean: `never` and false
/// values are never, `always` is always, `auto` and true values are auto.
fn config_when(config: impl Fn(&str) -> Option<String>) -> Option<ColorWhen> {
    let value = config("color.entire-checkpoint").or_else(|| config("color.ui"))?;
    Some(match value.trim().to_ascii_lowercase().as_str() {
        "always" => ColorWhen::Always,
        "never" | "false" | "no" | "off" | "0" | "" => ColorWhen::Never,
        _ => ColorWhen::Auto,
    })
}

/// Whether `auto` colors: output to a terminal, or to a pager while `color.pager` allows it,
/// with a `TERM` other than `dumb` and no `NO_COLOR`.
fn auto(config: impl Fn(&str) -> Option<String>) -> bool {
    let to_terminal = match pager::output() {
        Output::Terminal { .. } => true,
        Output::Pager { .. } => config("color.pager").is_none_or(|v| git_bool(&v)),
        Output::Other => false,
    };
    let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
    let term = std::env::var("TERM").unwrap_or_default();
    to_terminal && !no_color && !term.is_empty() && term != "dumb"
}

/// A git boolean: false for `false`, `no`, `off`, `0` and the empty value.
fn git_bool(value: &str) -> bool {
    !matches!(
        value.trim().to_ascii_lowercase().as_str(),
        "false" | "no" | "off" | "0" | ""
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_values_read_as_git_reads_a_color_boolean() {
        let cases = [
            ("always", ColorWhen::Always),
            ("never", ColorWhen::Never),
            ("false", ColorWhen::Never),
            ("auto", ColorWhen::Auto),
            ("true", ColorWhen::Auto),
            ("Yes", ColorWhen::Auto),
        ];
        for (value, want) in cases {
            let got = config_when(|k| (k == "color.ui").then(|| value.to_owned()));
            assert_eq!(got, Some(want), "{value}");
        }
        // The command's own key wins over color.ui.
        let got = config_when(|k| match k {
            "color.entire-checkpoint" => Some("never".into()),
            _ => Some("always".into()),
        });
        assert_eq!(got, Some(ColorWhen::Never));
        assert_eq!(config_when(|_| None), None);
    }

    #[test]
    fn the_default_slot_styles_parse() {
        for slot in Slot::ALL {
            assert!(anstyle_git::parse(slot.default_style()).is_ok(), "{slot:?}");
        }
        let plain = Style::plain();
        assert_eq!(plain.paint(Slot::Id, "abc").to_string(), "abc");
    }
}
