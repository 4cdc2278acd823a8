//! Lua 5.1 patterns (`string.find`, `match`, `gmatch`, `gsub`) with a step budget.
//!
//! Our own code because the interpreter's are C functions: the instruction hook never fires
//! inside them, and a backtracking pattern (`string.find(("a"):rep(5000), ("a*"):rep(12) .. "b")`)
//! runs for hours under any instruction or time limit. This is a port of the matcher of Lua
//! 5.1's `lstrlib.c` (the semantics gopher-lua, Argo CD's interpreter, has too) that charges
//! every matching step to a budget and stops when it says so, and bounds its recursion.

/// Most captures in one pattern (Lua's `LUA_MAXCAPTURES`).
const MAX_CAPTURES: usize = 32;
/// Deepest recursion of the matcher (Lua 5.2's `MAXCCALLS`).
const MAX_DEPTH: usize = 200;
/// Characters that make a pattern more than a plain string.
const SPECIALS: &[u8] = b"^$*+?.([%-";

/// Why a match stopped without an answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum PatternError {
    /// The pattern is malformed (Lua's message).
    Malformed(String),
    /// The budget said stop (its message).
    Stopped(String),
}

/// Charged once per matching step; `Err(message)` stops the match.
pub(super) trait Budget {
    fn step(&mut self) -> Result<(), String>;
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum CapLen {
    Unfinished,
    Position,
    Len(usize),
}

/// One capture: a substring or a position (`()`), 0-based.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Capture {
    Text(usize, usize),
    Position(usize),
}

/// Where the matcher goes after one pattern item: on to the next item at `(s, p)` (Lua's
/// `goto init`), or out with the answer.
enum Item {
    Next(usize, usize),
    Done(Option<usize>),
}

struct State<'a, B: Budget> {
    src: &'a [u8],
    pat: &'a [u8],
    level: usize,
    capture: [(usize, CapLen); MAX_CAPTURES],
    depth: usize,
    budget: &'a mut B,
}

fn malformed(msg: &str) -> PatternError {
    PatternError::Malformed(msg.to_string())
}

