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
    let mut block_indicators = value.starts_with("---") || value.starts_with("...");
    let mut line_breaks = false;
    let mut special_characters = false;
    let (mut leading_space, mut leading_break, mut trailing_space, mut trailing_break) =
        (false, false, false, false);
    let (mut break_space, mut space_break) = (false, false);
    let (mut previous_space, mut previous_break) = (false, false);
    let mut preceded_by_whitespace = true;

    let chars: Vec<char> = value.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        let next = chars.get(i + 1).copied();
        let followed_by_whitespace = next.is_none() || is_blank(next);
        let last = i + 1 == chars.len();
        if i == 0 {
            match c {
                '#' | ',' | '[' | ']' | '{' | '}' | '&' | '*' | '!' | '|' | '>' | '\'' | '"'
                | '%' | '@' | '`' => block_indicators = true,
                '?' | ':' | '-' if followed_by_whitespace => block_indicators = true,
                _ => {}
            }
        } else {
            match c {
                ':' if followed_by_whitespace => block_indicators = true,
                '#' if preceded_by_whitespace => block_indicators = true,
                _ => {}
            }
        }
        if !is_printable(c) {
            special_characters = true;
        }
        if c == ' ' {
            leading_space |= i == 0;
            trailing_space |= last;
            break_space |= previous_break;
            previous_space = true;
            previous_break = false;
        } else if is_break(c) {
            line_breaks = true;
            leading_break |= i == 0;
            trailing_break |= last;
            space_break |= previous_space;
            previous_space = false;
            previous_break = true;
        } else {
            previous_space = false;
            previous_break = false;
        }
        preceded_by_whitespace = matches!(c, ' ' | '\t' | '\0') || is_break(c);
    }

    let mut a = Analysis {
        multiline: line_breaks,
        block_plain_allowed: true,
        single_quoted_allowed: true,
        block_allowed: true,
    };
    if leading_space || leading_break || trailing_space || trailing_break {
        a.block_plain_allowed = false;
    }
    if trailing_space {
        a.block_allowed = false;
    }
    if break_space {
        a.block_plain_allowed = false;
        a.single_quoted_allowed = false;
    }
    if space_break || special_characters {
        a.block_plain_allowed = false;
        a.single_quoted_allowed = false;
        a.block_allowed = false;
    }
    if line_breaks || block_indicators {
        a.block_plain_allowed = false;
    }
    a
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
