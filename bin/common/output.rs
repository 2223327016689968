//! Writing results on stdout.

use std::io::Write;

use super::error::Result;

/// Writes bytes to stdout.
pub fn write_stdout(bytes: &[u8]) -> Result<()> {
    let mut out = std::io::stdout().lock();
    out.write_all(bytes)?;
    out.flush()?;
    Ok(())
}

/// Writes `value` as pretty JSON and a newline to stdout.
pub fn print_json(value: &impl serde::Serialize) -> Result<()> {
    let mut text = serde_json::to_string_pretty(value)?;
    text.push('\n');
    write_stdout(text.as_bytes())
}
