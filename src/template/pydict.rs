//! Python's dict methods as jinja2 (ADK's Router expressions) sees them, for compiled
//! expressions that name one.
//!
//! jinja2 looks `x.get` up as an attribute first, so on a mapping it is always the bound
//! method `dict.get`, whatever keys the mapping has; `x['get']` is the key when the mapping
//! has it and the method otherwise. A method is defined, true, not none and equal to no
//! data, so `default` keeps it, `is defined` holds, and a result that is (or holds) one is
//! no JSON value: an error. minijinja has no methods on maps: [`rewrite`] turns `x.M` into
//! a lookup [`PyDict`] answers with the method, and [`wrap`] gives every mapping of a
//! context that lookup and the fallback of `x['M']`.

use minijinja::Value;
use minijinja::value::{Enumerator, Object, ObjectRepr};
use std::sync::Arc;

/// The methods of Python's dict.
pub const DICT_METHODS: &[&str] = &[
    "clear",
    "copy",
    "fromkeys",
    "get",
    "items",
    "keys",
    "pop",
    "popitem",
    "setdefault",
    "update",
    "values",
];

/// The prefix of the key [`rewrite`] writes for the attribute `.M`: no state key starts
/// with it.
const ATTRIBUTE: char = '\u{1}';

/// Whether `source` may name a dict method (then its contexts are [`wrap`]ped).
///
/// A method is reached as an attribute (`x.items`) or through a string key
/// (`x['items']`): a name outside strings, or a whole string, that is one. A string that
/// merely holds one (`'%s items'`, `'target'`) names none.
pub fn mentions(source: &str) -> bool {
    if !DICT_METHODS.iter().any(|m| source.contains(m)) {
        return false;
    }
    let is_method = |word: &str| DICT_METHODS.contains(&word);
    let mut chars = source.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if c == '\'' || c == '"' {
            let mut text = String::new();
            while let Some((_, d)) = chars.next() {
                if d == '\\' {
                    // An escape: the string is not plain; count it as naming one.
                    if chars.next().is_some() {
                        return true;
                    }
                } else if d == c {
                    break;
                } else {
                    text.push(d);
                }
            }
            if is_method(&text) {
                return true;
            }
        } else if c.is_alphabetic() || c == '_' {
            let end = super::jinja2::identifier_end(&mut chars, i, c);
            if is_method(&source[i..end]) {
                return true;
            }
        }
    }
    false
}

/// `source` with every attribute access `.M` to a dict method `M` written as a lookup of
/// the key `"\u{1}M"`, which a [`PyDict`] answers with the method; strings are left as
/// written.
pub fn rewrite(source: &str) -> std::borrow::Cow<'_, str> {
    if !DICT_METHODS
        .iter()
        .any(|m| source.contains(&format!(".{m}")))
    {
        return std::borrow::Cow::Borrowed(source);
    }
    let chars: Vec<char> = source.chars().collect();
    let mut out = String::with_capacity(source.len() + 16);
    let mut quote: Option<char> = None;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if let Some(q) = quote {
            out.push(c);
            if c == '\\' && i + 1 < chars.len() {
                out.push(chars[i + 1]);
                i += 1;
            } else if c == q {
                quote = None;
            }
            i += 1;
            continue;
        }
        if c == '\'' || c == '"' {
            quote = Some(c);
        } else if c == '.'
            && i > 0
            && (chars[i - 1].is_alphanumeric() || matches!(chars[i - 1], '_' | ')' | ']'))
        {
            let end = (i + 1..chars.len())
                .find(|&j| !(chars[j].is_alphanumeric() || chars[j] == '_'))
                .unwrap_or(chars.len());
            let name: String = chars[i + 1..end].iter().collect();
            if DICT_METHODS.contains(&name.as_str()) {
                out.push_str(&format!("['{ATTRIBUTE}{name}']"));
                i = end;
                continue;
            }
        }
        out.push(c);
        i += 1;
    }
    std::borrow::Cow::Owned(out)
}

/// `value` with every mapping in it (nested ones too) a [`PyDict`].
pub fn wrap(value: Value) -> Value {
    if let Some(obj) = value.as_object() {
        match obj.repr() {
            ObjectRepr::Map => {
                let entries = obj
                    .try_iter_pairs()
                    .into_iter()
                    .flatten()
                    .map(|(k, v)| (k, wrap(v)))
                    .collect();
                return Value::from_object(PyDict(entries));
            }
            ObjectRepr::Seq => {
                return Value::from(
                    obj.try_iter()
                        .into_iter()
                        .flatten()
                        .map(wrap)
                        .collect::<Vec<_>>(),
                );
            }
            _ => {}
        }
    }
    value
}

