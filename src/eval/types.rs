//! ADK's eval data model (`google.adk.evaluation`): eval sets, cases, invocations and the
//! genai contents they hold. Reading accepts snake_case and camelCase keys below the top
//! level and refuses unknown ones, as ADK's `EvalBaseModel` does; writing produces
//! snake_case with nulls, as ADK's `model_dump_json()`.

use crate::event::{Content, Part};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// A genai `FunctionCall`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FunctionCall {
    /// Call id (never compared by any metric).
    #[serde(default)]
    pub id: Option<String>,
    /// Arguments; `None` and `{}` differ, as in Python.
    #[serde(default)]
    pub args: Option<Value>,
    /// Tool name.
    #[serde(default)]
    pub name: Option<String>,
    /// adk-flow: argument names ignored when this expected call is compared.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ignore_args: Option<Vec<String>>,
    /// adk-flow: `subset` compares only the arguments this expected call names.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub args_match: Option<String>,
    /// Other genai fields (`partial_args`, `will_continue`), kept as written.
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

/// A genai `FunctionResponse`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FunctionResponse {
    /// Id of the call this answers.
    #[serde(default)]
    pub id: Option<String>,
    /// Tool name.
    #[serde(default)]
    pub name: Option<String>,
    /// The result.
    #[serde(default)]
    pub response: Option<Value>,
    /// Other genai fields, kept as written.
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

/// A genai `Part`: the fields the eval metrics read, the rest kept as written.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GenaiPart {
    /// Text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// Marks reasoning text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thought: Option<bool>,
    /// A function call.
    #[serde(
        default,
        alias = "functionCall",
        skip_serializing_if = "Option::is_none"
    )]
    pub function_call: Option<FunctionCall>,
    /// A function response.
    #[serde(
        default,
        alias = "functionResponse",
        skip_serializing_if = "Option::is_none"
    )]
    pub function_response: Option<FunctionResponse>,
    /// Other genai fields (`inline_data`, `thought_signature`...), kept as written.
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

/// A genai `Content`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GenaiContent {
    /// The parts.
    #[serde(default)]
    pub parts: Option<Vec<GenaiPart>>,
    /// `user` or `model`.
    #[serde(default)]
    pub role: Option<String>,
}

impl GenaiContent {
    /// A content with one text part.
    pub fn text(role: &str, text: impl Into<String>) -> Self {
        GenaiContent {
            parts: Some(vec![GenaiPart {
                text: Some(text.into()),
                ..GenaiPart::default()
            }]),
            role: Some(role.to_owned()),
        }
    }

    /// The parts (none when absent).
    pub fn parts(&self) -> &[GenaiPart] {
        self.parts.as_deref().unwrap_or(&[])
    }

    /// ADK's text of a content: the non-empty `text` of every part (thoughts included),
    /// joined with newlines; `None` without parts.
    pub fn joined_text(content: Option<&GenaiContent>) -> Option<String> {
        let parts = content?.parts.as_ref().filter(|p| !p.is_empty())?;
        Some(
            parts
                .iter()
                .filter_map(|p| p.text.as_deref().filter(|t| !t.is_empty()))
                .collect::<Vec<_>>()
                .join("\n"),
        )
    }

    /// The content as the runtime's [`Content`] (text, calls and responses).
    pub fn to_runtime(&self) -> Content {
        let parts = self
            .parts()
            .iter()
            .filter_map(|p| {
                if let Some(t) = &p.text {
                    let mut part = Part::text(t.clone());
                    part.thought = p.thought;
                    Some(part)
                } else if let Some(c) = &p.function_call {
                    Some(Part::function_call(crate::event::FunctionCall {
                        id: c.id.clone(),
                        args: c.args.clone().unwrap_or(Value::Object(Map::new())),
                        name: c.name.clone().unwrap_or_default(),
                    }))
                } else {
                    p.function_response.as_ref().map(|r| {
                        Part::function_response(crate::event::FunctionResponse {
                            id: r.id.clone(),
                            name: r.name.clone().unwrap_or_default(),
                            response: r.response.clone().unwrap_or(Value::Null),
                        })
                    })
                }
            })
            .collect();
        Content {
            parts,
            role: Some(if self.role.as_deref() == Some("model") {
                crate::event::Role::Model
            } else {
                crate::event::Role::User
            }),
        }
    }

