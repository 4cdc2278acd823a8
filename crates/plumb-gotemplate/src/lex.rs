//! Lexer for Go's text/template syntax (`text/template/parse/lex.go`), written here because the
//! output must match Go byte for byte (trim markers, comments, number and string literals).

use crate::Error;

/// One token of an action, with its byte offset in the template text.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Tok {
    /// Text outside actions (already trimmed by `{{-`/`-}}`).
    Text(String),
    /// `{{` (the trim marker, if any, has been applied to the text before).
    LeftDelim,
    /// `}}`.
    RightDelim,
    Space,
    /// A keyword or function name.
    Ident(String),
    /// `.name` (one link of a field chain).
    Field(String),
    /// `$` or `$name`.
    Variable(String),
    Dot,
    Bool(bool),
    Nil,
    /// A number literal, raw text (parsed by the parser).
    Number(String),
    /// A char literal, its value.
    Char(char),
    /// A string literal, unquoted.
    Str(String),
    Pipe,
    LeftParen,
    RightParen,
    Declare,
    Assign,
    Comma,
    Eof,
}

/// A token and where it starts.
#[derive(Debug, Clone)]
pub(crate) struct Item {
    pub tok: Tok,
    pub pos: usize,
}

const SPACE: &[u8] = b" \t\r\n";

fn is_space(b: u8) -> bool {
    SPACE.contains(&b)
}

fn is_alnum(c: char) -> bool {
    c == '_' || c.is_alphanumeric()
}

/// Splits `text` into tokens; `name` is for error messages.
pub(crate) fn lex(name: &str, text: &str) -> Result<Vec<Item>, Error> {
    let mut lx = Lexer { name, src: text, pos: 0, items: Vec::new(), paren: 0 };
    lx.run()?;
    Ok(lx.items)
}

struct Lexer<'a> {
    name: &'a str,
    src: &'a str,
    pos: usize,
    items: Vec<Item>,
    paren: usize,
}

