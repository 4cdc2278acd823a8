//! Parser for Go's text/template (`text/template/parse/parse.go`): the same grammar, the same
//! parse-time checks (undefined variables and functions, `break` outside `range`).

use std::collections::BTreeMap;

use crate::Error;
use crate::lex::{Item, Tok, lex, line_of};

/// Nesting of parentheses and control structures allowed while parsing (Go has 10,000; ours is
/// lower so that a recursive descent on a worker thread's stack can never overflow).
const MAX_PARSE_DEPTH: usize = 300;

/// A position in a named template's source text.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Pos(pub usize);

#[derive(Debug, Clone)]
pub(crate) enum Node {
    Text(String),
    Action(Pipe),
    If(Branch),
    Range(Branch),
    With(Branch),
    Template { pos: Pos, name: String, pipe: Option<Pipe> },
    Break(Pos),
    Continue(Pos),
}

#[derive(Debug, Clone)]
pub(crate) struct Branch {
    pub pipe: Pipe,
    pub list: Vec<Node>,
    pub else_list: Option<Vec<Node>>,
}

#[derive(Debug, Clone)]
pub(crate) struct Pipe {
    pub pos: Pos,
    pub decl: Vec<String>,
    pub is_assign: bool,
    pub cmds: Vec<Cmd>,
}

#[derive(Debug, Clone)]
pub(crate) struct Cmd {
    pub pos: Pos,
    pub args: Vec<Arg>,
}

#[derive(Debug, Clone)]
pub(crate) struct Arg {
    pub pos: Pos,
    pub kind: ArgKind,
}

#[derive(Debug, Clone)]
pub(crate) enum ArgKind {
    Dot,
    Nil,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    /// `.a.b`
    Field(Vec<String>),
    /// `$x.a.b` (the name includes the `$`).
    Var(String, Vec<String>),
    /// A function name.
    Ident(String),
    /// `(pipeline).a.b` or `$x` chained after a parenthesis.
    Chain(Box<Arg>, Vec<String>),
    Pipe(Box<Pipe>),
}

impl Arg {
    /// The operand as Go's Node.String() writes it, for error messages.
    pub(crate) fn describe(&self) -> String {
        match &self.kind {
            ArgKind::Dot => ".".into(),
            ArgKind::Nil => "nil".into(),
            ArgKind::Bool(b) => b.to_string(),
            ArgKind::Int(i) => i.to_string(),
            ArgKind::Float(f) => f.to_string(),
            ArgKind::Str(s) => format!("{s:?}"),
            ArgKind::Field(f) => f.iter().map(|x| format!(".{x}")).collect(),
            ArgKind::Var(v, f) => format!("{v}{}", f.iter().map(|x| format!(".{x}")).collect::<String>()),
            ArgKind::Ident(i) => i.clone(),
            ArgKind::Chain(a, f) => format!("{}{}", a.describe(), f.iter().map(|x| format!(".{x}")).collect::<String>()),
            ArgKind::Pipe(p) => format!("({})", p.describe()),
        }
    }
}

impl Pipe {
    pub(crate) fn describe(&self) -> String {
        let cmds: Vec<String> = self
            .cmds
            .iter()
            .map(|c| c.args.iter().map(Arg::describe).collect::<Vec<_>>().join(" "))
            .collect();
        let mut s = String::new();
        if !self.decl.is_empty() {
            s = format!("{} {} ", self.decl.join(", "), if self.is_assign { "=" } else { ":=" });
        }
        s + &cmds.join(" | ")
    }
}

/// One parsed template text: the main body and the `define`d templates, with the source text
/// kept for error positions.
#[derive(Debug, Clone)]
pub(crate) struct Tree {
    pub name: String,
    pub src: std::sync::Arc<str>,
    pub root: Vec<Node>,
}

impl Tree {
    /// `name:line:col` as Go's ErrorContext writes it (col is a 0-based byte offset).
    pub(crate) fn location(&self, pos: Pos) -> String {
        let before = &self.src.as_bytes()[..pos.0.min(self.src.len())];
        let col = match before.iter().rposition(|b| *b == b'\n') {
            Some(nl) => pos.0 - nl - 1,
            None => pos.0,
        };
        format!("{}:{}:{}", self.name, line_of(&self.src, pos.0), col)
    }
}

