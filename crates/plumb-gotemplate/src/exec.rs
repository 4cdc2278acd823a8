//! Execution of parsed templates (`text/template/exec.go`): pipelines, variables, control
//! structures and template calls, with the step, depth and output bounds of [`crate::Limits`].

use std::collections::BTreeMap;
use std::rc::Rc;

use crate::parse::{Arg, ArgKind, Branch, Cmd, Node, Pipe, Pos, Tree};
use crate::value::Value;
use crate::{Error, MissingKey, Options, Template, funcs};

/// How far `tpl` may nest (Argo's TPL_FUNC_MAX_RECURSION_DEPTH).
const TPL_MAX_DEPTH: usize = 3;

pub(crate) enum Flow {
    Break,
    Continue,
    Fail(Error),
}

impl From<Error> for Flow {
    fn from(e: Error) -> Flow {
        Flow::Fail(e)
    }
}

type R<T> = Result<T, Flow>;

pub(crate) struct State<'a> {
    pub tmpl: &'a Template,
    pub trees: &'a BTreeMap<String, Tree>,
    pub tree: &'a Tree,
    pub opts: &'a Options,
    pub out: String,
    pub vars: Vec<(String, Value)>,
    pub steps: &'a mut u64,
    pub depth: usize,
    pub tpl_depth: usize,
    /// The node being evaluated, for error context.
    pub at: (Pos, String),
}

impl<'a> State<'a> {
    pub(crate) fn fail(&self, msg: impl std::fmt::Display) -> Flow {
        let (pos, ctx) = &self.at;
        let ctx = if ctx.chars().count() > 20 { format!("{}...", ctx.chars().take(20).collect::<String>()) } else { ctx.clone() };
        Flow::Fail(Error::Exec {
            message: format!(
                "template: {}: executing {:?} at <{}>: {}",
                self.tree.location(*pos),
                self.tree.name,
                ctx,
                msg
            ),
        })
    }

    fn limit(&self, msg: String) -> Flow {
        Flow::Fail(Error::Limit { message: format!("template: {}: {}", self.tree.name, msg) })
    }

    fn step(&mut self) -> R<()> {
        *self.steps += 1;
        if *self.steps > self.opts.limits.max_steps {
            return Err(self.limit(format!(
                "execution exceeded {} steps (a loop too long or a recursion)",
                self.opts.limits.max_steps
            )));
        }
        Ok(())
    }

    fn write(&mut self, s: &str) -> R<()> {
        if self.out.len() + s.len() > self.opts.limits.max_output_bytes {
            return Err(self.limit(format!("output exceeded {} bytes", self.opts.limits.max_output_bytes)));
        }
        self.out.push_str(s);
        Ok(())
    }

    pub(crate) fn walk(&mut self, dot: &Value, nodes: &[Node]) -> R<()> {
        if crate::stack_low() {
            return Err(self.limit("templates nest too deeply for the stack".into()));
        }
        for n in nodes {
            self.step()?;
            match n {
                Node::Text(t) => self.write(t)?,
                Node::Action(pipe) => {
                    let v = self.pipeline(dot, pipe)?;
                    if pipe.decl.is_empty() {
                        self.print_value(&v)?;
                    }
                }
                Node::If(b) => self.if_with(dot, b, false)?,
                Node::With(b) => self.if_with(dot, b, true)?,
                Node::Range(b) => self.range(dot, b)?,
                Node::Template { pos, name, pipe } => self.call_template(dot, *pos, name, pipe.as_ref())?,
                Node::Break(_) => return Err(Flow::Break),
                Node::Continue(_) => return Err(Flow::Continue),
            }
        }
        Ok(())
    }

    fn print_value(&mut self, v: &Value) -> R<()> {
        match v {
            Value::Invalid | Value::Nil => self.write("<no value>"),
            Value::Str(s) => {
                let s = s.clone();
                self.write(&s)
            }
            other => {
                let s = other.to_go_string();
                self.write(&s)
            }
        }
    }

