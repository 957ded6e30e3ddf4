//! [`SparseMap`]: a JSON object that takes no room in an event until a key is set.

use super::StateMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;
use std::ops::{Deref, DerefMut};
use std::sync::LazyLock;

/// A JSON object most events leave empty (ADK's `stateDelta`, `requestedAuthConfigs` and
/// `requestedToolConfirmations`): one pointer inline, the map allocated when the first key
/// is set. It serializes as the object it holds, `{}` when empty, and an empty map equals
/// an unset one. It reads as a [`StateMap`] (`Deref`, an empty one when unset); writing
/// through `DerefMut` allocates the map.
#[derive(Debug, Clone, Default)]
pub struct SparseMap(Option<Box<StateMap>>);

/// What an unset map reads as.
static EMPTY: LazyLock<StateMap> = LazyLock::new(StateMap::new);

impl Deref for SparseMap {
    type Target = StateMap;

    fn deref(&self) -> &StateMap {
        self.0.as_deref().unwrap_or(&EMPTY)
    }
}

impl DerefMut for SparseMap {
    fn deref_mut(&mut self) -> &mut StateMap {
        self.map_mut()
    }
}

impl<'a> IntoIterator for &'a SparseMap {
    type Item = (&'a String, &'a Value);
    type IntoIter = serde_json::map::Iter<'a>;

    fn into_iter(self) -> Self::IntoIter {
        self.deref().iter()
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
        self.0.as_ref().is_none_or(|m| m.is_empty())
    }

    /// The number of keys.
    pub fn len(&self) -> usize {
        self.0.as_ref().map_or(0, |m| m.len())
    }

    /// The value of `key`, if set.
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.0.as_ref()?.get(key)
    }

    /// Sets `key`, returning its previous value.
    pub fn insert(&mut self, key: String, value: Value) -> Option<Value> {
        self.map_mut().insert(key, value)
    }

    /// The keys and values, in insertion order.
    pub fn iter(&self) -> impl Iterator<Item = (&String, &Value)> {
        self.0.iter().flat_map(|m| m.iter())
    }

    /// The map itself, allocated if it was not (with room for one key: most deltas hold
    /// one, and an empty `serde_json` map grows to room for three on its first key).
    pub fn map_mut(&mut self) -> &mut StateMap {
        self.0
            .get_or_insert_with(|| Box::new(StateMap::with_capacity(1)))
    }

    /// Keeps the keys `keep` accepts (nothing is allocated for an unset map).
    pub fn retain(&mut self, keep: impl FnMut(&String, &mut Value) -> bool) {
        if let Some(map) = &mut self.0 {
            map.retain(keep);
        }
    }

    /// The map, taken out (empty when unset).
    pub fn into_map(self) -> StateMap {
        self.0.map(|m| *m).unwrap_or_default()
    }

    /// Moves every key of `other` into this map (a key already here takes the new value).
    pub fn extend(&mut self, other: impl Into<SparseMap>) {
        let Some(other) = other.into().0.filter(|m| !m.is_empty()) else {
            return;
        };
        match &mut self.0 {
            Some(map) => map.extend(*other),
            None => self.0 = Some(other),
        }
    }
}

impl From<StateMap> for SparseMap {
    fn from(map: StateMap) -> Self {
        SparseMap((!map.is_empty()).then(|| Box::new(map)))
    }
}

impl PartialEq for SparseMap {
    fn eq(&self, other: &Self) -> bool {
        match (&self.0, &other.0) {
            (Some(a), Some(b)) => a == b,
            (Some(m), None) | (None, Some(m)) => m.is_empty(),
            (None, None) => true,
        }
    }
}

impl Serialize for SparseMap {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match &self.0 {
            Some(map) => map.serialize(serializer),
            None => StateMap::new().serialize(serializer),
        }
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
        assert_eq!(empty, SparseMap(Some(Box::default())));
        let back: SparseMap = serde_json::from_str("{}").unwrap();
        assert_eq!(back.0, None);
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
    }
}
