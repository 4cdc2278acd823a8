//! A yes/no question on the terminal, as Argo CD's `cli.AskToProceed` (`util/cli/cli.go`) asks
//! it: print the question (no newline), read one line, accept `y`/`yes` or `n`/`no` in any case
//! around any whitespace, and ask again on anything else.

use std::io::{BufRead, Write};

use anyhow::{Context, Result, bail};

/// Asks `question` on `output` until `input` answers yes or no. The end of input without an
/// answer is an error (Argo exits on the read error), not a no: a closed stdin should never
/// pass for a decision. A last line without a newline still counts as an answer.
pub fn ask_to_proceed(
    question: &str,
    input: &mut impl BufRead,
    output: &mut impl Write,
) -> Result<bool> {
    loop {
        output
            .write_all(question.as_bytes())
            .and_then(|()| output.flush())
            .context("writing the question")?;
        let mut line = String::new();
        let read = input.read_line(&mut line).context("reading the answer")?;
        if read == 0 {
            bail!("no answer to the question (end of input)");
        }
        match line.trim().to_lowercase().as_str() {
            "y" | "yes" => return Ok(true),
            "n" | "no" => return Ok(false),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ask(input: &str) -> (Result<bool>, String) {
        let mut out = Vec::new();
        let answer = ask_to_proceed("Proceed? (y/n): ", &mut input.as_bytes(), &mut out);
        (answer, String::from_utf8(out).unwrap())
    }

    #[test]
    fn yes_and_no_in_any_case() {
        for yes in ["y\n", "yes\n", "Y\n", "  YeS \r\n", "y"] {
            let (answer, out) = ask(yes);
            assert!(answer.unwrap(), "{yes:?}");
            assert_eq!(out, "Proceed? (y/n): ");
        }
        for no in ["n\n", "no\n", "NO\n", "\tn\n", "n"] {
            assert!(!ask(no).0.unwrap(), "{no:?}");
        }
    }

    #[test]
    fn asks_again_until_answered() {
        let (answer, out) = ask("\nmaybe\nyep\nN\ny\n");
        assert!(!answer.unwrap());
        assert_eq!(out, "Proceed? (y/n): ".repeat(4));
    }

    #[test]
    fn end_of_input_is_an_error() {
        let (answer, out) = ask("");
        assert_eq!(
            answer.unwrap_err().to_string(),
            "no answer to the question (end of input)"
        );
        assert_eq!(out, "Proceed? (y/n): ");
        let (answer, out) = ask("later\n");
        assert!(answer.is_err());
        assert_eq!(out, "Proceed? (y/n): ".repeat(2));
    }
}