    fn if_with(&mut self, dot: &Value, b: &Branch, with: bool) -> R<()> {
        let mark = self.vars.len();
        let v = self.pipeline(dot, &b.pipe)?;
        let r = if v.truth() {
            if with { self.walk(&v, &b.list) } else { self.walk(dot, &b.list) }
        } else if let Some(e) = &b.else_list {
            self.walk(dot, e)
        } else {
            Ok(())
        };
        self.vars.truncate(mark);
        r
    }

    fn range(&mut self, dot: &Value, b: &Branch) -> R<()> {
        let mark = self.vars.len();
        let v = self.pipeline(dot, &b.pipe)?;
        let r = self.range_items(&v, b);
        self.vars.truncate(mark);
        match r? {
            true => Ok(()),
            false => match &b.else_list {
                Some(e) => self.walk(dot, e),
                None => Ok(()),
            },
        }
    }

    /// Runs the body for each element; false when there was none (the else branch runs).
    fn range_items(&mut self, v: &Value, b: &Branch) -> R<bool> {
        match v {
            Value::List(items) => {
                for (i, e) in items.iter().enumerate() {
                    if !self.iteration(b, Value::Int(i as i64), e.clone())? {
                        break;
                    }
                }
                Ok(!items.is_empty())
            }
            Value::Map(m) => {
                for (k, e) in m.iter() {
                    if !self.iteration(b, Value::str(k.as_str()), e.clone())? {
                        break;
                    }
                }
                Ok(!m.is_empty())
            }
            Value::Int(n) | Value::I64(n) => {
                if b.pipe.decl.len() > 1 {
                    return Err(self.fail(format!("can't use {n} to iterate over more than one variable")));
                }
                for i in 0..*n {
                    if !self.iteration(b, Value::Int(i), Value::Int(i))? {
                        break;
                    }
                }
                Ok(*n > 0)
            }
            Value::Invalid | Value::Nil => Ok(false),
            other => Err(self.fail(format!("range can't iterate over {}", other.to_go_string()))),
        }
    }

    /// One range iteration; false after `{{break}}`.
    fn iteration(&mut self, b: &Branch, index: Value, elem: Value) -> R<bool> {
        self.step()?;
        let decl = &b.pipe.decl;
        let n = self.vars.len();
        if !decl.is_empty() {
            if b.pipe.is_assign {
                let first = if decl.len() > 1 { index.clone() } else { elem.clone() };
                self.set_var(&decl[0], first);
                if decl.len() > 1 {
                    self.set_var(&decl[1], elem.clone());
                }
            } else {
                self.vars[n - 1].1 = elem.clone();
                if decl.len() > 1 {
                    self.vars[n - 2].1 = index;
                }
            }
        }
        let r = self.walk(&elem, &b.list);
        self.vars.truncate(n);
        match r {
            Ok(()) | Err(Flow::Continue) => Ok(true),
            Err(Flow::Break) => Ok(false),
            Err(e) => Err(e),
        }
    }

    fn call_template(&mut self, dot: &Value, pos: Pos, name: &str, pipe: Option<&Pipe>) -> R<()> {
        self.at = (pos, format!("{{{{template {name:?}}}}}"));
        let Some(tree) = self.trees.get(name) else {
            return Err(self.fail(format!("template {name:?} not defined")));
        };
        if self.depth >= self.opts.limits.max_depth || crate::stack_low() {
            return Err(self.limit(format!("exceeded maximum template depth ({})", self.opts.limits.max_depth)));
        }
        let new_dot = match pipe {
            Some(p) => self.pipeline(dot, p)?,
            None => Value::Invalid,
        };
        let saved_vars = std::mem::replace(&mut self.vars, vec![("$".to_string(), new_dot.clone())]);
        let saved_tree = std::mem::replace(&mut self.tree, tree);
        self.depth += 1;
        let r = self.walk(&new_dot, &tree.root);
        self.depth -= 1;
        self.tree = saved_tree;
        self.vars = saved_vars;
        r
    }

    fn set_var(&mut self, name: &str, v: Value) {
        if let Some(slot) = self.vars.iter_mut().rev().find(|(n, _)| n == name) {
            slot.1 = v;
        }
    }

