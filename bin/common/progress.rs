//! Progress of long operations on stderr: a bar when stderr is a terminal and `-q` was not
//! given, nothing otherwise (so logs and pipes never see it).

use std::io::IsTerminal;

/// A progress bar, or nothing; clones show the same bar. The bar itself is open for a command
/// that prints while it runs ([`indicatif::ProgressBar::suspend`]) or relabels it for another
/// stage (its message is the label).
#[derive(Clone)]
pub struct Bar(pub Option<indicatif::ProgressBar>);

impl Bar {
    /// A bar labelled `entire: <what>`, shown only on a terminal and without `quiet`.
    pub fn new(what: &str, quiet: bool) -> Bar {
        let bar = (!quiet && std::io::stderr().is_terminal())
            .then(|| {
                indicatif::ProgressStyle::with_template("entire: {msg} {bar:30} {pos}/{len}").ok()
            })
            .flatten()
            .map(|style| {
                indicatif::ProgressBar::new(0)
                    .with_style(style)
                    .with_message(what.to_owned())
            });
        Bar(bar)
    }

    /// `done` of `total` so far.
    pub fn set(&self, done: usize, total: usize) {
        if let Some(b) = &self.0 {
            b.set_length(total as u64);
            b.set_position(done as u64);
        }
    }

    /// Clears the bar: what follows is the command's own summary.
    pub fn finish(&self) {
        if let Some(b) = &self.0 {
            b.finish_and_clear();
        }
    }
}
