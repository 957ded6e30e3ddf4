//! The subset's tokens and grammar, with minijinja's precedence: `a if c else b`, `or`,
//! `and`, `not`, one comparison, `+`/`-`, `~`, then a primary with its lookups, filters
//! and tests. Anything else is `None`: no native form.

use super::{Cmp, Expr};
use serde_json::Value;

#[derive(Debug, Clone, PartialEq)]
enum Tok<'s> {
    Ident(&'s str),
    Str(&'s str),
    Int(i64),
    Float(f64),
    Punct(&'static str),
}

const PUNCT: &[&str] = &[
    "==", "!=", "<=", ">=", "<", ">", "+", "-", "~", "%", "//", "/", "*", "|", ".", ",", ":", "(",
    ")", "[", "]", "{", "}",
];

/// The tokens of `src`, or `None` for anything outside the subset (escapes in strings,
/// floats with `_`, non-ASCII outside strings, other operators).
fn tokenize(src: &str) -> Option<Vec<Tok<'_>>> {
    let bytes = src.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        if matches!(c, b' ' | b'\t' | b'\n' | b'\r') {
            i += 1;
        } else if c == b'\'' || c == b'"' {
            let end = src[i + 1..].find(c as char)? + i + 1;
            let text = &src[i + 1..end];
            if text.contains('\\') {
                return None;
            }
            out.push(Tok::Str(text));
            i = end + 1;
        } else if c.is_ascii_digit() {
            let mut j = i;
            while j < bytes.len() && bytes[j].is_ascii_digit() {
                j += 1;
            }
            let digits = |mut k: usize| {
                let from = k;
                while k < bytes.len() && bytes[k].is_ascii_digit() {
                    k += 1;
                }
                (k > from).then_some(k)
            };
            // A float: `1.5`, `1e-05`, `2.5E3` (no `_`).
            let mut float = false;
            if bytes.get(j) == Some(&b'.') && bytes.get(j + 1).is_some_and(u8::is_ascii_digit) {
                j = digits(j + 1)?;
                float = true;
            }
            if matches!(bytes.get(j), Some(b'e' | b'E')) {
                let k = j + 1 + usize::from(matches!(bytes.get(j + 1), Some(b'+' | b'-')));
                if let Some(end) = digits(k) {
                    j = end;
                    float = true;
                }
            }
            if j < bytes.len()
                && (bytes[j].is_ascii_alphanumeric() || matches!(bytes[j], b'_' | b'.'))
            {
                return None;
            }
            if float {
                let f: f64 = src[i..j].parse().ok()?;
                out.push(Tok::Float(f.is_finite().then_some(f)?));
                i = j;
                continue;
            }
            if j - i > 1 && c == b'0' {
                return None;
            }
            out.push(Tok::Int(src[i..j].parse().ok()?));
            i = j;
        } else if c.is_ascii_alphabetic() || c == b'_' {
            let mut j = i;
            while j < bytes.len() && (bytes[j].is_ascii_alphanumeric() || bytes[j] == b'_') {
                j += 1;
            }
            if j < bytes.len() && !bytes[j].is_ascii() {
                return None;
            }
            out.push(Tok::Ident(&src[i..j]));
            i = j;
        } else {
            let p = PUNCT.iter().find(|p| src[i..].starts_with(**p))?;
            // `**`, `//`, `=` and the like are other operators.
            let next = bytes.get(i + p.len()).copied();
            if matches!(next, Some(b'=')) && !matches!(*p, "==" | "!=" | "<=" | ">=")
                || (*p == "*" && next == Some(b'*'))
            {
                return None;
            }
            out.push(Tok::Punct(p));
            i += p.len();
        }
    }
    Some(out)
}

/// Parses `src`; `None` when it is outside the subset.
pub(crate) fn parse(src: &str) -> Option<Expr> {
    let toks = tokenize(src)?;
    let mut p = Parser { toks, at: 0 };
    let e = p.expr(0)?;
    (p.at == p.toks.len()).then_some(e)
}

struct Parser<'s> {
    toks: Vec<Tok<'s>>,
    at: usize,
}