    pub(crate) fn pipeline(&mut self, dot: &Value, pipe: &Pipe) -> R<Value> {
        let mut value: Option<Value> = None;
        for cmd in &pipe.cmds {
            let v = self.command(dot, cmd, value.take())?;
            // A nil interface result is Go's invalid value from here on (exec.go "lovely!").
            value = Some(if matches!(v, Value::Nil) { Value::Invalid } else { v });
        }
        let value = value.unwrap_or(Value::Invalid);
        for var in &pipe.decl {
            if pipe.is_assign {
                self.set_var(var, value.clone());
            } else {
                self.vars.push((var.clone(), value.clone()));
            }
        }
        Ok(value)
    }

    fn command(&mut self, dot: &Value, cmd: &Cmd, fin: Option<Value>) -> R<Value> {
        self.step()?;
        let first = &cmd.args[0];
        self.at = (first.pos, first.describe());
        match &first.kind {
            ArgKind::Field(fields) => {
                let has_args = cmd.args.len() > 1 || fin.is_some();
                self.chain(dot.clone(), fields, has_args, true)
            }
            ArgKind::Ident(name) => self.call_function(dot, name, &cmd.args[1..], fin),
            ArgKind::Chain(inner, fields) => {
                self.not_a_function(cmd, fin.is_some())?;
                let base = self.operand(dot, inner)?;
                self.chain(base, fields, false, false)
            }
            ArgKind::Var(name, fields) => {
                self.not_a_function_unless_fields(cmd, fin.is_some(), fields.is_empty())?;
                let base = self.var(name)?;
                self.chain(base, fields, cmd.args.len() > 1 || fin.is_some(), false)
            }
            ArgKind::Pipe(p) => {
                self.not_a_function(cmd, fin.is_some())?;
                self.pipeline(dot, p)
            }
            ArgKind::Nil => Err(self.fail("nil is not a command")),
            _ => {
                self.not_a_function(cmd, fin.is_some())?;
                self.operand(dot, first)
            }
        }
    }

    fn not_a_function(&self, cmd: &Cmd, has_final: bool) -> R<()> {
        if cmd.args.len() > 1 || has_final {
            return Err(self.fail(format!("can't give argument to non-function {}", cmd.args[0].describe())));
        }
        Ok(())
    }

    fn not_a_function_unless_fields(&self, cmd: &Cmd, has_final: bool, no_fields: bool) -> R<()> {
        if no_fields { self.not_a_function(cmd, has_final) } else { Ok(()) }
    }

    fn var(&self, name: &str) -> R<Value> {
        match self.vars.iter().rev().find(|(n, _)| n == name) {
            Some((_, v)) => Ok(v.clone()),
            None => Err(self.fail(format!("undefined variable: {name}"))),
        }
    }

    /// Evaluates one argument to a value.
    pub(crate) fn operand(&mut self, dot: &Value, arg: &Arg) -> R<Value> {
        Ok(match &arg.kind {
            ArgKind::Dot => dot.clone(),
            ArgKind::Nil => Value::Nil,
            ArgKind::Bool(b) => Value::Bool(*b),
            ArgKind::Int(i) => Value::Int(*i),
            ArgKind::Float(f) => Value::Float(*f),
            ArgKind::Str(s) => Value::str(s.as_str()),
            ArgKind::Field(fields) => self.chain(dot.clone(), fields, false, true)?,
            ArgKind::Var(name, fields) => {
                let base = self.var(name)?;
                self.chain(base, fields, false, false)?
            }
            ArgKind::Ident(name) => self.call_function(dot, name, &[], None)?,
            ArgKind::Chain(inner, fields) => {
                let base = self.operand(dot, inner)?;
                self.chain(base, fields, false, false)?
            }
            ArgKind::Pipe(p) => {
                let v = self.pipeline(dot, p)?;
                self.at = (arg.pos, arg.describe());
                v
            }
        })
    }