/// The name of the first method in `value` (a result), if it holds one.
pub fn method_in(value: &Value) -> Option<&'static str> {
    if let Some(m) = value.downcast_object_ref::<PyMethod>() {
        return Some(m.0);
    }
    let obj = value.as_object()?;
    match obj.repr() {
        ObjectRepr::Map => obj
            .try_iter_pairs()
            .into_iter()
            .flatten()
            .find_map(|(_, v)| method_in(&v)),
        ObjectRepr::Seq => obj
            .try_iter()
            .into_iter()
            .flatten()
            .find_map(|v| method_in(&v)),
        _ => None,
    }
}

/// A mapping with Python's dict methods (see the module's documentation).
#[derive(Debug)]
pub struct PyDict(Vec<(Value, Value)>);

impl Object for PyDict {
    fn repr(self: &Arc<Self>) -> ObjectRepr {
        ObjectRepr::Map
    }

    fn get_value(self: &Arc<Self>, key: &Value) -> Option<Value> {
        if let Some((_, v)) = self.0.iter().find(|(k, _)| k == key) {
            return Some(v.clone());
        }
        let name = key.as_str()?;
        let name = name.strip_prefix(ATTRIBUTE).unwrap_or(name);
        let method = DICT_METHODS.iter().find(|m| **m == name)?;
        Some(Value::from_object(PyMethod(method)))
    }

    fn enumerate(self: &Arc<Self>) -> Enumerator {
        Enumerator::Values(self.0.iter().map(|(k, _)| k.clone()).collect())
    }

    fn enumerator_len(self: &Arc<Self>) -> Option<usize> {
        Some(self.0.len())
    }
}

/// A bound dict method, as jinja2 gives it: defined, true, no data.
#[derive(Debug)]
pub struct PyMethod(&'static str);

impl Object for PyMethod {
    fn repr(self: &Arc<Self>) -> ObjectRepr {
        ObjectRepr::Plain
    }

    fn is_true(self: &Arc<Self>) -> bool {
        true
    }

    fn render(self: &Arc<Self>, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "<built-in method {} of dict object>", self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::rewrite;

    #[test]
    fn a_method_is_named_by_a_name_or_a_whole_string() {
        use super::mentions;
        for yes in [
            "state.items",
            "x['get']",
            "x[\"keys\"] | default(1)",
            "items",
            "'a\\'b' ~ state.x.pop",
        ] {
            assert!(mentions(yes), "{yes}");
        }
        for no in [
            "'%s items' % 3",
            "'target' in input",
            "state.budget",
            "input.getter",
            "'get it'",
        ] {
            assert!(!mentions(no), "{no}");
        }
    }
    use crate::template::jinja::Expression;
    use serde_json::json;

    #[test]
    fn attributes_named_like_dict_methods_are_rewritten() {
        assert_eq!(rewrite("state.count + 1"), "state.count + 1");
        assert_eq!(
            rewrite("state['items'] | length"),
            "state['items'] | length"
        );
        assert_eq!(rewrite("'a.items' ~ x"), "'a.items' ~ x");
        assert_eq!(rewrite("state.items"), "state['\u{1}items']");
    }

    #[test]
    fn dict_methods_are_jinja2s() {
        let ctx = json!({"state": {"items": [1, 2], "d": {"get": 5}}});
        let eval = |source: &str| Expression::compile(source).unwrap().eval(&ctx);
        // The key when the mapping has it, else the method: defined, true, no data.
        assert_eq!(eval("state['items'] | length").unwrap(), 2);
        assert_eq!(eval("state.d['get']").unwrap(), 5);
        assert_eq!(eval("state['get'] is defined").unwrap(), true);
        assert_eq!(eval("'y' if state['keys'] else 'n'").unwrap(), "y");
        assert_eq!(eval("state['get'] == 1").unwrap(), false);
        assert_eq!(eval("state['get'].x | default(3)").unwrap(), 3);
        // `default` keeps a method, and a result holding one is an error.
        assert!(eval("state['get'] | default(0)").is_err());
        assert!(eval("[state.d.get]").is_err());
        // An attribute is always the method, whatever keys the mapping has.
        assert!(eval("state.items | length").is_err());
        assert_eq!(eval("state.items is defined").unwrap(), true);
        // Mappings otherwise behave as before.
        assert_eq!(eval("state.d").unwrap(), json!({"get": 5}));
        assert_eq!(eval("state.d | string").unwrap(), "{'get': 5}");
        assert_eq!(eval("'get' in state.d").unwrap(), true);
    }
}
