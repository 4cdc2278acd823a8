//! Scalar styles: go-yaml v2's `yaml_emitter_analyze_scalar` and
//! `yaml_emitter_select_scalar_style`, for block context (Plumb never emits flow collections
//! except the empty `{}` and `[]`).

/// The style a scalar is written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Style {
    Plain,
    SingleQuoted,
    DoubleQuoted,
    Literal,
}

/// What the emitter's character analysis allows for one scalar.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Analysis {
    pub(crate) multiline: bool,
    block_plain_allowed: bool,
    single_quoted_allowed: bool,
    block_allowed: bool,
}

/// libyaml's `is_printable` on the character at the start of `s` (go-yaml v2 sets `unicode`,
/// so non-ASCII is fine when printable; a tab is not printable and forces double quotes).
pub(crate) fn is_printable(c: char) -> bool {
    let v = u32::from(c);
    v == 0x0A
        || (0x20..=0x7E).contains(&v)
        || (0xA0..=0xD7FF).contains(&v)
        || ((0xE000..=0xFFFD).contains(&v) && v != 0xFEFF)
}

/// libyaml's `is_break`: CR, LF, NEL, LS, PS.
pub(crate) fn is_break(c: char) -> bool {
    matches!(c, '\r' | '\n' | '\u{85}' | '\u{2028}' | '\u{2029}')
}

fn is_blank(c: Option<char>) -> bool {
    matches!(c, Some(' ' | '\t'))
}

/// `yaml_emitter_analyze_scalar`.
pub(crate) fn analyze(value: &str) -> Analysis {
    if value.is_empty() {
        return Analysis {
            multiline: false,
            block_plain_allowed: true,
            single_quoted_allowed: true,
            block_allowed: false,
        };
    }
    scan(value).analysis()
}

/// The flags `yaml_emitter_analyze_scalar` collects in its pass over the characters.
#[derive(Debug, Default)]
struct Scan {
    block_indicators: bool,
    line_breaks: bool,
    special_characters: bool,
    leading_space: bool,
    leading_break: bool,
    trailing_space: bool,
    trailing_break: bool,
    break_space: bool,
    space_break: bool,
}

/// The character pass of `yaml_emitter_analyze_scalar` over a non-empty scalar.
fn scan(value: &str) -> Scan {
    let mut s = Scan {
        block_indicators: value.starts_with("---") || value.starts_with("..."),
        ..Scan::default()
    };
    let (mut previous_space, mut previous_break) = (false, false);
    let mut preceded_by_whitespace = true;

    let chars: Vec<char> = value.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        let next = chars.get(i + 1).copied();
        let followed_by_whitespace = next.is_none() || is_blank(next);
        let last = i + 1 == chars.len();
        if is_indicator(i == 0, c, followed_by_whitespace, preceded_by_whitespace) {
            s.block_indicators = true;
        }
        if !is_printable(c) {
            s.special_characters = true;
        }
        if c == ' ' {
            s.leading_space |= i == 0;
            s.trailing_space |= last;
            s.break_space |= previous_break;
            previous_space = true;
            previous_break = false;
        } else if is_break(c) {
            s.line_breaks = true;
            s.leading_break |= i == 0;
            s.trailing_break |= last;
            s.space_break |= previous_space;
            previous_space = false;
            previous_break = true;
        } else {
            previous_space = false;
            previous_break = false;
        }
        preceded_by_whitespace = matches!(c, ' ' | '\t' | '\0') || is_break(c);
    }
    s
}

/// Whether `c` is a YAML indicator where it stands (`first`: at the scalar's start).
fn is_indicator(
    first: bool,
    c: char,
    followed_by_whitespace: bool,
    preceded_by_whitespace: bool,
) -> bool {
    if first {
        match c {
            '#' | ',' | '[' | ']' | '{' | '}' | '&' | '*' | '!' | '|' | '>' | '\'' | '"' | '%'
            | '@' | '`' => true,
            '?' | ':' | '-' => followed_by_whitespace,
            _ => false,
        }
    } else {
        match c {
            ':' => followed_by_whitespace,
            '#' => preceded_by_whitespace,
            _ => false,
        }
    }
}

impl Scan {
    /// The styles the flags allow.
    fn analysis(&self) -> Analysis {
        let mut a = Analysis {
            multiline: self.line_breaks,
            block_plain_allowed: true,
            single_quoted_allowed: true,
            block_allowed: true,
        };
        if self.leading_space || self.leading_break || self.trailing_space || self.trailing_break {
            a.block_plain_allowed = false;
        }
        if self.trailing_space {
            a.block_allowed = false;
        }
        if self.break_space {
            a.block_plain_allowed = false;
            a.single_quoted_allowed = false;
        }
        if self.space_break || self.special_characters {
            a.block_plain_allowed = false;
            a.single_quoted_allowed = false;
            a.block_allowed = false;
        }
        if self.line_breaks || self.block_indicators {
            a.block_plain_allowed = false;
        }
        a
    }
}

/// `yaml_emitter_select_scalar_style` in block context, from the style `encoder.stringv` asked
/// for.
pub(crate) fn select_style(requested: Style, a: &Analysis, simple_key: bool) -> Style {
    let mut style = requested;
    if simple_key && a.multiline {
        style = Style::DoubleQuoted;
    }
    if style == Style::Plain && !a.block_plain_allowed {
        style = Style::SingleQuoted;
    }
    if style == Style::SingleQuoted && !a.single_quoted_allowed {
        style = Style::DoubleQuoted;
    }
    if style == Style::Literal && (!a.block_allowed || simple_key) {
        style = Style::DoubleQuoted;
    }
    style
}