    /// `.a.b.c` from `base`; `has_args` is for the last link (Go: "is not a method but has arguments").
    fn chain(&mut self, base: Value, fields: &[String], has_args: bool, from_dot: bool) -> R<Value> {
        let mut v = base;
        for (i, f) in fields.iter().enumerate() {
            let last = i + 1 == fields.len();
            let type_name = if i == 0 && from_dot && matches!(v, Value::Map(_)) { "map[string]interface {}" } else { "interface {}" };
            v = self.field(v, f, has_args && last, type_name)?;
        }
        Ok(v)
    }

    fn field(&mut self, recv: Value, name: &str, has_args: bool, type_name: &str) -> R<Value> {
        match recv {
            Value::Invalid => {
                if self.opts.missing_key == MissingKey::Error {
                    return Err(self.fail(format!("nil data; no entry for key {name:?}")));
                }
                Ok(Value::Invalid)
            }
            Value::Nil => Err(self.fail(format!("nil pointer evaluating {type_name}.{name}"))),
            Value::Map(m) => {
                if has_args {
                    return Err(self.fail(format!("{name} is not a method but has arguments")));
                }
                match m.get(name) {
                    Some(v) => Ok(v.clone()),
                    None => match self.opts.missing_key {
                        MissingKey::Default => Ok(Value::Invalid),
                        MissingKey::Zero => Ok(Value::Nil),
                        MissingKey::Error => Err(self.fail(format!("map has no entry for key {name:?}"))),
                    },
                }
            }
            Value::Semver(s) if !has_args => match funcs::semver_field(&s, name) {
                Some(v) => Ok(v),
                None => Err(self.fail(format!("can't evaluate field {name} in type *semver.Version"))),
            },
            other => Err(self.fail(format!("can't evaluate field {name} in type {}", field_type(&other, type_name)))),
        }
    }

    fn call_function(&mut self, dot: &Value, name: &str, args: &[Arg], fin: Option<Value>) -> R<Value> {
        let n = args.len() + usize::from(fin.is_some());
        match name {
            "and" | "or" => return self.and_or(dot, name == "and", args, fin),
            "tpl" => {
                let mut vals = self.eval_args(dot, args)?;
                vals.extend(fin);
                self.arity(name, n, 2, Some(2))?;
                return self.tpl(&vals);
            }
            _ => {}
        }
        let mut vals = self.eval_args(dot, args)?;
        vals.extend(fin);
        let result = match self.tmpl.funcs.ext.get(name) {
            Some(f) => funcs::call_ext(f, &vals),
            None => {
                let Some(def) = funcs::builtin(name) else {
                    return Err(self.fail(format!("{name:?} is not a defined function")));
                };
                self.arity(name, n, def.min, def.max)?;
                (def.f)(&vals)
            }
        };
        let v = result.map_err(|e| self.fail(format!("error calling {name}: {e}")))?;
        if let Value::Str(s) = &v
            && s.len() > self.opts.limits.max_output_bytes
        {
            return Err(self.limit(format!("{name} returned more than {} bytes", self.opts.limits.max_output_bytes)));
        }
        Ok(v)
    }

    fn arity(&self, name: &str, n: usize, min: usize, max: Option<usize>) -> R<()> {
        match max {
            Some(m) if m == min && n != m => {
                Err(self.fail(format!("wrong number of args for {name}: want {m} got {n}")))
            }
            Some(m) if n > m || n < min => {
                Err(self.fail(format!("wrong number of args for {name}: want {min} to {m} got {n}")))
            }
            None if n < min => Err(self.fail(format!("wrong number of args for {name}: want at least {min} got {n}"))),
            _ => Ok(()),
        }
    }

    fn eval_args(&mut self, dot: &Value, args: &[Arg]) -> R<Vec<Value>> {
        let at = self.at.clone();
        let vals = args.iter().map(|a| self.operand(dot, a)).collect::<R<Vec<_>>>();
        self.at = at;
        vals
    }

    /// `and`/`or` evaluate their arguments lazily and return the deciding one (Go 1.18).
    fn and_or(&mut self, dot: &Value, is_and: bool, args: &[Arg], fin: Option<Value>) -> R<Value> {
        let n = args.len() + usize::from(fin.is_some());
        let name = if is_and { "and" } else { "or" };
        self.arity(name, n, 1, None)?;
        let mut last = Value::Invalid;
        let at = self.at.clone();
        for a in args {
            last = self.operand(dot, a)?;
            if last.truth() != is_and {
                self.at = at;
                return Ok(last);
            }
        }
        self.at = at;
        if let Some(f) = fin {
            last = f;
        }
        Ok(last)
    }