impl Lexer<'_> {
    fn err(&self, at: usize, msg: impl std::fmt::Display) -> Error {
        Error::Parse {
            message: format!("template: {}:{}: {}", self.name, line_of(self.src, at), msg),
        }
    }

    fn rest(&self) -> &str {
        &self.src[self.pos..]
    }

    fn push(&mut self, tok: Tok, pos: usize) {
        self.items.push(Item { tok, pos });
    }

    fn run(&mut self) -> Result<(), Error> {
        let mut trim_next = false;
        loop {
            let start = self.pos;
            let found = self.rest().find("{{");
            let end = found.map_or(self.src.len(), |i| self.pos + i);
            let mut text = &self.src[start..end];
            if trim_next {
                text = text.trim_start_matches(|c: char| c.is_ascii() && is_space(c as u8));
            }
            let trim_left = found.is_some() && has_left_trim(&self.src[end + 2..]);
            if trim_left {
                text = text.trim_end_matches(|c: char| c.is_ascii() && is_space(c as u8));
            }
            if !text.is_empty() {
                self.push(Tok::Text(text.to_string()), start);
            }
            if found.is_none() {
                self.push(Tok::Eof, self.src.len());
                return Ok(());
            }
            self.pos = end + 2;
            if trim_left {
                self.pos += 2;
            }
            trim_next = self.action(end)?;
        }
    }

    /// Lexes one action after `{{`; returns whether it ended with a right trim marker.
    fn action(&mut self, delim: usize) -> Result<bool, Error> {
        if self.rest().starts_with("/*") {
            return self.comment(delim);
        }
        self.push(Tok::LeftDelim, delim);
        self.paren = 0;
        loop {
            let rest = self.rest();
            if let Some(trim) = at_right_delim(rest) {
                if self.paren > 0 {
                    return Err(self.err(self.pos, "unclosed left paren"));
                }
                self.push(Tok::RightDelim, self.pos);
                self.pos += if trim { 4 } else { 2 };
                return Ok(trim);
            }
            let Some(c) = rest.chars().next() else {
                return Err(self.err(delim, "unclosed action"));
            };
            self.token(c)?;
        }
    }

    fn comment(&mut self, delim: usize) -> Result<bool, Error> {
        let Some(end) = self.rest().find("*/") else {
            return Err(self.err(delim, "unclosed comment"));
        };
        self.pos += end + 2;
        match at_right_delim(self.rest()) {
            Some(trim) => {
                self.pos += if trim { 4 } else { 2 };
                Ok(trim)
            }
            None => Err(self.err(delim, "comment ends before closing delimiter")),
        }
    }

    // length: one arm per token kind, as Go's lexInsideAction.
    fn token(&mut self, c: char) -> Result<(), Error> {
        let start = self.pos;
        match c {
            ' ' | '\t' | '\r' | '\n' => {
                let n = self.rest().bytes().take_while(|b| is_space(*b)).count();
                // A space before ` -}}` belongs to the trim marker.
                let n = if at_right_delim(&self.rest()[n - 1..]) == Some(true) { n - 1 } else { n };
                self.pos += n.max(1);
                if self.pos > start && !self.src[start..self.pos].is_empty() {
                    self.push(Tok::Space, start);
                }
            }
            '=' => self.one(Tok::Assign),
            ':' => {
                if !self.rest().starts_with(":=") {
                    return Err(self.err(start, "expected :="));
                }
                self.pos += 2;
                self.push(Tok::Declare, start);
            }
            '|' => self.one(Tok::Pipe),
            ',' => self.one(Tok::Comma),
            '(' => {
                self.paren += 1;
                self.one(Tok::LeftParen);
            }
            ')' => {
                if self.paren == 0 {
                    return Err(self.err(start, "unexpected right paren"));
                }
                self.paren -= 1;
                self.one(Tok::RightParen);
            }
            '"' => {
                let s = self.quoted()?;
                self.push(Tok::Str(s), start);
            }
            '`' => {
                let Some(end) = self.rest()[1..].find('`') else {
                    return Err(self.err(start, "unterminated raw quoted string"));
                };
                let s = self.rest()[1..1 + end].replace('\r', "");
                self.pos += end + 2;
                self.push(Tok::Str(s), start);
            }
            '\'' => {
                let ch = self.char_lit()?;
                self.push(Tok::Char(ch), start);
            }
            '$' => {
                let n = 1 + self.alnum_len(1);
                let name = self.rest()[..n].to_string();
                self.pos += n;
                self.push(Tok::Variable(name), start);
                self.terminator()?;
            }
            '.' => {
                let next = self.rest()[1..].chars().next();
                if next.is_some_and(|d| d.is_ascii_digit()) {
                    return self.number();
                }
                let n = self.alnum_len(1);
                if n == 0 {
                    self.one(Tok::Dot);
                } else {
                    let name = self.rest()[1..1 + n].to_string();
                    self.pos += 1 + n;
                    self.push(Tok::Field(name), start);
                    self.terminator()?;
                }
            }
            '+' | '-' | '0'..='9' => return self.number(),
            c if is_alnum(c) => {
                let n = self.alnum_len(0);
                let word = &self.rest()[..n];
                let tok = match word {
                    "true" => Tok::Bool(true),
                    "false" => Tok::Bool(false),
                    "nil" => Tok::Nil,
                    w => Tok::Ident(w.to_string()),
                };
                self.pos += n;
                self.push(tok, start);
                self.terminator()?;
            }
            c => return Err(self.err(start, format!("unrecognized character in action: {}", go_rune(c)))),
        }
        Ok(())
    }

    fn one(&mut self, tok: Tok) {
        let start = self.pos;
        self.pos += 1;
        self.push(tok, start);
    }

    fn alnum_len(&self, skip: usize) -> usize {
        self.rest()[skip..].chars().take_while(|c| is_alnum(*c)).map(char::len_utf8).sum()
    }

    /// After a word: only a space, delimiter or punctuation may follow (Go's atTerminator).
    fn terminator(&self) -> Result<(), Error> {
        let rest = self.rest();
        let Some(c) = rest.chars().next() else { return Ok(()) };
        if matches!(c, ' ' | '\t' | '\r' | '\n' | '.' | ',' | '|' | ':' | ')' | '(' | '=')
            || rest.starts_with("}}")
        {
            return Ok(());
        }
        Err(self.err(self.pos, format!("bad character {}", go_rune(c))))
    }

    fn number(&mut self) -> Result<(), Error> {
        let start = self.pos;
        let bytes = self.rest().as_bytes();
        let mut n = 0;
        if n < bytes.len() && (bytes[n] == b'+' || bytes[n] == b'-') {
            n += 1;
        }
        let body_start = n;
        while n < bytes.len() {
            let b = bytes[n];
            let exp_sign = (b == b'+' || b == b'-')
                && n > body_start
                && matches!(bytes[n - 1], b'e' | b'E' | b'p' | b'P')
                && !is_hex_prefixed(&bytes[body_start..n], bytes[n - 1]);
            if b.is_ascii_alphanumeric() || b == b'.' || b == b'_' || exp_sign {
                n += 1;
            } else {
                break;
            }
        }
        let text = self.rest()[..n].to_string();
        if n == body_start {
            return Err(self.err(start, format!("bad number syntax: {:?}", text)));
        }
        self.pos += n;
        self.push(Tok::Number(text), start);
        Ok(())
    }

    fn quoted(&mut self) -> Result<String, Error> {
        let start = self.pos;
        let bytes = self.rest().as_bytes();
        let mut i = 1;
        loop {
            match bytes.get(i) {
                None | Some(b'\n') => return Err(self.err(start, "unterminated quoted string")),
                Some(b'\\') => i += 2,
                Some(b'"') => break,
                Some(_) => i += 1,
            }
        }
        let raw = &self.rest()[1..i];
        let s = unescape(raw, '"').ok_or_else(|| self.err(start, format!("invalid syntax: \"{raw}\"")))?;
        self.pos += i + 1;
        Ok(s)
    }

    fn char_lit(&mut self) -> Result<char, Error> {
        let start = self.pos;
        let bytes = self.rest().as_bytes();
        let mut i = 1;
        loop {
            match bytes.get(i) {
                None | Some(b'\n') => return Err(self.err(start, "unterminated character constant")),
                Some(b'\\') => i += 2,
                Some(b'\'') => break,
                Some(_) => i += 1,
            }
        }
        let raw = &self.rest()[1..i];
        let s = unescape(raw, '\'').ok_or_else(|| self.err(start, format!("malformed character constant: '{raw}'")))?;
        let mut chars = s.chars();
        match (chars.next(), chars.next()) {
            (Some(c), None) => {
                self.pos += i + 1;
                Ok(c)
            }
            _ => Err(self.err(start, format!("malformed character constant: '{raw}'"))),
        }
    }
}