/// Parses `text` named `name`; `is_func` says whether a function name is defined.
pub(crate) fn parse(
    name: &str,
    text: &str,
    is_func: &dyn Fn(&str) -> bool,
) -> Result<BTreeMap<String, Tree>, Error> {
    let items = lex(name, text)?;
    let src: std::sync::Arc<str> = text.into();
    let mut p = Parser {
        name: name.to_string(),
        src: src.clone(),
        items,
        i: 0,
        vars: vec!["$".to_string()],
        range_depth: 0,
        depth: 0,
        is_func,
        trees: BTreeMap::new(),
    };
    let root = p.top_list()?;
    let main = Tree { name: name.to_string(), src, root };
    // A body that is only blanks does not replace a define of the same name (Go's IsEmptyTree).
    let keep_define = p.trees.contains_key(name) && is_empty(&main.root);
    if !keep_define {
        p.trees.insert(name.to_string(), main);
    }
    Ok(p.trees)
}

fn is_empty(nodes: &[Node]) -> bool {
    nodes.iter().all(|n| matches!(n, Node::Text(t) if t.trim().is_empty()))
}

struct Parser<'f> {
    name: String,
    src: std::sync::Arc<str>,
    items: Vec<Item>,
    i: usize,
    vars: Vec<String>,
    range_depth: usize,
    depth: usize,
    is_func: &'f dyn Fn(&str) -> bool,
    trees: BTreeMap<String, Tree>,
}

enum End {
    End,
    Else(Pos),
}