    fn tpl(&mut self, vals: &[Value]) -> R<Value> {
        let Value::Str(text) = &vals[0] else {
            return Err(self.fail(format!("wrong type for value; expected string; got {}", vals[0].type_name())));
        };
        if self.tpl_depth >= TPL_MAX_DEPTH {
            return Err(self.fail(format!(
                "error calling tpl: maximum recursion depth {TPL_MAX_DEPTH} exceeded in tpl function"
            )));
        }
        let name = self.tree.name.clone();
        let parsed = crate::parse::parse(&name, text, &|f| self.tmpl.has_function(f));
        let mut trees = match parsed {
            Ok(t) => t,
            Err(e) => return Err(self.fail(format!("error calling tpl: cannot parse template {text:?}: {e}"))),
        };
        for (k, v) in self.trees {
            if k != &self.tmpl.name {
                trees.entry(k.clone()).or_insert_with(|| v.clone());
            }
        }
        let Some(root) = trees.get(&name) else {
            return Ok(Value::str(""));
        };
        let data = vals[1].clone();
        let mut sub = State {
            tmpl: self.tmpl,
            trees: &trees,
            tree: root,
            opts: self.opts,
            out: String::new(),
            vars: vec![("$".to_string(), data.clone())],
            steps: &mut *self.steps,
            depth: self.depth + 1,
            tpl_depth: self.tpl_depth + 1,
            at: (Pos(0), String::new()),
        };
        match sub.walk(&data, &root.root) {
            Ok(()) => Ok(Value::str(sub.out.replace("<no value>", ""))),
            Err(Flow::Fail(Error::Limit { message })) => Err(Flow::Fail(Error::Limit { message })),
            Err(Flow::Fail(e)) => Err(self.fail(format!(
                "error calling tpl: error during tpl function execution for {text:?}: {e}"
            ))),
            Err(_) => Ok(Value::str(sub.out)),
        }
    }
}

fn field_type(v: &Value, fallback: &str) -> String {
    match v {
        Value::Str(_) | Value::Bool(_) | Value::Int(_) | Value::Float(_) | Value::List(_) => fallback.to_string(),
        other => other.type_name().to_string(),
    }
}

/// Runs the main template of `tmpl` on `data`.
pub(crate) fn execute(tmpl: &Template, data: Value, opts: &Options) -> Result<String, Error> {
    let Some(tree) = tmpl.trees.get(&tmpl.name) else {
        return Err(Error::Exec {
            message: format!("template: {}: {:?} is an incomplete or empty template", tmpl.name, tmpl.name),
        });
    };
    let mut steps = 0u64;
    let mut state = State {
        tmpl,
        trees: &tmpl.trees,
        tree,
        opts,
        out: String::new(),
        vars: vec![("$".to_string(), data.clone())],
        steps: &mut steps,
        depth: 0,
        tpl_depth: 0,
        at: (Pos(0), String::new()),
    };
    match state.walk(&data, &tree.root) {
        Ok(()) => Ok(state.out),
        Err(Flow::Fail(e)) => Err(e),
        Err(Flow::Break | Flow::Continue) => Ok(state.out),
    }
}

/// Data for execution: the JSON object, plus the namespaces of data functions.
pub(crate) fn data_value(tmpl: &Template, data: &serde_json::Value) -> Value {
    let v = Value::from_json(data);
    if tmpl.funcs.data.is_empty() {
        return v;
    }
    let mut m = match v {
        Value::Map(m) => Rc::try_unwrap(m).unwrap_or_else(|rc| (*rc).clone()),
        other => return other,
    };
    for (ns, fs) in &tmpl.funcs.data {
        let entries = fs.iter().map(|(k, f)| (k.clone(), Value::Func(f.clone()))).collect();
        m.insert(ns.clone(), Value::map(entries));
    }
    Value::map(m)
}
