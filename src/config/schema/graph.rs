//! The JSON Schema of ADK 2 `agent_class: Workflow` files: the workflow's keys, its edge
//! items (chains, explicit edges), chain elements, routing maps, labels and the nodes that
//! are no agents (`adk_flow.Router`, `JoinNode`). The loader checks these files itself
//! (`config::graph`), with messages the schema cannot give; the schema is what editors
//! complete and check against.

use crate::config::graph::{JOIN_CLASSES, ROUTER_CLASS, WORKFLOW_CLASSES};
use serde_json::{Map, Value, json};

/// The definitions for workflow graphs, added to the schema's `$defs`.
pub(super) fn defs() -> Map<String, Value> {
    let node_ref = json!({"$ref": "#/$defs/NodeRef"});
    let label = json!({
        "description": "An edge label: a string, an integer or true/false (quote YAML 1.1 booleans such as \"yes\"); `__DEFAULT__` fires when no other label matched.",
        "type": ["string", "integer", "boolean"]
    });
    let defs = json!({
        "Workflow": {
            "description": "An ADK 2 Workflow: a graph of nodes joined by `edges`, run from START on every user message.",
            "type": "object",
            "required": ["name", "agent_class", "edges"],
            "additionalProperties": false,
            "properties": {
                "agent_class": {"description": "`Workflow`.", "enum": WORKFLOW_CLASSES},
                "name": {"description": "Unique name: an identifier. Author of the workflow's Router and JoinNode events.", "type": "string"},
                "description": {"description": "What the workflow does.", "type": "string"},
                "edges": {
                    "description": "Edge items: chains (`[START, a.yaml, b]`) and explicit edges (`{from_node, to_node, route}`).",
                    "type": "array",
                    "minItems": 1,
                    "items": {"$ref": "#/$defs/EdgeItem"}
                },
                "max_concurrency": {"description": "At most this many nodes run at once; absent or 0 or less: no limit.", "type": "integer"},
                "max_node_runs": {"description": "adk-flow: at most this many runs of one node in one workflow run; the next is an error naming the node. Off unless set.", "type": "integer", "minimum": 1},
                "define": {"description": "Root file only: named models, tools and callbacks (adk-flow).", "$ref": "#/$defs/Define"},
                "state": {"description": "Root file only: initial session state of every new session (adk-flow).", "type": "object"}
            }
        },
        "EdgeItem": {
            "description": "A chain (a list of at least 2 elements, START first if at all) or an explicit edge.",
            "anyOf": [
                {"type": "array", "minItems": 2, "items": {"$ref": "#/$defs/ChainElement"}},
                {"$ref": "#/$defs/ExplicitEdge"}
            ]
        },
        "ChainElement": {
            "description": "START, a node file (`x.yaml`), the name of a node defined earlier, an inline node, a fan-out list, or a routing map (`LABEL: target`).",
            "anyOf": [
                {"type": "string"},
                {"type": "array", "minItems": 1, "items": node_ref},
                {"$ref": "#/$defs/Node"},
                {"$ref": "#/$defs/RoutingMap"}
            ]
        },
        "RoutingMap": {
            "description": "Labelled edges from the previous element: `LABEL: target` or `LABEL: [targets]`.",
            "type": "object",
            "minProperties": 1,
            "additionalProperties": {"anyOf": [node_ref, {"type": "array", "minItems": 1, "items": node_ref}]}
        },
        "NodeRef": {
            "description": "A node file (`x.yaml`), the name of a node defined earlier, or an inline node.",
            "anyOf": [{"type": "string"}, {"$ref": "#/$defs/Node"}]
        },
        "Node": {
            "description": "An inline node: an LLM agent (the default), `config_path: x.yaml`, an `adk_flow.Router`, a `JoinNode` or a nested `Workflow`.",
            "if": {"properties": {"agent_class": {"const": ROUTER_CLASS}}, "required": ["agent_class"]},
            "then": {"$ref": "#/$defs/Router"},
            "else": {
                "if": {"properties": {"agent_class": {"enum": JOIN_CLASSES}}, "required": ["agent_class"]},
                "then": {"$ref": "#/$defs/JoinNode"},
                "else": {
                    "if": {"properties": {"agent_class": {"enum": WORKFLOW_CLASSES}}, "required": ["agent_class"]},
                    "then": {"$ref": "#/$defs/Workflow"},
                    "else": {"$ref": "#/$defs/SubAgent"}
                }
            }
        },
        "ExplicitEdge": {
            "description": "One edge: `{from_node: A, to_node: B, route: LABEL}`.",
            "type": "object",
            "required": ["from_node", "to_node"],
            "additionalProperties": false,
            "properties": {
                "from_node": {"description": "Where the edge leaves: START or a node.", "$ref": "#/$defs/NodeRef"},
                "to_node": {"description": "Where the edge goes: a node.", "$ref": "#/$defs/NodeRef"},
                "route": {"description": "A label or a list of labels; the edge fires when the node's route equals one.", "anyOf": [label, {"type": "array", "minItems": 1, "items": label}]}
            }
        },
        "Router": {
            "description": "`adk_flow.Router`: routes with Jinja expressions over `input` and `state`.",
            "type": "object",
            "required": ["name", "agent_class", "route"],
            "additionalProperties": false,
            "properties": {
                "agent_class": {"description": "`adk_flow.Router`.", "const": ROUTER_CLASS},
                "name": {"description": "Unique name in the workflow: an identifier.", "type": "string"},
                "description": {"description": "What the router decides.", "type": "string"},
                "route": {"description": "Jinja expression: a label, a list of labels, or none.", "type": "string"},
                "output": {"description": "Jinja expression: the node's output (absent: the input passes on; none: no output).", "type": "string"},
                "state": {"description": "State keys and the Jinja expressions of their new values.", "type": "object", "additionalProperties": {"type": "string"}}
            }
        },
        "JoinNode": {
            "description": "`JoinNode`: runs once every predecessor completed; its output maps each predecessor to its output.",
            "type": "object",
            "required": ["name", "agent_class"],
            "additionalProperties": false,
            "properties": {
                "agent_class": {"description": "`JoinNode`.", "enum": JOIN_CLASSES},
                "name": {"description": "Unique name in the workflow: an identifier.", "type": "string"},
                "description": {"description": "What is joined.", "type": "string"}
            }
        }
    });
    match defs {
        Value::Object(m) => m,
        _ => Map::new(),
    }
}
