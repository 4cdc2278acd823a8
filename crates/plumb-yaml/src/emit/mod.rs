//! The writer: what `sigs.k8s.io/yaml.Marshal` (JSON → go-yaml v2) prints for a JSON value.
//!
//! This is a port of the parts of go-yaml v2's `encode.go` and libyaml's emitter (`emitterc.go`)
//! that a JSON value can reach: block mappings with keys in go-yaml's order ([`keys`]),
//! sequences not indented under their key, `{}`/`[]` for empty collections, the quoting rules of
//! `encoder.stringv` ([`resolve`]) and the emitter's scalar analysis ([`scalar`]), literal block
//! scalars for multi-line strings, the 80-column folding of long plain and quoted strings
//! (go-yaml v2.4's default, which kubectl and Argo CD show), and complex `? ` keys for keys
//! longer than 128 bytes. Argo CD's diff text is made of this output, so it is matched byte for
//! byte rather than approximated. Checked against `sigs.k8s.io/yaml` v1.6.0 itself (a Go program
//! marshalling 151 tricky values): all identical but one, a raw U+0085 (NEL) inside a string,
//! which go-yaml's own reading of the JSON text folds into a space before it emits anything.

mod keys;
mod number;
mod resolve;
mod scalar;

use serde_json::Value;

use scalar::{Style, analyze, is_break, is_printable, select_style};

const BEST_INDENT: usize = 2;
const BEST_WIDTH: usize = 80;

