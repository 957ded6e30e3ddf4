//! Where each value of a parsed YAML document is written: a [`SpanIndex`] from JSON
//! pointer to line and column (filled by [`super::yaml`] as it converts the document), with
//! what YAML 1.1 and YAML 1.2 read differently there.

use serde_json::Value;
use std::collections::HashMap;

/// A 1-based line and column.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Pos {
    /// Line, from 1.
    pub line: usize,
    /// Column, from 1, in characters.
    pub col: usize,
}

/// Positions of the values and mapping keys of one document, by JSON pointer.
#[derive(Debug, Default, Clone)]
pub struct SpanIndex {
    pub(super) values: HashMap<String, Pos>,
    pub(super) keys: HashMap<String, Pos>,
    /// Mapping keys that are not strings (`1:`, `true:`), as the scalar they are, by the
    /// pointer of their value: JSON keys are strings, routing labels keep their type.
    pub(super) typed_keys: HashMap<String, Value>,
    /// Where unquoted scalars that YAML 1.1 (PyYAML) reads as booleans but YAML 1.2 as
    /// strings (`yes`, `No`, `on`, `OFF`, ...) start.
    pub(super) yaml11_booleans: HashMap<(usize, usize), String>,
    /// Where unquoted scalars that YAML 1.1 and YAML 1.2 read as different integers (or
    /// one as an integer, the other as a string), or PyYAML as a date and YAML 1.2 as a
    /// string, start: the scalar as written, PyYAML's reading and YAML 1.2's.
    pub(super) yaml11_integers: HashMap<(usize, usize), Yaml11Integer>,
    /// The aliases of mappings and lists (`*node`) in the text, as written, with where.
    pub(super) aliases: Vec<(Pos, String)>,
    /// Floats as written (`1e20`, `.inf`, `99999999999999999999`: an integer past 64
    /// bits), by where they start: JSON shows them otherwise, or not at all.
    pub(super) floats: HashMap<(usize, usize), String>,
}

impl SpanIndex {
    /// The position of the value at `pointer`, or of its nearest ancestor that has one.
    pub fn value(&self, pointer: &str) -> Pos {
        let mut p = pointer;
        loop {
            if let Some(pos) = self.values.get(p) {
                return *pos;
            }
            match p.rfind('/') {
                Some(i) => p = &p[..i],
                None => return Pos { line: 1, col: 1 },
            }
        }
    }

    /// The mapping key of the value at `pointer` as the scalar it was written as, when it
    /// is not a string (`1`, `true`, `null`, `1.5`).
    pub fn typed_key(&self, pointer: &str) -> Option<&Value> {
        self.typed_keys.get(pointer)
    }

    /// Whether the scalar starting at `pos` is an unquoted word that YAML 1.1 reads as a
    /// boolean and YAML 1.2 as a string (`yes`, `no`, `on`, `off` in any usual case).
    pub fn is_yaml11_boolean(&self, pos: Pos) -> bool {
        self.yaml11_booleans.contains_key(&(pos.line, pos.col))
    }

    /// Every unquoted scalar PyYAML reads as a boolean and YAML 1.2 as a string (`yes`,
    /// `Off`), with where it starts.
    pub fn yaml11_boolean_words(&self) -> impl Iterator<Item = (Pos, &str)> {
        self.yaml11_booleans
            .iter()
            .map(|(&(line, col), word)| (Pos { line, col }, word.as_str()))
    }

    /// How PyYAML and YAML 1.2 read the unquoted scalar starting at `pos`, when they read
    /// different integers from it (`017`, `1_000`, `0o17`), or PyYAML a date
    /// (`2024-01-01`; see [`super::yaml11`]).
    pub fn yaml11_integer(&self, pos: Pos) -> Option<&Yaml11Integer> {
        self.yaml11_integers.get(&(pos.line, pos.col))
    }

    /// Every unquoted scalar PyYAML and YAML 1.2 read differently as a number or a date
    /// (see [`Self::yaml11_integer`]), with where it starts.
    pub fn yaml11_integers(&self) -> impl Iterator<Item = (Pos, &Yaml11Integer)> {
        self.yaml11_integers
            .iter()
            .map(|(&(line, col), trap)| (Pos { line, col }, trap))
    }

    /// The aliases of mappings and lists in the text (`*node`, as written), with where they
    /// are written; a scalar's alias reads the same in YAML 1.1 and 1.2 and is not here.
    pub fn aliases(&self) -> &[(Pos, String)] {
        &self.aliases
    }

    /// The float starting at `pos` as written (`1e20`, `.inf`, or an integer past 64 bits,
    /// which is read as a float).
    pub fn float_written(&self, pos: Pos) -> Option<&str> {
        self.floats.get(&(pos.line, pos.col)).map(String::as_str)
    }

    /// The position of the mapping key whose value is at `pointer`, else of the value.
    pub fn key(&self, pointer: &str) -> Pos {
        self.keys
            .get(pointer)
            .copied()
            .unwrap_or_else(|| self.value(pointer))
    }
}

/// An unquoted scalar YAML 1.1 and 1.2 read differently: as written, PyYAML's reading
/// and YAML 1.2's (each "the integer N", "a string", "a date" or "a date and time").
pub type Yaml11Integer = (String, String, String);
