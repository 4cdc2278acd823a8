//! What a jq ignore rule may not use, because the step budget cannot bound it.
//!
//! The budget counts steps; a single step that allocates in proportion to a number the
//! expression chooses is not bounded by it. In jq those are multiplication (`"x" * 1e12`
//! repeats a string, and big-integer products grow without limit) and assignment into a path
//! (`.[1e12] = 1` pads an array; `setpath` does it too, and `scalb` multiplies its argument).
//! A path expression has no use for either, so they are refused by their tokens (the lexer's
//! tokens, not the text: `"*"` in a string is no operator). Builtins that leave the evaluation
//! (`halt`), print (`debug`, `stderr`: an object's values in the logs) or read the process's
//! environment or input are replaced by ones that fail.

use jaq_core::load::Lexer;
use jaq_core::load::lex::{StrPart, Tok, Token};
use jaq_core::{Cv, DataT, Error, Exn, ValXs};
use jaq_json::Val;

use super::data::Bounded;
use super::failure::JqFailure;

/// Operators refused, as the lexer spells them.
const OPERATORS: &[&str] = &["*", "*=", "=", "|=", "+=", "-=", "/=", "%=", "//="];
/// Builtins refused by name: they allocate in one step.
const WORDS: &[&str] = &["setpath", "scalb"];
/// Native builtins replaced by [`unavailable`].
const NATIVES: &[&str] = &[
    "halt",
    "env",
    "debug_empty",
    "stderr_empty",
    "input",
    "inputs",
];

/// Refuses `expr` if it uses a refused operator or builtin.
pub(super) fn check(expr: &str) -> Result<(), JqFailure> {
    let tokens = Lexer::new(expr)
        .lex()
        .map_err(|errs| JqFailure::Invalid(format!("{} syntax error(s)", errs.len())))?;
    let mut stack: Vec<&Token<&str>> = tokens.iter().collect();
    while let Some(Token(text, tok)) = stack.pop() {
        match tok {
            Tok::Sym if OPERATORS.contains(text) => {
                return Err(JqFailure::Refused(format!(
                    "the operator {text} can allocate without bound; ignore rules select paths and need none"
                )));
            }
            Tok::Word if WORDS.contains(text) => {
                return Err(JqFailure::Refused(format!(
                    "{text} can allocate without bound; ignore rules select paths and need none"
                )));
            }
            Tok::Word if NATIVES.contains(text) || *text == "halt_error" => {
                return Err(JqFailure::Refused(format!(
                    "{text} is not available in ignore rules (it exits, prints, or reads input or the environment)"
                )));
            }
            Tok::Block(inner) => stack.extend(inner.iter()),
            Tok::Str(parts) => stack.extend(parts.iter().filter_map(|p| match p {
                StrPart::Term(t) => Some(t),
                _ => None,
            })),
            _ => {}
        }
    }
    Ok(())
}

/// Whether a native builtin is replaced by [`unavailable`].
pub(super) fn native_refused(name: &str) -> bool {
    NATIVES.contains(&name)
}

/// Stands in for a refused native builtin, also when it is reached through a definition of
/// the standard library (`debug`, `halt_error`).
pub(super) fn unavailable<'a>(_cv: Cv<'a, Bounded>) -> ValXs<'a, <Bounded as DataT>::V<'a>> {
    Box::new(std::iter::once(Err(Exn::from(Error::new(Val::from(
        "this builtin is not available in ignore rules".to_string(),
    ))))))
}