fn is_hex_prefixed(body: &[u8], last: u8) -> bool {
    // In a hex literal `e`/`E` are digits, only `p`/`P` start an exponent.
    let hex = body.len() > 1 && body[0] == b'0' && (body[1] == b'x' || body[1] == b'X');
    hex && (last == b'e' || last == b'E')
}

fn has_left_trim(after: &str) -> bool {
    let b = after.as_bytes();
    b.len() >= 2 && b[0] == b'-' && is_space(b[1])
}

/// `Some(trim)` when `rest` starts with `}}` or ` -}}`.
fn at_right_delim(rest: &str) -> Option<bool> {
    let b = rest.as_bytes();
    if b.len() >= 4 && is_space(b[0]) && b[1] == b'-' && &b[2..4] == b"}}" {
        return Some(true);
    }
    rest.starts_with("}}").then_some(false)
}

/// Line number (1-based) of byte offset `pos`.
pub(crate) fn line_of(src: &str, pos: usize) -> usize {
    1 + src.as_bytes()[..pos.min(src.len())].iter().filter(|b| **b == b'\n').count()
}

/// Go's `%#U` of a rune, as lex errors print it.
fn go_rune(c: char) -> String {
    format!("U+{:04X} '{}'", c as u32, c)
}

/// Go's strconv.Unquote escapes (without the quotes).
pub(crate) fn unescape(raw: &str, quote: char) -> Option<String> {
    let mut out = String::with_capacity(raw.len());
    let mut chars = raw.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            if c == quote {
                return None;
            }
            out.push(c);
            continue;
        }
        let e = chars.next()?;
        let v = match e {
            'a' => '\u{7}',
            'b' => '\u{8}',
            'f' => '\u{c}',
            'n' => '\n',
            'r' => '\r',
            't' => '\t',
            'v' => '\u{b}',
            '\\' => '\\',
            '\'' if quote == '\'' => '\'',
            '"' if quote == '"' => '"',
            'x' => char::from_u32(hex_digits(&mut chars, 2)?)?,
            'u' => char::from_u32(hex_digits(&mut chars, 4)?)?,
            'U' => char::from_u32(hex_digits(&mut chars, 8)?)?,
            '0'..='7' => {
                let d1 = chars.next()?.to_digit(8)?;
                let d2 = chars.next()?.to_digit(8)?;
                let v = e.to_digit(8)? * 64 + d1 * 8 + d2;
                if v > 255 {
                    return None;
                }
                char::from_u32(v)?
            }
            _ => return None,
        };
        out.push(v);
    }
    Some(out)
}

fn hex_digits(chars: &mut std::str::Chars<'_>, n: usize) -> Option<u32> {
    let mut v = 0u32;
    for _ in 0..n {
        v = v * 16 + chars.next()?.to_digit(16)?;
    }
    Some(v)
}
