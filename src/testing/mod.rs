//! Workflow tests: YAML files that drive a workflow with scripted model replies and
//! stubbed tools, and check what each turn did (final text, state, the path of authors,
//! tool calls, error codes, an optional event snapshot). `adk-flow test` runs them.
//!
//! ```yaml
//! workflow: support.yaml          # relative to this file
//! tests:
//!   - name: an order question goes to billing
//!     state: {user:tier: gold}    # initial session state (added to the workflow's)
//!     replies:                    # scripted model replies, as in --script files
//!       support_router: [{function_call: {name: transfer_to_agent, args: {agent_name: billing}}}]
//!       billing: [{text: "Paid."}]
//!     tools:                      # stubbed results, by tool name
//!       lookup_order: {status: paid}
//!     snapshot: snapshots/order.jsonl   # optional: normalized events of the whole test
//!     turns:
//!       - user: "Was order 42 paid?"
//!         expect:
//!           final_text: {contains: "Paid"}   # or equals / regex
//!           state: {billing_answer: "Paid."}
//!           authors: [support_router, billing]
//!           tool_calls: [{name: transfer_to_agent, args: {agent_name: billing}}]
//! ```

mod check;
mod normalize;
mod run;

pub use normalize::normalize_events;
pub use run::{CaseResult, FileResult, RunOptions, run_file, unknown_agents};

use crate::model::scripted::Script;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value};

/// A workflow test file.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TestFile {
    /// The workflow under test, relative to the test file.
    pub workflow: String,
    /// The test cases.
    pub tests: Vec<TestCase>,
}

/// One test: a fresh session, scripted replies, stubs, and turns with expectations.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TestCase {
    /// What the test checks, shown in the report.
    pub name: String,
    /// Initial session state, on top of the workflow's `state`.
    #[serde(default)]
    pub state: Map<String, Value>,
    /// Model replies per agent, in the `--script` format.
    #[serde(default)]
    #[schemars(with = "Value")]
    pub replies: Option<Value>,
    /// Tool results by tool name: one value for every call, or `{results: [..]}` in order.
    #[serde(default)]
    pub tools: Map<String, Value>,
    /// Normalized events of the whole test, compared with this file (written with
    /// `--update-snapshots`).
    #[serde(default)]
    pub snapshot: Option<String>,
    /// The user turns.
    pub turns: Vec<Turn>,
}

impl TestCase {
    /// The scripted replies as a [`Script`].
    ///
    /// # Errors
    /// Replies that do not have the script format.
    pub fn script(&self) -> Result<Script, String> {
        let replies = self.replies.clone().unwrap_or(Value::Object(Map::new()));
        serde_json::from_value(serde_json::json!({ "replies": replies }))
            .map_err(|e| format!("replies: {e}"))
    }
}

/// One user message (or an answer to a waiting tool call) and what must hold after it.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(try_from = "TurnKeys")]
#[schemars(with = "TurnKeys")]
pub struct Turn {
    /// What the turn sends.
    pub input: TurnInput,
    /// Expectations after the turn.
    pub expect: Expect,
}

/// What a turn sends: a user message or the client's answer to a waiting call.
#[derive(Debug, Clone)]
pub enum TurnInput {
    /// The user's message (`user:`).
    User(String),
    /// The client's answer to a waiting call (`respond:`).
    Respond(Respond),
}

impl TurnInput {
    /// The user's message, if the turn sends one.
    pub fn user(&self) -> Option<&str> {
        match self {
            TurnInput::User(u) => Some(u),
            TurnInput::Respond(_) => None,
        }
    }
}

/// A turn as written: exactly one of `user` and `respond`, and `expect`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TurnKeys {
    /// The user's message.
    #[serde(default)]
    pub user: Option<String>,
    /// Instead of a message: the client's answer to a call waiting for it (`client:`
    /// tools), as `{tool: NAME, response: {...}}`.
    #[serde(default)]
    pub respond: Option<Respond>,
    /// Expectations after the turn.
    #[serde(default)]
    pub expect: Expect,
}

impl TryFrom<TurnKeys> for Turn {
    type Error = &'static str;

    fn try_from(keys: TurnKeys) -> Result<Self, Self::Error> {
        let input = match (keys.user, keys.respond) {
            (Some(u), None) => TurnInput::User(u),
            (None, Some(r)) => TurnInput::Respond(r),
            _ => return Err("give exactly one of `user` or `respond`"),
        };
        Ok(Turn {
            input,
            expect: keys.expect,
        })
    }
}

/// The client's answer to a waiting tool call.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Respond {
    /// The tool whose latest waiting call is answered.
    pub tool: String,
    /// The answer (a non-object is wrapped as `{"result": value}`).
    pub response: Value,
}

/// A check on a text.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "snake_case")]
pub enum TextCheck {
    /// The text is exactly this.
    Equals(String),
    /// The text contains this.
    Contains(String),
    /// The text matches this regular expression.
    Regex(String),
}

/// An expected tool call: its name and (a subset of) its arguments.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExpectedCall {
    /// Tool name.
    pub name: String,
    /// Arguments that must be present with these values.
    #[serde(default)]
    pub args: Option<Map<String, Value>>,
}

/// What must hold after a turn.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Expect {
    /// The turn's final text: the last text any agent said or, in a workflow graph, the
    /// last node output when it comes later (a Router's, as text).
    #[serde(default)]
    pub final_text: Option<TextCheck>,
    /// State after the turn: each key has this value (`null`: absent).
    #[serde(default)]
    pub state: Option<Map<String, Value>>,
    /// The agents that spoke, in order, consecutive repeats merged.
    #[serde(default)]
    pub authors: Option<Vec<String>>,
    /// The function calls made, in order (transfers and exit_loop included).
    #[serde(default)]
    pub tool_calls: Option<Vec<ExpectedCall>>,
    /// The turn ends with an error event with this code (e.g. `MISSING_STATE_KEY`).
    #[serde(default)]
    pub error: Option<String>,
}
