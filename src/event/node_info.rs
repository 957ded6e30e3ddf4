//! ADK 2's `NodeInfo`: where in a workflow graph an event was made, and which node paths
//! its output counts for. Held so that a node run's events share their strings: the
//! path once, and the enclosing workflows' paths once per workflow run. An event holds
//! it in an `Arc`, so that events with equal `nodeInfo`s can share one (the graph runtime
//! makes the root workflow's once per node run number, for every invocation).

use serde::de::Deserializer;
use serde::ser::{SerializeSeq, SerializeStruct, Serializer};
use serde::{Deserialize, Serialize};
use std::sync::{Arc, LazyLock};

/// Workflow node metadata of an event (ADK 2's `NodeInfo`). Serialized as ADK writes it:
/// `path`, then `outputFor` and `messageAsOutput` when set.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct NodeInfo {
    /// The node's path: `WF@1/node@2`, one `NAME@RUN` segment per level.
    pub path: Arc<str>,
    /// The node paths whose output this event carries (`outputFor`): the node's own,
    /// then those of the workflows it is the terminal output of.
    pub output_for: Option<OutputFor>,
    /// The event's message (its text) is the node's output.
    pub message_as_output: Option<bool>,
}

/// The paths of `outputFor`: [`NodeInfo::path`] first when `own` (as ADK always writes
/// it), then `rest`, which a workflow run's events share.
#[derive(Debug, Clone, PartialEq)]
pub struct OutputFor {
    /// The list starts with the event's own node path.
    pub own: bool,
    /// The paths after it.
    pub rest: Arc<[Arc<str>]>,
}

impl OutputFor {
    /// The node's own path alone: the output of a node that is no workflow's terminal
    /// output. Allocates nothing.
    pub fn own() -> OutputFor {
        static NONE: LazyLock<Arc<[Arc<str>]>> = LazyLock::new(|| Arc::from(Vec::new()));
        OutputFor {
            own: true,
            rest: Arc::clone(&NONE),
        }
    }

    /// The node's own path, then `rest`.
    pub fn own_then(rest: Arc<[Arc<str>]>) -> OutputFor {
        OutputFor { own: true, rest }
    }

    /// The paths, in order, given the event's own node path.
    pub fn paths<'a>(&'a self, path: &'a str) -> impl Iterator<Item = &'a str> {
        self.own
            .then_some(path)
            .into_iter()
            .chain(self.rest.iter().map(|p| &**p))
    }
}

impl NodeInfo {
    /// The empty `nodeInfo` (path `""`) ADK 2 gives the user's message to a workflow app,
    /// one shared value.
    pub fn empty() -> Arc<NodeInfo> {
        static EMPTY: LazyLock<Arc<NodeInfo>> = LazyLock::new(|| Arc::new(NodeInfo::default()));
        Arc::clone(&EMPTY)
    }
}

/// `outputFor` as the list it is on the wire.
struct Paths<'a>(&'a OutputFor, &'a str);

impl Serialize for Paths<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let len = usize::from(self.0.own) + self.0.rest.len();
        let mut seq = s.serialize_seq(Some(len))?;
        for p in self.0.paths(self.1) {
            seq.serialize_element(p)?;
        }
        seq.end()
    }
}

impl Serialize for NodeInfo {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let len = 1
            + usize::from(self.output_for.is_some())
            + usize::from(self.message_as_output.is_some());
        let mut st = s.serialize_struct("NodeInfo", len)?;
        st.serialize_field("path", &*self.path)?;
        match &self.output_for {
            Some(of) => st.serialize_field("outputFor", &Paths(of, &self.path))?,
            None => st.skip_field("outputFor")?,
        }
        match &self.message_as_output {
            Some(m) => st.serialize_field("messageAsOutput", m)?,
            None => st.skip_field("messageAsOutput")?,
        }
        st.end()
    }
}

/// `NodeInfo` as written.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Wire {
    #[serde(default)]
    path: Arc<str>,
    #[serde(default)]
    output_for: Option<Vec<Arc<str>>>,
    #[serde(default)]
    message_as_output: Option<bool>,
}

impl<'de> Deserialize<'de> for NodeInfo {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let w = Wire::deserialize(d)?;
        let output_for = w.output_for.map(|paths| {
            let own = paths.first().is_some_and(|p| *p == w.path);
            let rest = if own { &paths[1..] } else { &paths[..] };
            OutputFor {
                own,
                rest: Arc::from(rest),
            }
        });
        Ok(NodeInfo {
            path: w.path,
            output_for,
            message_as_output: w.message_as_output,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(json: &str) {
        let info: NodeInfo = serde_json::from_str(json).unwrap();
        assert_eq!(serde_json::to_string(&info).unwrap(), json);
    }

    #[test]
    fn node_info_reads_and_writes_as_adk() {
        round_trip(r#"{"path":""}"#);
        round_trip(r#"{"path":"wf@1/a@1","outputFor":["wf@1/a@1"],"messageAsOutput":true}"#);
        round_trip(r#"{"path":"wf@1/a@1","outputFor":["wf@1/a@1","wf@1"]}"#);
        round_trip(r#"{"path":"wf@1/a@1","outputFor":["other","wf@1"]}"#);
        round_trip(r#"{"path":"wf@1/a@1","outputFor":[]}"#);
        let info = NodeInfo {
            path: Arc::from("w@1/n@2"),
            output_for: Some(OutputFor::own()),
            message_as_output: None,
        };
        assert_eq!(
            serde_json::to_string(&info).unwrap(),
            r#"{"path":"w@1/n@2","outputFor":["w@1/n@2"]}"#
        );
        let read: NodeInfo = serde_json::from_str(r#"{}"#).unwrap();
        assert_eq!(read, NodeInfo::default());
    }
}