impl Parser<'_> {
    fn err(&self, pos: usize, msg: impl std::fmt::Display) -> Error {
        Error::Parse { message: format!("template: {}:{}: {}", self.name, line_of(&self.src, pos), msg) }
    }

    fn peek(&self) -> &Item {
        &self.items[self.i.min(self.items.len() - 1)]
    }

    fn next(&mut self) -> Item {
        let it = self.peek().clone();
        if self.i < self.items.len() {
            self.i += 1;
        }
        it
    }

    fn next_non_space(&mut self) -> Item {
        loop {
            let it = self.next();
            if it.tok != Tok::Space {
                return it;
            }
        }
    }

    fn peek_non_space(&mut self) -> Item {
        let it = self.next_non_space();
        self.i -= 1;
        it
    }

    fn top_list(&mut self) -> Result<Vec<Node>, Error> {
        let mut nodes = Vec::new();
        loop {
            let it = self.peek().clone();
            match it.tok {
                Tok::Eof => return Ok(nodes),
                Tok::LeftDelim => {
                    let save = self.i;
                    self.next();
                    let after = self.peek_non_space();
                    if after.tok == Tok::Ident("define".into()) {
                        self.next_non_space();
                        self.define(it.pos)?;
                        continue;
                    }
                    self.i = save;
                }
                _ => {}
            }
            match self.text_or_action()? {
                Ok(n) => nodes.push(n),
                Err((_, pos)) => return Err(self.err(pos, "unexpected {{end}}/{{else}}")),
            }
        }
    }

    fn define(&mut self, pos: usize) -> Result<(), Error> {
        let it = self.next_non_space();
        let Tok::Str(name) = it.tok else {
            return Err(self.err(it.pos, "unexpected token in define clause"));
        };
        self.expect_right("define clause")?;
        let saved = std::mem::replace(&mut self.vars, vec!["$".to_string()]);
        let (list, end) = self.item_list()?;
        self.vars = saved;
        if let End::Else(p) = end {
            return Err(self.err(p.0, "unexpected {{else}} in define"));
        }
        let _ = pos;
        let tree = Tree { name: name.clone(), src: self.src.clone(), root: list };
        match self.trees.get(&name) {
            Some(old) if !is_empty(&old.root) && !is_empty(&tree.root) => {
                return Err(self.err(it.pos, format!("template: multiple definition of template {name:?}")));
            }
            Some(_) if is_empty(&tree.root) => {}
            _ => {
                self.trees.insert(name, tree);
            }
        }
        Ok(())
    }

    fn expect_right(&mut self, ctx: &str) -> Result<(), Error> {
        let it = self.next_non_space();
        if it.tok != Tok::RightDelim {
            return Err(self.err(it.pos, format!("unexpected {:?} in {ctx}", it.tok)));
        }
        Ok(())
    }

    /// Nodes up to `{{end}}` or `{{else}}`.
    fn item_list(&mut self) -> Result<(Vec<Node>, End), Error> {
        let mut nodes = Vec::new();
        loop {
            if self.peek().tok == Tok::Eof {
                return Err(self.err(self.peek().pos, "unexpected EOF"));
            }
            match self.text_or_action()? {
                Ok(n) => nodes.push(n),
                Err((end, _)) => return Ok((nodes, end)),
            }
        }
    }

    /// A node, or the `{{end}}`/`{{else}}` that closes the current list.
    fn text_or_action(&mut self) -> Result<Result<Node, (End, usize)>, Error> {
        let it = self.next();
        match it.tok {
            Tok::Text(t) => Ok(Ok(Node::Text(t))),
            Tok::LeftDelim => {
                self.depth += 1;
                if self.depth > MAX_PARSE_DEPTH || crate::stack_low() {
                    return Err(self.err(it.pos, "max nesting depth exceeded"));
                }
                let r = self.action();
                self.depth -= 1;
                r
            }
            t => Err(self.err(it.pos, format!("unexpected {t:?} in input"))),
        }
    }

    fn action(&mut self) -> Result<Result<Node, (End, usize)>, Error> {
        let it = self.next_non_space();
        if let Tok::Ident(word) = &it.tok {
            match word.as_str() {
                "block" => return self.block(it.pos).map(Ok),
                "break" | "continue" => {
                    if self.range_depth == 0 {
                        return Err(self.err(it.pos, format!("{{{{{word}}}}} outside {{{{range}}}}")));
                    }
                    self.expect_right(word)?;
                    let pos = Pos(it.pos);
                    return Ok(Ok(if word == "break" { Node::Break(pos) } else { Node::Continue(pos) }));
                }
                "define" => return Err(self.err(it.pos, "unexpected <define> in command")),
                "else" => return Ok(Err((End::Else(Pos(it.pos)), it.pos))),
                "end" => {
                    self.expect_right("end")?;
                    return Ok(Err((End::End, it.pos)));
                }
                "if" | "range" | "with" => return self.control(word.clone(), it.pos).map(Ok),
                "template" => return self.template(it.pos).map(Ok),
                _ => {}
            }
        }
        self.i -= 1;
        let pipe = self.pipeline("command", Tok::RightDelim)?;
        Ok(Ok(Node::Action(pipe)))
    }

    fn control(&mut self, word: String, pos: usize) -> Result<Node, Error> {
        let mark = self.vars.len();
        let pipe = self.pipeline(&word, Tok::RightDelim)?;
        if pipe.decl.len() > 1 && word != "range" {
            return Err(self.err(pos, "too many declarations in command"));
        }
        if word == "range" {
            self.range_depth += 1;
        }
        let listed = self.item_list();
        if word == "range" {
            self.range_depth -= 1;
        }
        let (list, end) = listed?;
        let else_list = match end {
            End::End => None,
            End::Else(_) => Some(self.else_branch(&word)?),
        };
        self.vars.truncate(mark);
        let branch = Branch { pipe, list, else_list };
        Ok(match word.as_str() {
            "if" => Node::If(branch),
            "range" => Node::Range(branch),
            _ => Node::With(branch),
        })
    }

    /// After `{{else`: `}}` then a list, or `if ...`/`with ...` chained (ends at the shared `{{end}}`).
    fn else_branch(&mut self, word: &str) -> Result<Vec<Node>, Error> {
        let it = self.peek_non_space();
        if let Tok::Ident(w) = &it.tok
            && w == word
            && (w == "if" || w == "with")
        {
            self.next_non_space();
            let nested = self.control(w.clone(), it.pos)?;
            return Ok(vec![nested]);
        }
        self.expect_right("else")?;
        let (list, end) = self.item_list()?;
        if let End::Else(p) = end {
            return Err(self.err(p.0, format!("expected end; found {{{{else}}}} in {word}")));
        }
        Ok(list)
    }

    fn block(&mut self, pos: usize) -> Result<Node, Error> {
        let it = self.next_non_space();
        let Tok::Str(name) = it.tok else {
            return Err(self.err(it.pos, "unexpected token in block clause"));
        };
        let pipe = self.pipeline("block", Tok::RightDelim)?;
        let saved = std::mem::replace(&mut self.vars, vec!["$".to_string()]);
        let listed = self.item_list();
        self.vars = saved;
        let (list, end) = listed?;
        if let End::Else(p) = end {
            return Err(self.err(p.0, "unexpected {{else}} in block"));
        }
        let tree = Tree { name: name.clone(), src: self.src.clone(), root: list };
        self.trees.insert(name.clone(), tree);
        Ok(Node::Template { pos: Pos(pos), name, pipe: Some(pipe) })
    }

    fn template(&mut self, pos: usize) -> Result<Node, Error> {
        let it = self.next_non_space();
        let Tok::Str(name) = it.tok else {
            return Err(self.err(it.pos, "unexpected token in template clause"));
        };
        let pipe = if self.peek_non_space().tok == Tok::RightDelim {
            self.next_non_space();
            None
        } else {
            Some(self.pipeline("template", Tok::RightDelim)?)
        };
        Ok(Node::Template { pos: Pos(pos), name, pipe })
    }

    /// A pipeline up to `end` (`}}` or `)`), with an optional declaration.
    fn pipeline(&mut self, ctx: &str, end: Tok) -> Result<Pipe, Error> {
        let start = self.peek_non_space().pos;
        let mut pipe = Pipe { pos: Pos(start), decl: Vec::new(), is_assign: false, cmds: Vec::new() };
        self.declarations(&mut pipe, ctx)?;
        loop {
            let it = self.peek_non_space();
            if it.tok == end {
                self.next_non_space();
                if pipe.cmds.is_empty() {
                    return Err(self.err(it.pos, format!("missing value for {ctx}")));
                }
                return Ok(pipe);
            }
            match it.tok {
                Tok::Bool(_)
                | Tok::Char(_)
                | Tok::Dot
                | Tok::Field(_)
                | Tok::Ident(_)
                | Tok::Number(_)
                | Tok::Nil
                | Tok::Str(_)
                | Tok::Variable(_)
                | Tok::LeftParen => {
                    let cmd = self.command(&end)?;
                    pipe.cmds.push(cmd);
                }
                t => return Err(self.err(it.pos, format!("unexpected {} in {ctx}", describe_tok(&t)))),
            }
        }
    }

    fn declarations(&mut self, pipe: &mut Pipe, ctx: &str) -> Result<(), Error> {
        let save = self.i;
        let first = self.next_non_space();
        let Tok::Variable(v) = first.tok.clone() else {
            self.i = save;
            return Ok(());
        };
        let next = self.next();
        let after = if next.tok == Tok::Space { self.next_non_space() } else { next };
        match after.tok {
            Tok::Declare | Tok::Assign => {
                pipe.is_assign = after.tok == Tok::Assign;
                if pipe.is_assign && !self.vars.contains(&v) {
                    return Err(self.err(first.pos, format!("undefined variable {v:?}")));
                }
                pipe.decl.push(v.clone());
                if !pipe.is_assign {
                    self.vars.push(v);
                }
            }
            Tok::Comma if ctx == "range" => {
                let second = self.next_non_space();
                let Tok::Variable(v2) = second.tok else {
                    return Err(self.err(second.pos, "range can only initialize variables"));
                };
                let op = self.next_non_space();
                if op.tok != Tok::Declare && op.tok != Tok::Assign {
                    return Err(self.err(op.pos, "expected := or = in range declaration"));
                }
                pipe.is_assign = op.tok == Tok::Assign;
                pipe.decl = vec![v.clone(), v2.clone()];
                if !pipe.is_assign {
                    self.vars.push(v);
                    self.vars.push(v2);
                }
            }
            Tok::Comma => return Err(self.err(after.pos, format!("too many declarations in {ctx}"))),
            _ => self.i = save,
        }
        Ok(())
    }

    fn command(&mut self, end: &Tok) -> Result<Cmd, Error> {
        let pos = Pos(self.peek_non_space().pos);
        let mut args = Vec::new();
        loop {
            self.peek_non_space();
            let operand = self.operand()?;
            if let Some(a) = operand {
                args.push(a);
            }
            let it = self.next();
            match &it.tok {
                Tok::Space => continue,
                t if t == end => {
                    self.i -= 1;
                    break;
                }
                Tok::RightDelim | Tok::RightParen => {
                    return Err(self.err(it.pos, format!("unexpected {} in operand", describe_tok(&it.tok))));
                }
                Tok::Pipe => break,
                t => return Err(self.err(it.pos, format!("unexpected {} in operand", describe_tok(t)))),
            }
        }
        if args.is_empty() {
            return Err(self.err(pos.0, "empty command"));
        }
        Ok(Cmd { pos, args })
    }

    fn operand(&mut self) -> Result<Option<Arg>, Error> {
        let Some(term) = self.term()? else { return Ok(None) };
        let mut fields = Vec::new();
        while let Tok::Field(f) = &self.peek().tok {
            fields.push(f.clone());
            self.next();
        }
        if fields.is_empty() {
            return Ok(Some(term));
        }
        let pos = term.pos;
        let kind = match term.kind {
            ArgKind::Field(mut f) => {
                f.extend(fields);
                ArgKind::Field(f)
            }
            ArgKind::Var(v, mut f) => {
                f.extend(fields);
                ArgKind::Var(v, f)
            }
            ArgKind::Bool(_) | ArgKind::Str(_) | ArgKind::Int(_) | ArgKind::Float(_) | ArgKind::Nil | ArgKind::Dot => {
                return Err(self.err(pos.0, format!("unexpected . after term {:?}", term.describe())));
            }
            other => ArgKind::Chain(Box::new(Arg { pos, kind: other }), fields),
        };
        Ok(Some(Arg { pos, kind }))
    }

    fn term(&mut self) -> Result<Option<Arg>, Error> {
        let it = self.next_non_space();
        let pos = Pos(it.pos);
        let kind = match it.tok {
            Tok::Ident(name) => {
                if !(self.is_func)(&name) {
                    return Err(self.err(it.pos, format!("function {name:?} not defined")));
                }
                ArgKind::Ident(name)
            }
            Tok::Dot => ArgKind::Dot,
            Tok::Nil => ArgKind::Nil,
            Tok::Variable(v) => {
                if !self.vars.contains(&v) {
                    return Err(self.err(it.pos, format!("undefined variable {v:?}")));
                }
                ArgKind::Var(v, Vec::new())
            }
            Tok::Field(f) => ArgKind::Field(vec![f]),
            Tok::Bool(b) => ArgKind::Bool(b),
            Tok::Char(c) => ArgKind::Int(c as i64),
            Tok::Number(text) => self.number(&text, it.pos)?,
            Tok::LeftParen => {
                self.depth += 1;
                if self.depth > MAX_PARSE_DEPTH || crate::stack_low() {
                    return Err(self.err(it.pos, "max nesting depth exceeded"));
                }
                let pipe = self.pipeline("parenthesized pipeline", Tok::RightParen);
                self.depth -= 1;
                ArgKind::Pipe(Box::new(pipe?))
            }
            Tok::Str(s) => ArgKind::Str(s),
            _ => {
                self.i -= 1;
                return Ok(None);
            }
        };
        Ok(Some(Arg { pos, kind }))
    }

    fn number(&self, text: &str, pos: usize) -> Result<ArgKind, Error> {
        let bad = || self.err(pos, format!("bad number syntax: {text:?}"));
        if text.ends_with('i') {
            return Err(self.err(pos, format!("complex numbers are not supported: {text:?}")));
        }
        let (neg, body) = match text.as_bytes()[0] {
            b'-' => (true, &text[1..]),
            b'+' => (false, &text[1..]),
            _ => (false, text),
        };
        let lower = body.to_ascii_lowercase();
        let is_hex = lower.starts_with("0x");
        let floaty = if is_hex { lower.contains('p') } else { lower.contains(['.', 'e']) };
        if !floaty {
            let v = parse_go_int(&lower).ok_or_else(bad)?;
            let v = i64::try_from(v).ok().or_else(|| (neg && v == 1u64 << 63).then_some(i64::MIN));
            let Some(v) = v else {
                return Err(bad());
            };
            return Ok(ArgKind::Int(if neg { v.wrapping_neg() } else { v }));
        }
        if is_hex || lower.contains("__") || lower.starts_with('_') || lower.ends_with('_') {
            return Err(bad());
        }
        let f: f64 = lower.replace('_', "").parse().map_err(|_| bad())?;
        if !f.is_finite() {
            return Err(bad());
        }
        Ok(ArgKind::Float(if neg { -f } else { f }))
    }
}