/// Writes `value` as go-yaml v2 `yaml.Marshal` does after `json.Marshal` (the path of
/// `sigs.k8s.io/yaml.Marshal`): keys sorted, two-space indentation, sequences level with their
/// key, go-yaml's quoting and line folding. The text ends with a newline.
pub fn to_yaml_string(value: &Value) -> String {
    let mut e = Emitter::default();
    e.node(value, None, Context::Root);
    e.write_indent(0);
    e.out
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Context {
    Root,
    MappingValue,
    SequenceItem,
    MappingKey { simple: bool },
}

struct Emitter {
    out: String,
    /// Column in characters, as libyaml counts it.
    column: usize,
    whitespace: bool,
    indention: bool,
}

impl Default for Emitter {
    fn default() -> Self {
        Self {
            out: String::new(),
            column: 0,
            whitespace: true,
            indention: true,
        }
    }
}

impl Emitter {
    /// Emits a node; `indent` is the enclosing collection's indentation (`None` at the root,
    /// libyaml's -1).
    fn node(&mut self, value: &Value, indent: Option<usize>, ctx: Context) {
        match value {
            Value::Object(map) if map.is_empty() => self.empty_flow("{", "}"),
            Value::Array(items) if items.is_empty() => self.empty_flow("[", "]"),
            Value::Object(map) => self.block_mapping(map, indent),
            Value::Array(items) => self.block_sequence(items, indent, ctx),
            Value::String(s) => {
                let requested = if s.contains('\n') {
                    Style::Literal
                } else if resolve::plain_resolves_to_str(s) {
                    Style::Plain
                } else {
                    Style::DoubleQuoted
                };
                self.scalar(s, requested, indent, ctx);
            }
            Value::Null => self.scalar("null", Style::Plain, indent, ctx),
            Value::Bool(b) => {
                self.scalar(if *b { "true" } else { "false" }, Style::Plain, indent, ctx)
            }
            Value::Number(n) => self.scalar(&number::format_number(n), Style::Plain, indent, ctx),
        }
    }

    fn empty_flow(&mut self, open: &str, close: &str) {
        self.write_indicator(open, true, true, false);
        self.write_indicator(close, false, false, false);
    }

    fn block_mapping(&mut self, map: &serde_json::Map<String, Value>, indent: Option<usize>) {
        let inner = indent.map_or(0, |i| i + BEST_INDENT);
        let mut entries: Vec<(&String, &Value)> = map.iter().collect();
        entries.sort_by(|a, b| keys::go_yaml_key_cmp(a.0, b.0));
        for (key, value) in entries {
            self.write_indent(inner);
            let simple = key.len() <= 128 && !analyze(key).multiline;
            let key_value = Value::String(key.clone());
            if simple {
                self.node(
                    &key_value,
                    Some(inner),
                    Context::MappingKey { simple: true },
                );
                self.write_indicator(":", false, false, false);
            } else {
                self.write_indicator("?", true, false, true);
                self.node(
                    &key_value,
                    Some(inner),
                    Context::MappingKey { simple: false },
                );
                self.write_indent(inner);
                self.write_indicator(":", true, false, true);
            }
            self.node(value, Some(inner), Context::MappingValue);
        }
    }

    fn block_sequence(&mut self, items: &[Value], indent: Option<usize>, ctx: Context) {
        // A sequence that is the value of a mapping key is "indentless" (libyaml's
        // `mapping_context && !indention`): its dashes sit at the key's column.
        let indentless = ctx == Context::MappingValue && !self.indention;
        let inner = match indent {
            None => 0,
            Some(i) if indentless => i,
            Some(i) => i + BEST_INDENT,
        };
        for item in items {
            self.write_indent(inner);
            self.write_indicator("-", true, false, true);
            self.node(item, Some(inner), Context::SequenceItem);
        }
    }

    fn scalar(&mut self, value: &str, requested: Style, indent: Option<usize>, ctx: Context) {
        let simple_key = ctx == Context::MappingKey { simple: true };
        let style = select_style(requested, &analyze(value), simple_key);
        // `yaml_emitter_increase_indent(flow=true)`: continuation lines go one step deeper.
        let scalar_indent = indent.map_or(BEST_INDENT, |i| i + BEST_INDENT);
        let allow_breaks = !simple_key;
        match style {
            Style::Plain => self.write_plain(value, scalar_indent, allow_breaks),
            Style::SingleQuoted => self.write_single_quoted(value, scalar_indent, allow_breaks),
            Style::DoubleQuoted => self.write_double_quoted(value, scalar_indent, allow_breaks),
            Style::Literal => self.write_literal(value, scalar_indent),
        }
    }

    fn put(&mut self, c: char) {
        self.out.push(c);
        self.column += 1;
    }

    fn put_break(&mut self) {
        self.out.push('\n');
        self.column = 0;
    }

    fn write_indent(&mut self, indent: usize) {
        if !self.indention || self.column > indent || (self.column == indent && !self.whitespace) {
            self.put_break();
        }
        while self.column < indent {
            self.put(' ');
        }
        self.whitespace = true;
        self.indention = true;
    }

    fn write_indicator(
        &mut self,
        indicator: &str,
        need_whitespace: bool,
        is_whitespace: bool,
        is_indention: bool,
    ) {
        if need_whitespace && !self.whitespace {
            self.put(' ');
        }
        for c in indicator.chars() {
            self.put(c);
        }
        self.whitespace = is_whitespace;
        self.indention = self.indention && is_indention;
    }

    fn write_plain(&mut self, value: &str, indent: usize, allow_breaks: bool) {
        if !value.is_empty() && !self.whitespace {
            self.put(' ');
        }
        let chars: Vec<char> = value.chars().collect();
        let mut spaces = false;
        for (i, &c) in chars.iter().enumerate() {
            if c == ' ' {
                let next_is_space = chars.get(i + 1) == Some(&' ');
                if allow_breaks && !spaces && self.column > BEST_WIDTH && !next_is_space {
                    self.write_indent(indent);
                } else {
                    self.put(c);
                }
                spaces = true;
            } else {
                self.put(c);
                self.indention = false;
                spaces = false;
            }
        }
        if !value.is_empty() {
            self.whitespace = false;
        }
        self.indention = false;
    }

    fn write_single_quoted(&mut self, value: &str, indent: usize, allow_breaks: bool) {
        self.write_indicator("'", true, false, false);
        let chars: Vec<char> = value.chars().collect();
        let mut spaces = false;
        let mut breaks = false;
        for (i, &c) in chars.iter().enumerate() {
            if c == ' ' {
                let next_is_space = chars.get(i + 1) == Some(&' ');
                if allow_breaks
                    && !spaces
                    && self.column > BEST_WIDTH
                    && i > 0
                    && i + 1 < chars.len()
                    && !next_is_space
                {
                    self.write_indent(indent);
                } else {
                    self.put(c);
                }
                spaces = true;
            } else if is_break(c) {
                // Only breaks other than "\n" get here (a "\n" makes the string a literal
                // block or double-quoted): libyaml writes them raw and indents what follows.
                if !breaks && c == '\n' {
                    self.put_break();
                }
                self.out.push(c);
                self.column = 0;
                self.indention = true;
                breaks = true;
            } else {
                if breaks {
                    self.write_indent(indent);
                }
                if c == '\'' {
                    self.put('\'');
                }
                self.put(c);
                self.indention = false;
                spaces = false;
                breaks = false;
            }
        }
        self.write_indicator("'", false, false, false);
        self.whitespace = false;
        self.indention = false;
    }

    fn write_double_quoted(&mut self, value: &str, indent: usize, allow_breaks: bool) {
        self.write_indicator("\"", true, false, false);
        let chars: Vec<char> = value.chars().collect();
        let mut spaces = false;
        for (i, &c) in chars.iter().enumerate() {
            if !is_printable(c) || c == '\u{feff}' || is_break(c) || c == '"' || c == '\\' {
                self.put('\\');
                match c {
                    '\0' => self.put('0'),
                    '\u{7}' => self.put('a'),
                    '\u{8}' => self.put('b'),
                    '\t' => self.put('t'),
                    '\n' => self.put('n'),
                    '\u{b}' => self.put('v'),
                    '\u{c}' => self.put('f'),
                    '\r' => self.put('r'),
                    '\u{1b}' => self.put('e'),
                    '"' => self.put('"'),
                    '\\' => self.put('\\'),
                    '\u{85}' => self.put('N'),
                    '\u{a0}' => self.put('_'),
                    '\u{2028}' => self.put('L'),
                    '\u{2029}' => self.put('P'),
                    _ => {
                        let v = u32::from(c);
                        let (letter, width) = if v <= 0xFF {
                            ('x', 2)
                        } else if v <= 0xFFFF {
                            ('u', 4)
                        } else {
                            ('U', 8)
                        };
                        self.put(letter);
                        for ch in format!("{v:0width$X}").chars() {
                            self.put(ch);
                        }
                    }
                }
                spaces = false;
            } else if c == ' ' {
                if allow_breaks
                    && !spaces
                    && self.column > BEST_WIDTH
                    && i != 0
                    && i + 1 != chars.len()
                {
                    self.write_indent(indent);
                    if chars.get(i + 1) == Some(&' ') {
                        self.put('\\');
                    }
                } else {
                    self.put(c);
                }
                spaces = true;
            } else {
                self.put(c);
                spaces = false;
            }
        }
        self.write_indicator("\"", false, false, false);
        self.whitespace = false;
        self.indention = false;
    }

    fn write_literal(&mut self, value: &str, indent: usize) {
        self.write_indicator("|", true, false, false);
        // Block scalar hints: an explicit indentation when the text starts with a space or a
        // break, and the chomping indicator from how the text ends.
        let first = value.chars().next();
        if first.is_some_and(|c| c == ' ' || is_break(c)) {
            self.write_indicator(&BEST_INDENT.to_string(), false, false, false);
        }
        let mut rev = value.chars().rev();
        let last = rev.next();
        let chomp = match last {
            None => Some("-"),
            Some(c) if !is_break(c) => Some("-"),
            Some(_) => match rev.next() {
                None => Some("+"),
                Some(c) if is_break(c) => Some("+"),
                Some(_) => None,
            },
        };
        if let Some(chomp) = chomp {
            self.write_indicator(chomp, false, false, false);
        }
        self.put_break();
        self.indention = true;
        self.whitespace = true;
        let mut breaks = true;
        for c in value.chars() {
            if is_break(c) {
                if c == '\n' {
                    self.put_break();
                } else {
                    self.out.push(c);
                    self.column = 0;
                }
                self.indention = true;
                breaks = true;
            } else {
                if breaks {
                    self.write_indent(indent);
                }
                self.put(c);
                self.indention = false;
                breaks = false;
            }
        }
    }
}
