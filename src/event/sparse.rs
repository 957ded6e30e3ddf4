//! [`SparseMap`]: a JSON object that takes no room in an event until a key is set, and no
//! index table while it holds one key.

use super::StateMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

/// A JSON object most events leave empty (ADK's `stateDelta`, `requestedAuthConfigs` and
/// `requestedToolConfirmations`): one pointer inline, nothing allocated until the first key
/// is set, and the usual delta of one key kept as that key and value alone (one 112-byte
/// chunk instead of a map, its entry and its index table: ~270 bytes). It serializes as the
/// object it holds, `{}` when empty, in insertion order, and an empty map equals an unset
/// one.
#[derive(Debug, Clone, Default)]
pub struct SparseMap(Option<Box<Keys>>);

/// The keys of a [`SparseMap`] that has been set.
#[derive(Debug, Clone)]
enum Keys {
    /// One key and its value.
    One(String, Value),
    /// Any number of keys (two or more, or none after [`SparseMap::retain`]).
    Many(StateMap),
}

/// The keys and values of a [`SparseMap`], in insertion order.
pub struct Iter<'a>(IterRepr<'a>);

enum IterRepr<'a> {
    One(Option<(&'a String, &'a Value)>),
    Many(serde_json::map::Iter<'a>),
}

impl<'a> Iterator for Iter<'a> {
    type Item = (&'a String, &'a Value);

    fn next(&mut self) -> Option<Self::Item> {
        match &mut self.0 {
            IterRepr::One(one) => one.take(),
            IterRepr::Many(it) => it.next(),
        }
    }
}

impl<'a> IntoIterator for &'a SparseMap {
    type Item = (&'a String, &'a Value);
    type IntoIter = Iter<'a>;

    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl IntoIterator for SparseMap {
    type Item = (String, Value);
    type IntoIter = serde_json::map::IntoIter;

    fn into_iter(self) -> Self::IntoIter {
        self.into_map().into_iter()
    }
}

impl SparseMap {
    /// An empty map (nothing allocated).
    pub fn new() -> Self {
        SparseMap(None)
    }

    /// Whether the map has no key.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The number of keys.
    pub fn len(&self) -> usize {
        match self.0.as_deref() {
            None => 0,
            Some(Keys::One(..)) => 1,
            Some(Keys::Many(m)) => m.len(),
        }
    }

    /// The value of `key`, if set.
    pub fn get(&self, key: &str) -> Option<&Value> {
        match self.0.as_deref()? {
            Keys::One(k, v) => (k == key).then_some(v),
            Keys::Many(m) => m.get(key),
        }
    }

    /// Whether `key` is set.
    pub fn contains_key(&self, key: &str) -> bool {
        self.get(key).is_some()
    }

    /// Sets `key`, returning its previous value.
    pub fn insert(&mut self, key: String, value: Value) -> Option<Value> {
        let Some(keys) = self.0.as_deref_mut() else {
            self.0 = Some(Box::new(Keys::One(key, value)));
            return None;
        };
        match keys {
            Keys::One(k, v) if *k == key => Some(std::mem::replace(v, value)),
            Keys::One(..) => {
                let Keys::One(k, v) = std::mem::replace(keys, Keys::Many(StateMap::new())) else {
                    unreachable!("matched above")
                };
                let mut map = StateMap::with_capacity(2);
                map.insert(k, v);
                map.insert(key, value);
                *keys = Keys::Many(map);
                None
            }
            Keys::Many(m) => m.insert(key, value),
        }
    }

    /// Sets `key` unless it is already set (`entry(key).or_insert(value)`).
    pub fn insert_if_absent(&mut self, key: String, value: Value) {
        if !self.contains_key(&key) {
            self.insert(key, value);
        }
    }

    /// The keys and values, in insertion order.
    pub fn iter(&self) -> Iter<'_> {
        Iter(match self.0.as_deref() {
            None => IterRepr::One(None),
            Some(Keys::One(k, v)) => IterRepr::One(Some((k, v))),
            Some(Keys::Many(m)) => IterRepr::Many(m.iter()),
        })
    }

    /// The keys, in insertion order.
    pub fn keys(&self) -> impl Iterator<Item = &String> {
        self.iter().map(|(k, _)| k)
    }