impl<'s> Parser<'s> {
    fn peek(&self) -> Option<&Tok<'s>> {
        self.toks.get(self.at)
    }

    fn eat(&mut self, t: &Tok<'_>) -> bool {
        if self.peek() == Some(t) {
            self.at += 1;
            true
        } else {
            false
        }
    }

    fn word(&mut self, w: &str) -> bool {
        self.eat(&Tok::Ident(w))
    }

    fn punct(&mut self, p: &'static str) -> bool {
        self.eat(&Tok::Punct(p))
    }

    /// `or ['if' or 'else' expr]`; nested deeper than 64 is left to minijinja.
    fn expr(&mut self, depth: usize) -> Option<Expr> {
        if depth > 64 {
            return None;
        }
        let d = depth + 1;
        let value = self.or(d)?;
        if !self.word("if") {
            return Some(value);
        }
        let cond = self.or(d)?;
        if !self.word("else") {
            return None;
        }
        let other = self.expr(d)?;
        Some(Expr::If(Box::new(cond), Box::new(value), Box::new(other)))
    }

    fn or(&mut self, d: usize) -> Option<Expr> {
        let mut e = self.and(d)?;
        while self.word("or") {
            e = Expr::Or(Box::new(e), Box::new(self.and(d)?));
        }
        Some(e)
    }

    fn and(&mut self, d: usize) -> Option<Expr> {
        let mut e = self.not(d)?;
        while self.word("and") {
            e = Expr::And(Box::new(e), Box::new(self.not(d)?));
        }
        Some(e)
    }

    fn not(&mut self, d: usize) -> Option<Expr> {
        if d > 64 {
            return None;
        }
        if self.word("not") {
            return Some(Expr::Not(Box::new(self.not(d + 1)?)));
        }
        self.compare(d)
    }

    fn compare(&mut self, d: usize) -> Option<Expr> {
        let left = self.math(d)?;
        let op = match self.peek() {
            Some(Tok::Punct("==")) => Some(Cmp::Eq),
            Some(Tok::Punct("!=")) => Some(Cmp::Ne),
            Some(Tok::Punct("<")) => Some(Cmp::Lt),
            Some(Tok::Punct("<=")) => Some(Cmp::Le),
            Some(Tok::Punct(">")) => Some(Cmp::Gt),
            Some(Tok::Punct(">=")) => Some(Cmp::Ge),
            _ => None,
        };
        let e = if let Some(op) = op {
            self.at += 1;
            Expr::Cmp(op, Box::new(left), Box::new(self.math(d)?))
        } else if self.word("in") {
            Expr::In(Box::new(left), Box::new(self.math(d)?))
        } else if self.peek() == Some(&Tok::Ident("not"))
            && self.toks.get(self.at + 1) == Some(&Tok::Ident("in"))
        {
            self.at += 2;
            Expr::Not(Box::new(Expr::In(Box::new(left), Box::new(self.math(d)?))))
        } else {
            return Some(left);
        };
        // Chained comparisons are minijinja's.
        match self.peek() {
            Some(Tok::Punct("==" | "!=" | "<" | "<=" | ">" | ">=")) => None,
            Some(Tok::Ident("in" | "not")) => None,
            _ => Some(e),
        }
    }

    fn math(&mut self, d: usize) -> Option<Expr> {
        let mut e = self.concat(d)?;
        loop {
            if self.punct("+") {
                e = Expr::Add(Box::new(e), Box::new(self.concat(d)?));
            } else if self.punct("-") {
                e = Expr::Sub(Box::new(e), Box::new(self.concat(d)?));
            } else {
                return Some(e);
            }
        }
    }

    fn concat(&mut self, d: usize) -> Option<Expr> {
        let mut e = self.term(d)?;
        while self.punct("~") {
            e = Expr::Concat(Box::new(e), Box::new(self.term(d)?));
        }
        Some(e)
    }

    /// `*`, `/`, `//` and `%`, which bind tighter than `~` (jinja2's order).
    fn term(&mut self, d: usize) -> Option<Expr> {
        let mut e = self.unary(d)?;
        loop {
            let op = match self.peek() {
                Some(Tok::Punct("%")) => None,
                Some(Tok::Punct("*")) => Some(super::Arith::Mul),
                Some(Tok::Punct("/")) => Some(super::Arith::Div),
                Some(Tok::Punct("//")) => Some(super::Arith::FloorDiv),
                _ => return Some(e),
            };
            self.at += 1;
            let right = Box::new(self.unary(d)?);
            e = match op {
                None => Expr::Mod(Box::new(e), right),
                Some(op) => Expr::Arith(op, Box::new(e), right),
            };
        }
    }

    /// A primary, its `.name` and `[...]` lookups, then its filters and tests.
    fn unary(&mut self, d: usize) -> Option<Expr> {
        let mut e = self.primary(d)?;
        loop {
            if self.punct(".") {
                match self.peek()? {
                    Tok::Ident(name) => {
                        e = Expr::Attr(Box::new(e), (*name).to_owned());
                        self.at += 1;
                    }
                    _ => return None,
                }
            } else if self.punct("[") {
                match self.peek()? {
                    Tok::Str(key) => e = Expr::Attr(Box::new(e), (*key).to_owned()),
                    Tok::Int(i) => e = Expr::Index(Box::new(e), usize::try_from(*i).ok()?),
                    _ => return None,
                }
                self.at += 1;
                if !self.punct("]") {
                    return None;
                }
            } else {
                break;
            }
        }
        loop {
            if self.punct("|") {
                let Some(Tok::Ident(name)) = self.peek().cloned() else {
                    return None;
                };
                self.at += 1;
                e = match name {
                    "default" | "d" => {
                        let fallback = if self.punct("(") {
                            let arg = self.expr(d)?;
                            if !self.punct(")") {
                                return None;
                            }
                            arg
                        } else {
                            Expr::Const(Value::String(String::new()))
                        };
                        Expr::Default(Box::new(e), Box::new(fallback))
                    }
                    "upper" => Expr::Upper(Box::new(e)),
                    "lower" => Expr::Lower(Box::new(e)),
                    "length" => Expr::Length(Box::new(e)),
                    "int" => Expr::Int(Box::new(e)),
                    _ => return None,
                };
                if name != "default" && name != "d" && self.peek() == Some(&Tok::Punct("(")) {
                    return None;
                }
            } else if self.word("is") {
                let negated = self.word("not");
                let Some(Tok::Ident(name)) = self.peek().cloned() else {
                    return None;
                };
                self.at += 1;
                // minijinja reads an argument after a test name; none here.
                match self.peek() {
                    None | Some(Tok::Punct(")" | "]" | "}" | "," | ":" | "|")) => {}
                    Some(Tok::Ident("and" | "or" | "else" | "is")) => {}
                    _ => return None,
                }
                let test = match name {
                    "defined" => Expr::Defined(Box::new(e)),
                    "undefined" => Expr::Not(Box::new(Expr::Defined(Box::new(e)))),
                    "none" => Expr::IsNone(Box::new(e)),
                    _ => return None,
                };
                e = if negated {
                    Expr::Not(Box::new(test))
                } else {
                    test
                };
            } else {
                return Some(e);
            }
        }
    }

    fn primary(&mut self, d: usize) -> Option<Expr> {
        let tok = self.peek()?.clone();
        self.at += 1;
        Some(match tok {
            Tok::Ident("true" | "True") => Expr::Const(Value::Bool(true)),
            Tok::Ident("false" | "False") => Expr::Const(Value::Bool(false)),
            Tok::Ident("none" | "None") => Expr::Const(Value::Null),
            Tok::Ident("input") => Expr::Input,
            Tok::Ident("state") => Expr::State,
            Tok::Ident(_) => return None,
            // Adjacent strings are joined by minijinja.
            Tok::Str(_) if matches!(self.peek(), Some(Tok::Str(_))) => return None,
            Tok::Str(s) => Expr::Const(Value::String(s.to_owned())),
            Tok::Int(i) => Expr::Const(Value::from(i)),
            Tok::Float(f) => Expr::Const(Value::from(f)),
            Tok::Punct("(") => {
                let e = self.expr(d)?;
                if self.punct(")") {
                    return Some(e);
                }
                // A tuple: `(a, b)`, `(a,)`.
                let mut items = vec![e];
                while self.punct(",") {
                    if self.punct(")") {
                        return Some(Expr::Tuple(items));
                    }
                    items.push(self.expr(d)?);
                }
                if !self.punct(")") {
                    return None;
                }
                Expr::Tuple(items)
            }
            Tok::Punct("[") => {
                let mut items = Vec::new();
                while !self.punct("]") {
                    if !items.is_empty() && !self.punct(",") {
                        return None;
                    }
                    if self.punct("]") {
                        break;
                    }
                    items.push(self.expr(d)?);
                }
                Expr::List(items)
            }
            Tok::Punct("{") => {
                let mut entries: Vec<(String, Expr)> = Vec::new();
                while !self.punct("}") {
                    if !entries.is_empty() && !self.punct(",") {
                        return None;
                    }
                    if self.punct("}") {
                        break;
                    }
                    let Some(Tok::Str(key)) = self.peek().cloned() else {
                        return None;
                    };
                    self.at += 1;
                    if !self.punct(":") {
                        return None;
                    }
                    let value = self.expr(d)?;
                    // A key written twice is minijinja's to resolve.
                    if entries.iter().any(|(k, _)| k == key) {
                        return None;
                    }
                    entries.push((key.to_owned(), value));
                }
                Expr::Map(entries)
            }
            Tok::Punct(_) => return None,
        })
    }
}