impl<B: Budget> State<'_, B> {
    fn step(&mut self) -> Result<(), PatternError> {
        self.budget.step().map_err(PatternError::Stopped)
    }

    fn class_end(&self, mut p: usize) -> Result<usize, PatternError> {
        let c = self.pat[p];
        p += 1;
        if c == b'%' {
            if p >= self.pat.len() {
                return Err(malformed("malformed pattern (ends with '%')"));
            }
            return Ok(p + 1);
        }
        if c == b'[' {
            if self.pat.get(p) == Some(&b'^') {
                p += 1;
            }
            // Look for a ']' (the first one right after '[' or '[^' is a literal).
            loop {
                if p >= self.pat.len() {
                    return Err(malformed("malformed pattern (missing ']')"));
                }
                let c = self.pat[p];
                p += 1;
                if c == b'%' {
                    if p >= self.pat.len() {
                        return Err(malformed("malformed pattern (missing ']')"));
                    }
                    p += 1;
                }
                if self.pat.get(p) == Some(&b']') {
                    return Ok(p + 1);
                }
            }
        }
        Ok(p)
    }

    fn single_match(&self, s: usize, p: usize, ep: usize) -> bool {
        let Some(&c) = self.src.get(s) else {
            return false;
        };
        match self.pat[p] {
            b'.' => true,
            b'%' => match_class(c, self.pat[p + 1]),
            b'[' => match_bracket_class(c, &self.pat[p..ep - 1]),
            pc => pc == c,
        }
    }

    fn do_match(&mut self, s: usize, p: usize) -> Result<Option<usize>, PatternError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(malformed("pattern too complex"));
        }
        let r = self.match_inner(s, p);
        self.depth -= 1;
        r
    }

    fn match_inner(&mut self, mut s: usize, mut p: usize) -> Result<Option<usize>, PatternError> {
        loop {
            self.step()?;
            if p >= self.pat.len() {
                return Ok(Some(s));
            }
            let next = match self.pat[p] {
                b'(' => {
                    return if self.pat.get(p + 1) == Some(&b')') {
                        self.start_capture(s, p + 2, CapLen::Position)
                    } else {
                        self.start_capture(s, p + 1, CapLen::Unfinished)
                    };
                }
                b')' => return self.end_capture(s, p + 1),
                b'%' if self.pat.get(p + 1) == Some(&b'b') => self.balance_item(s, p)?,
                b'%' if self.pat.get(p + 1) == Some(&b'f') => self.frontier_item(s, p)?,
                b'%' if self.pat.get(p + 1).is_some_and(u8::is_ascii_digit) => {
                    self.back_reference_item(s, p)?
                }
                b'$' if p + 1 == self.pat.len() => {
                    return Ok((s == self.src.len()).then_some(s));
                }
                _ => self.single_item(s, p)?,
            };
            match next {
                Item::Next(next_s, next_p) => (s, p) = (next_s, next_p),
                Item::Done(res) => return Ok(res),
            }
        }
    }

    /// `%bxy` at `p`: a balanced run from `x` to `y`.
    fn balance_item(&mut self, s: usize, p: usize) -> Result<Item, PatternError> {
        Ok(match self.match_balance(s, p + 2)? {
            Some(next) => Item::Next(next, p + 4),
            None => Item::Done(None),
        })
    }

    /// `%f[set]` at `p`: the frontier where the previous character is not in the set and the
    /// current one is.
    fn frontier_item(&mut self, s: usize, p: usize) -> Result<Item, PatternError> {
        let p = p + 2;
        if self.pat.get(p) != Some(&b'[') {
            return Err(malformed("missing '[' after '%f' in pattern"));
        }
        let ep = self.class_end(p)?;
        let prev = if s == 0 { 0 } else { self.src[s - 1] };
        let cur = self.src.get(s).copied().unwrap_or(0);
        let class = &self.pat[p..ep - 1];
        if !match_bracket_class(prev, class) && match_bracket_class(cur, class) {
            return Ok(Item::Next(s, ep));
        }
        Ok(Item::Done(None))
    }

    /// `%1`–`%9` at `p`: the text of an earlier capture again.
    fn back_reference_item(&mut self, s: usize, p: usize) -> Result<Item, PatternError> {
        let l = usize::from(self.pat[p + 1] - b'0');
        Ok(match self.match_capture(s, l)? {
            Some(next) => Item::Next(next, p + 2),
            None => Item::Done(None),
        })
    }

    /// A single-character class at `p` with its quantifier (`?`, `*`, `+`, `-` or none).
    fn single_item(&mut self, s: usize, p: usize) -> Result<Item, PatternError> {
        let ep = self.class_end(p)?;
        let m = s < self.src.len() && self.single_match(s, p, ep);
        Ok(match self.pat.get(ep) {
            Some(b'?') => {
                if m && let Some(res) = self.do_match(s + 1, ep + 1)? {
                    return Ok(Item::Done(Some(res)));
                }
                Item::Next(s, ep + 1)
            }
            Some(b'*') => Item::Done(self.max_expand(s, p, ep)?),
            Some(b'+') => Item::Done(if m {
                self.max_expand(s + 1, p, ep)?
            } else {
                None
            }),
            Some(b'-') => Item::Done(self.min_expand(s, p, ep)?),
            _ if !m => Item::Done(None),
            _ => Item::Next(s + 1, ep),
        })
    }

    fn max_expand(&mut self, s: usize, p: usize, ep: usize) -> Result<Option<usize>, PatternError> {
        let mut i = 0;
        while self.single_match(s + i, p, ep) {
            self.step()?;
            i += 1;
        }
        loop {
            if let Some(res) = self.do_match(s + i, ep + 1)? {
                return Ok(Some(res));
            }
            if i == 0 {
                return Ok(None);
            }
            i -= 1;
        }
    }

    fn min_expand(
        &mut self,
        mut s: usize,
        p: usize,
        ep: usize,
    ) -> Result<Option<usize>, PatternError> {
        loop {
            if let Some(res) = self.do_match(s, ep + 1)? {
                return Ok(Some(res));
            }
            if self.single_match(s, p, ep) {
                s += 1;
            } else {
                return Ok(None);
            }
        }
    }

    fn start_capture(
        &mut self,
        s: usize,
        p: usize,
        what: CapLen,
    ) -> Result<Option<usize>, PatternError> {
        if self.level >= MAX_CAPTURES {
            return Err(malformed("too many captures"));
        }
        self.capture[self.level] = (s, what);
        self.level += 1;
        let res = self.do_match(s, p)?;
        if res.is_none() {
            self.level -= 1;
        }
        Ok(res)
    }

    fn end_capture(&mut self, s: usize, p: usize) -> Result<Option<usize>, PatternError> {
        let l = (0..self.level)
            .rev()
            .find(|&i| self.capture[i].1 == CapLen::Unfinished)
            .ok_or_else(|| malformed("invalid pattern capture"))?;
        self.capture[l].1 = CapLen::Len(s - self.capture[l].0);
        let res = self.do_match(s, p)?;
        if res.is_none() {
            self.capture[l].1 = CapLen::Unfinished;
        }
        Ok(res)
    }

    fn match_balance(&mut self, s: usize, p: usize) -> Result<Option<usize>, PatternError> {
        if p + 1 >= self.pat.len() {
            return Err(malformed("unbalanced pattern"));
        }
        let (open, close) = (self.pat[p], self.pat[p + 1]);
        if self.src.get(s) != Some(&open) {
            return Ok(None);
        }
        let mut cont = 1;
        let mut i = s + 1;
        while i < self.src.len() {
            self.step()?;
            let c = self.src[i];
            if c == close {
                cont -= 1;
                if cont == 0 {
                    return Ok(Some(i + 1));
                }
            } else if c == open {
                cont += 1;
            }
            i += 1;
        }
        Ok(None)
    }

    fn match_capture(&mut self, s: usize, l: usize) -> Result<Option<usize>, PatternError> {
        let l = l
            .checked_sub(1)
            .filter(|&l| l < self.level)
            .ok_or_else(|| malformed("invalid capture index"))?;
        let (start, CapLen::Len(len)) = self.capture[l] else {
            return Err(malformed("invalid capture index"));
        };
        for _ in 0..len {
            self.step()?;
        }
        let cap = &self.src[start..start + len];
        Ok((self.src.len() - s >= len && &self.src[s..s + len] == cap).then_some(s + len))
    }

    fn captures(
        &self,
        s: usize,
        e: usize,
        whole_if_none: bool,
    ) -> Result<Vec<Capture>, PatternError> {
        if self.level == 0 && whole_if_none {
            return Ok(vec![Capture::Text(s, e)]);
        }
        (0..self.level)
            .map(|i| match self.capture[i] {
                (_, CapLen::Unfinished) => Err(malformed("unfinished capture")),
                (start, CapLen::Position) => Ok(Capture::Position(start)),
                (start, CapLen::Len(len)) => Ok(Capture::Text(start, start + len)),
            })
            .collect()
    }
}