    /// The runtime's [`Content`] in genai's shape.
    pub fn from_runtime(content: &Content) -> Self {
        let parts = content
            .parts
            .iter()
            .map(|p| GenaiPart {
                text: p.text.clone(),
                thought: p.thought,
                function_call: p.function_call.as_ref().map(|c| FunctionCall {
                    id: c.id.clone(),
                    args: Some(c.args.clone()),
                    name: Some(c.name.clone()),
                    ..FunctionCall::default()
                }),
                function_response: p.function_response.as_ref().map(|r| FunctionResponse {
                    id: r.id.clone(),
                    name: Some(r.name.clone()),
                    response: Some(r.response.clone()),
                    other: Map::new(),
                }),
                other: Map::new(),
            })
            .collect();
        GenaiContent {
            parts: Some(parts),
            role: content.role.map(|r| match r {
                crate::event::Role::User => "user".to_owned(),
                crate::event::Role::Model => "model".to_owned(),
            }),
        }
    }
}

/// A rubric's testable property.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RubricContent {
    /// The property, e.g. "The response names the order number."
    #[serde(default, alias = "textProperty")]
    pub text_property: Option<String>,
}

/// A rubric for the rubric-based judge metrics.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Rubric {
    /// Unique id.
    #[serde(alias = "rubricId")]
    pub rubric_id: String,
    /// What is assessed.
    #[serde(alias = "rubricContent")]
    pub rubric_content: RubricContent,
    /// How to read the result.
    #[serde(default)]
    pub description: Option<String>,
    /// `FINAL_RESPONSE_QUALITY`, `TOOL_USE_QUALITY`...: which metric uses a case or
    /// invocation rubric.
    #[serde(default, rename = "type")]
    pub kind: Option<String>,
}

/// One assessed rubric.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RubricScore {
    /// The rubric.
    pub rubric_id: String,
    /// The judge's rationale.
    pub rationale: Option<String>,
    /// 1.0 yes, 0.0 no, `None` not assessed.
    pub score: Option<f64>,
}

/// The `tool_uses` form of intermediate data.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolUses {
    /// Calls in order.
    #[serde(default, alias = "toolUses")]
    pub tool_uses: Vec<FunctionCall>,
    /// Responses in order (never compared).
    #[serde(default, alias = "toolResponses")]
    pub tool_responses: Vec<FunctionResponse>,
    /// `(author, parts)` of sub-agents' texts (never compared).
    #[serde(default, alias = "intermediateResponses")]
    pub intermediate_responses: Vec<(String, Vec<GenaiPart>)>,
}

/// One event of an invocation, as ADK's eval data keeps it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InvocationEvent {
    /// The agent (or user) that authored it.
    pub author: String,
    /// What it said or called.
    pub content: Option<GenaiContent>,
}

/// The `invocation_events` form of intermediate data (what ADK saves from a session).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InvocationEvents {
    /// The events other than the user's message and the final response.
    #[serde(default, alias = "invocationEvents")]
    pub invocation_events: Vec<InvocationEvent>,
}

/// Intermediate data in either of ADK's two forms.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum IntermediateData {
    /// Tool uses, responses and intermediate texts.
    ToolUses(ToolUses),
    /// Events.
    Events(InvocationEvents),
}

impl<'de> Deserialize<'de> for IntermediateData {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let map = Map::<String, Value>::deserialize(d)?;
        let events = map.contains_key("invocation_events") || map.contains_key("invocationEvents");
        let value = Value::Object(map);
        if events {
            InvocationEvents::deserialize(value)
                .map(IntermediateData::Events)
                .map_err(serde::de::Error::custom)
        } else {
            ToolUses::deserialize(value)
                .map(IntermediateData::ToolUses)
                .map_err(serde::de::Error::custom)
        }
    }
}

impl IntermediateData {
    /// Every tool call, in order (ADK's `get_all_tool_calls`).
    pub fn tool_calls(data: Option<&IntermediateData>) -> Vec<&FunctionCall> {
        match data {
            None => Vec::new(),
            Some(IntermediateData::ToolUses(t)) => t.tool_uses.iter().collect(),
            Some(IntermediateData::Events(e)) => e
                .invocation_events
                .iter()
                .flat_map(|ev| ev.content.iter().flat_map(|c| c.parts()))
                .filter_map(|p| p.function_call.as_ref())
                .collect(),
        }
    }