/// Go's strconv.ParseUint(text, 0, 64): prefixes 0x/0o/0b/0 and `_` separators.
fn parse_go_int(s: &str) -> Option<u64> {
    let (radix, digits, prefixed) = if let Some(r) = s.strip_prefix("0x") {
        (16, r, true)
    } else if let Some(r) = s.strip_prefix("0o") {
        (8, r, true)
    } else if let Some(r) = s.strip_prefix("0b") {
        (2, r, true)
    } else if s.len() > 1 && s.starts_with('0') {
        (8, &s[1..], true)
    } else {
        (10, s, false)
    };
    let digits = if prefixed { digits.strip_prefix('_').unwrap_or(digits) } else { digits };
    if digits.is_empty() || digits.starts_with('_') || digits.ends_with('_') || digits.contains("__") {
        return None;
    }
    u64::from_str_radix(&digits.replace('_', ""), radix).ok()
}

fn describe_tok(t: &Tok) -> String {
    match t {
        Tok::RightDelim => "\"}}\"".into(),
        Tok::RightParen => "\")\"".into(),
        Tok::LeftParen => "\"(\"".into(),
        Tok::Pipe => "\"|\"".into(),
        Tok::Declare => "\":=\"".into(),
        Tok::Assign => "\"=\"".into(),
        Tok::Comma => "\",\"".into(),
        Tok::Eof => "EOF".into(),
        other => format!("{other:?}"),
    }
}
