//! huandu/xstrings v1.5.0's case conversions (sprig's snakecase, kebabcase, camelcase), ported
//! rune for rune: their word splitting (numbers, upper-case runs) is their own, not a standard one.

#[derive(Clone, Copy, PartialEq)]
enum Word {
    Invalid,
    Number,
    Upper,
    Alphabet,
    Connector,
    Punct,
    Other,
}

pub(super) fn is_connector(c: char) -> bool {
    c == '-' || c == '_' || c.is_whitespace()
}

fn is_alphabet(c: char) -> bool {
    // xstrings counts CJK ideographs as not alphabetic; letters below them always are.
    c.is_alphabetic() && !matches!(c as u32, 0x4E00..=0x9FFF | 0x3400..=0x4DBF | 0x20000..=0x2A6DF)
}

fn is_punct(c: char) -> bool {
    c.is_ascii_punctuation() && !matches!(c, '$' | '+' | '<' | '=' | '>' | '^' | '`' | '|' | '~') && c != '-' && c != '_'
        || (!c.is_ascii() && !c.is_alphanumeric() && !c.is_whitespace() && !c.is_control())
}

fn is_number(c: char) -> bool {
    c.is_numeric()
}

/// xstrings nextWord: the type of the next word, the word and the rest.
fn next_word(s: &str) -> (Word, &str, &str) {
    let mut it = s.char_indices().peekable();
    let Some((_, r)) = it.next() else { return (Word::Invalid, "", "") };
    let end_while = |pred: &dyn Fn(char) -> bool| -> usize {
        s.char_indices().skip(1).find(|(_, c)| !pred(*c)).map_or(s.len(), |(i, _)| i)
    };
    let (wt, off) = if is_connector(r) {
        (Word::Connector, end_while(&is_connector))
    } else if is_punct(r) {
        (Word::Punct, end_while(&is_punct))
    } else if r.is_uppercase() {
        upper_word(s, r)
    } else if is_alphabet(r) {
        (Word::Alphabet, end_while(&|c| is_alphabet(c) && !c.is_uppercase()))
    } else if is_number(r) {
        (Word::Number, end_while(&is_number))
    } else {
        (Word::Other, end_while(&|c| !(is_connector(c) || is_alphabet(c) || is_number(c) || is_punct(c))))
    };
    (wt, &s[..off], &s[off..])
}

fn upper_word(s: &str, r: char) -> (Word, usize) {
    let first = r.len_utf8();
    let rest = &s[first..];
    let Some(r2) = rest.chars().next() else { return (Word::Upper, first) };
    if r2.is_uppercase() {
        // A run of upper case; its last letter starts the next word when a lower-case one follows.
        let mut off = first;
        let mut prev = 0;
        let mut next = None;
        for c in rest.chars() {
            if !c.is_uppercase() {
                next = Some(c);
                break;
            }
            prev = c.len_utf8();
            off += prev;
        }
        if next.is_some_and(is_alphabet) {
            off -= prev;
        }
        return (Word::Upper, off);
    }
    if is_alphabet(r2) {
        let n = rest.chars().take_while(|c| is_alphabet(*c) && !c.is_uppercase()).map(char::len_utf8).sum::<usize>();
        return (Word::Upper, first + n);
    }
    (Word::Upper, first)
}

fn to_lower(buf: &mut String, wt: Word, s: &str, connector: char) {
    if wt != Word::Upper && wt != Word::Connector {
        buf.push_str(s);
        return;
    }
    for c in s.chars() {
        if is_connector(c) {
            buf.push(connector);
        } else {
            buf.extend(c.to_lowercase());
        }
    }
}

/// xstrings camelCaseToLowerCase (ToSnakeCase with `_`, ToKebabCase with `-`).
// length: a port of one Go function whose control flow is kept as it is for review against it.
pub(super) fn to_lower_case(s: &str, connector: char) -> String {
    let mut buf = String::with_capacity(s.len() + 4);
    if s.is_empty() {
        return buf;
    }
    let (mut wt, mut word, mut remaining) = next_word(s);
    while !remaining.is_empty() {
        if wt != Word::Connector {
            to_lower(&mut buf, wt, word, connector);
        }
        let prev = wt;
        let last = word;
        (wt, word, remaining) = next_word(remaining);
        match prev {
            Word::Number => {
                while wt == Word::Alphabet || wt == Word::Number {
                    to_lower(&mut buf, wt, word, connector);
                    (wt, word, remaining) = next_word(remaining);
                }
                if wt != Word::Invalid && wt != Word::Punct && wt != Word::Connector {
                    buf.push(connector);
                }
            }
            Word::Connector => to_lower(&mut buf, prev, last, connector),
            Word::Punct => {}
            _ => {
                if wt != Word::Number {
                    if wt != Word::Connector && wt != Word::Punct {
                        buf.push(connector);
                    }
                    continue;
                }
                if remaining.is_empty() {
                    continue;
                }
                let last = word;
                (wt, word, remaining) = next_word(remaining);
                if wt != Word::Alphabet {
                    to_lower(&mut buf, Word::Number, last, connector);
                    if wt != Word::Connector && wt != Word::Punct {
                        buf.push(connector);
                    }
                    continue;
                }
                buf.push(connector);
                to_lower(&mut buf, Word::Number, last, connector);
                while wt == Word::Alphabet || wt == Word::Number {
                    to_lower(&mut buf, wt, word, connector);
                    (wt, word, remaining) = next_word(remaining);
                }
                if wt != Word::Invalid && wt != Word::Connector && wt != Word::Punct {
                    buf.push(connector);
                }
            }
        }
    }
    to_lower(&mut buf, wt, word, connector);
    buf
}