    /// Every tool response, in order.
    pub fn tool_responses(data: Option<&IntermediateData>) -> Vec<&FunctionResponse> {
        match data {
            None => Vec::new(),
            Some(IntermediateData::ToolUses(t)) => t.tool_responses.iter().collect(),
            Some(IntermediateData::Events(e)) => e
                .invocation_events
                .iter()
                .flat_map(|ev| ev.content.iter().flat_map(|c| c.parts()))
                .filter_map(|p| p.function_response.as_ref())
                .collect(),
        }
    }
}

/// One agent's instruction and tools, recorded during inference (ADK's `AgentDetails`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct AgentDetails {
    /// Agent name.
    pub name: String,
    /// The system instruction it sent.
    #[serde(default)]
    pub instructions: String,
    /// The tools it declared (genai `Tool` objects with `function_declarations`).
    #[serde(default)]
    pub tool_declarations: Vec<Value>,
}

/// What the agents were told and offered during one invocation (ADK's `AppDetails`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct AppDetails {
    /// Per agent name.
    #[serde(default)]
    pub agent_details: Map<String, Value>,
}

/// One user turn and what the agent did with it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Invocation {
    /// Id (the runtime's invocation id for actual invocations).
    #[serde(default, alias = "invocationId")]
    pub invocation_id: String,
    /// The user's message.
    #[serde(alias = "userContent")]
    pub user_content: GenaiContent,
    /// The agent's final response.
    #[serde(default, alias = "finalResponse")]
    pub final_response: Option<GenaiContent>,
    /// Tool calls and intermediate responses.
    #[serde(default, alias = "intermediateData")]
    pub intermediate_data: Option<IntermediateData>,
    /// Seconds since the epoch.
    #[serde(default, alias = "creationTimestamp")]
    pub creation_timestamp: f64,
    /// Rubrics for this invocation only.
    #[serde(default)]
    pub rubrics: Option<Vec<Rubric>>,
    /// Instructions and tools recorded during inference.
    #[serde(default, alias = "appDetails")]
    pub app_details: Option<Value>,
}

/// How an eval case's session starts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SessionInput {
    /// App name of the session.
    #[serde(alias = "appName")]
    pub app_name: String,
    /// User id of the session.
    #[serde(alias = "userId")]
    pub user_id: String,
    /// Initial state (`app:`/`user:` keys allowed).
    #[serde(default)]
    pub state: Map<String, Value>,
}

/// A scenario for the LLM user simulator.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConversationScenario {
    /// The first user message, sent as is.
    #[serde(alias = "startingPrompt")]
    pub starting_prompt: String,
    /// What the simulated user wants to get done.
    #[serde(alias = "conversationPlan")]
    pub conversation_plan: String,
    /// A persona: a registry name or an object with a description.
    #[serde(default, alias = "userPersona")]
    pub user_persona: Option<Value>,
}

/// One eval case.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EvalCase {
    /// Unique id within its set.
    #[serde(alias = "evalId")]
    pub eval_id: String,
    /// A static conversation: user turns with expected results.
    #[serde(default)]
    pub conversation: Option<Vec<Invocation>>,
    /// Or a scenario played by the user simulator.
    #[serde(default, alias = "conversationScenario")]
    pub conversation_scenario: Option<ConversationScenario>,
    /// How the session starts.
    #[serde(default, alias = "sessionInput")]
    pub session_input: Option<SessionInput>,
    /// Seconds since the epoch.
    #[serde(default, alias = "creationTimestamp")]
    pub creation_timestamp: f64,
    /// Rubrics for every invocation of the case.
    #[serde(default)]
    pub rubrics: Option<Vec<Rubric>>,
    /// The state expected at the end (compared by adk-flow's `final_session_state`
    /// metric; ADK never compares it).
    #[serde(default, alias = "finalSessionState")]
    pub final_session_state: Option<Map<String, Value>>,
}

/// An eval set.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EvalSet {
    /// Id.
    #[serde(alias = "evalSetId")]
    pub eval_set_id: String,
    /// Display name.
    #[serde(default)]
    pub name: Option<String>,
    /// Description.
    #[serde(default)]
    pub description: Option<String>,
    /// The cases.
    #[serde(alias = "evalCases")]
    pub eval_cases: Vec<EvalCase>,
    /// Seconds since the epoch.
    #[serde(default, alias = "creationTimestamp")]
    pub creation_timestamp: f64,
}