fn match_class(c: u8, class: u8) -> bool {
    let res = match class.to_ascii_lowercase() {
        b'a' => c.is_ascii_alphabetic(),
        b'c' => c.is_ascii_control(),
        b'd' => c.is_ascii_digit(),
        b'l' => c.is_ascii_lowercase(),
        b'p' => c.is_ascii_punctuation(),
        b's' => c.is_ascii_whitespace() || c == 0x0b,
        b'u' => c.is_ascii_uppercase(),
        b'w' => c.is_ascii_alphanumeric(),
        b'x' => c.is_ascii_hexdigit(),
        b'z' => c == 0,
        _ => return class == c,
    };
    if class.is_ascii_uppercase() {
        !res
    } else {
        res
    }
}

/// `class` is the bracket class from its '[' to just before its ']'.
fn match_bracket_class(c: u8, class: &[u8]) -> bool {
    let mut p = 1;
    let mut negate = false;
    if class.get(1) == Some(&b'^') {
        negate = true;
        p = 2;
    }
    while p < class.len() {
        if class[p] == b'%' && p + 1 < class.len() {
            p += 1;
            if match_class(c, class[p]) {
                return !negate;
            }
        } else if class.get(p + 1) == Some(&b'-') && p + 2 < class.len() {
            if class[p] <= c && c <= class[p + 2] {
                return !negate;
            }
            p += 2;
        } else if class[p] == c {
            return !negate;
        }
        p += 1;
    }
    negate
}