    /// Keeps the keys `keep` accepts (nothing is allocated for an unset map).
    pub fn retain(&mut self, mut keep: impl FnMut(&String, &mut Value) -> bool) {
        let drop_one = match self.0.as_deref_mut() {
            None => false,
            Some(Keys::One(k, v)) => !keep(k, v),
            Some(Keys::Many(m)) => {
                m.retain(keep);
                false
            }
        };
        if drop_one {
            self.0 = None;
        }
    }

    /// The map, taken out (empty when unset).
    pub fn into_map(self) -> StateMap {
        match self.0.map(|keys| *keys) {
            None => StateMap::new(),
            Some(Keys::One(k, v)) => {
                let mut map = StateMap::with_capacity(1);
                map.insert(k, v);
                map
            }
            Some(Keys::Many(m)) => m,
        }
    }

    /// Moves every key of `other` into this map (a key already here takes the new value).
    pub fn extend(&mut self, other: impl Into<SparseMap>) {
        let other = other.into();
        if other.is_empty() {
            return;
        }
        if self.is_empty() {
            *self = other;
            return;
        }
        for (k, v) in other {
            self.insert(k, v);
        }
    }
}

impl From<StateMap> for SparseMap {
    fn from(map: StateMap) -> Self {
        match map.len() {
            0 => SparseMap(None),
            1 => {
                let mut keys = map.into_iter();
                let (k, v) = keys.next().expect("one key");
                SparseMap(Some(Box::new(Keys::One(k, v))))
            }
            _ => SparseMap(Some(Box::new(Keys::Many(map)))),
        }
    }
}

impl PartialEq for SparseMap {
    /// As JSON objects compare: the same keys with equal values, in any order.
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len() && self.iter().all(|(k, v)| other.get(k) == Some(v))
    }
}

impl Serialize for SparseMap {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_map(self.iter())
    }
}

impl<'de> Deserialize<'de> for SparseMap {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        StateMap::deserialize(deserializer).map(SparseMap::from)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn empty_serializes_as_an_object_and_equals_an_allocated_empty_map() {
        let empty = SparseMap::new();
        assert_eq!(serde_json::to_string(&empty).unwrap(), "{}");
        assert_eq!(
            empty,
            SparseMap(Some(Box::new(Keys::Many(StateMap::new()))))
        );
        let back: SparseMap = serde_json::from_str("{}").unwrap();
        assert!(back.0.is_none());
    }

    #[test]
    fn one_key_is_kept_without_a_map() {
        let mut m = SparseMap::new();
        m.insert("answer".into(), json!("42"));
        assert!(matches!(m.0.as_deref(), Some(Keys::One(..))));
        assert_eq!(m.insert("answer".into(), json!("43")), Some(json!("42")));
        assert_eq!(m.len(), 1);
        assert_eq!(serde_json::to_string(&m).unwrap(), r#"{"answer":"43"}"#);
        let back: SparseMap = serde_json::from_str(r#"{"answer":"43"}"#).unwrap();
        assert!(matches!(back.0.as_deref(), Some(Keys::One(..))));
        assert_eq!(back, m);
        m.insert_if_absent("answer".into(), json!(0));
        assert_eq!(m.get("answer"), Some(&json!("43")));
        m.retain(|_, _| false);
        assert!(m.0.is_none());
        assert!(std::mem::size_of::<Keys>() <= 104, "one 112-byte chunk");
    }

    #[test]
    fn keys_round_trip_in_order_and_extend_overwrites() {
        let mut m = SparseMap::new();
        m.insert("b".into(), json!(1));
        m.insert("a".into(), json!({"x": [1, 2]}));
        let text = serde_json::to_string(&m).unwrap();
        assert_eq!(text, r#"{"b":1,"a":{"x":[1,2]}}"#);
        let back: SparseMap = serde_json::from_str(&text).unwrap();
        assert_eq!(back, m);
        let mut other = SparseMap::new();
        other.insert("b".into(), json!(2));
        m.extend(other);
        assert_eq!(m.get("b"), Some(&json!(2)));
        assert_eq!(m.len(), 2);
        assert_eq!(m.keys().collect::<Vec<_>>(), ["b", "a"]);
        let mut one = SparseMap::new();
        one.insert("c".into(), json!(3));
        one.extend(m);
        assert_eq!(
            serde_json::to_string(&one).unwrap(),
            r#"{"c":3,"b":2,"a":{"x":[1,2]}}"#
        );
    }
}