/// A successful match: where it is, and its captures (the whole match when the pattern has
/// none).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Found {
    pub(super) start: usize,
    pub(super) end: usize,
    pub(super) captures: Vec<Capture>,
    /// Whether the pattern had captures of its own.
    pub(super) explicit: bool,
}

/// Lua's `posrelat` then clamp: a 1-based (negative: from the end) start to a 0-based index.
pub(super) fn start_index(init: i64, len: usize) -> usize {
    let len_i = i64::try_from(len).unwrap_or(i64::MAX);
    let pos = if init < 0 { len_i + init + 1 } else { init };
    usize::try_from(pos.max(1) - 1).map_or(len, |p| p.min(len))
}

/// `string.find` / `string.match`: the first match at or after `init` (0-based). A plain
/// search when `plain`, or when the pattern has no special characters and `find` is set.
pub(super) fn find<B: Budget>(
    src: &[u8],
    pat: &[u8],
    init: usize,
    plain: bool,
    budget: &mut B,
) -> Result<Option<Found>, PatternError> {
    if plain {
        return plain_find(src, pat, init, budget);
    }
    let (anchor, pat_start) = if pat.first() == Some(&b'^') {
        (true, 1)
    } else {
        (false, 0)
    };
    let pat = &pat[pat_start..];
    let mut s = init;
    loop {
        let mut st = State {
            src,
            pat,
            level: 0,
            capture: [(0, CapLen::Unfinished); MAX_CAPTURES],
            depth: 0,
            budget,
        };
        if let Some(e) = st.do_match(s, 0)? {
            let explicit = st.level > 0;
            let captures = st.captures(s, e, true)?;
            return Ok(Some(Found {
                start: s,
                end: e,
                captures,
                explicit,
            }));
        }
        s += 1;
        if anchor || s > src.len() {
            return Ok(None);
        }
    }
}

/// Whether `find` on this pattern is a plain search (Lua checks for special characters).
pub(super) fn is_plain(pat: &[u8]) -> bool {
    !pat.iter().any(|c| SPECIALS.contains(c))
}

fn plain_find<B: Budget>(
    src: &[u8],
    pat: &[u8],
    init: usize,
    budget: &mut B,
) -> Result<Option<Found>, PatternError> {
    if pat.is_empty() {
        return Ok(Some(Found {
            start: init,
            end: init,
            captures: Vec::new(),
            explicit: false,
        }));
    }
    let mut s = init;
    while s + pat.len() <= src.len() {
        // One step per candidate and per compared byte.
        for _ in 0..=pat.len().min(64) / 8 {
            budget.step().map_err(PatternError::Stopped)?;
        }
        if &src[s..s + pat.len()] == pat {
            return Ok(Some(Found {
                start: s,
                end: s + pat.len(),
                captures: Vec::new(),
                explicit: false,
            }));
        }
        s += 1;
    }
    Ok(None)
}

/// One match attempt exactly at `s` (for `gmatch` and `gsub`, which walk the subject
/// themselves).
pub(super) fn match_at<B: Budget>(
    src: &[u8],
    pat: &[u8],
    s: usize,
    budget: &mut B,
) -> Result<Option<Found>, PatternError> {
    let mut st = State {
        src,
        pat,
        level: 0,
        capture: [(0, CapLen::Unfinished); MAX_CAPTURES],
        depth: 0,
        budget,
    };
    match st.do_match(s, 0)? {
        Some(e) => {
            let explicit = st.level > 0;
            let captures = st.captures(s, e, true)?;
            Ok(Some(Found {
                start: s,
                end: e,
                captures,
                explicit,
            }))
        }
        None => Ok(None),
    }
}

#[cfg(test)]
mod tests;
