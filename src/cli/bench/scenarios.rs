//! The reference scenarios of `adk-flow bench`: agent trees built in code, with the
//! scripted model and a native `add` tool, so that nothing but adk-flow's own runtime is
//! measured. Each scenario knows the committed events ADK yields for one invocation, and
//! the bench refuses to report figures for a stream that differs.

use crate::model::scripted::{Script, ScriptedModel};
use crate::model::{FunctionDeclaration, Model};
use crate::tool::builtin::ExitLoop;
use crate::tool::{Tool, ToolContext, ToolError};
use crate::tree::{AgentKind, AgentTree, IncludeContents, LlmAgent};
use async_trait::async_trait;
use serde_json::{Value, json};
use std::sync::Arc;

/// The user's message in every scenario.
pub(super) const MESSAGE: &str = "what is 40 + 2?";
/// The app every scenario's sessions belong to.
pub(super) const APP: &str = "anchor";
/// The user every scenario's sessions belong to.
pub(super) const USER: &str = "u1";

/// One of the reference scenarios.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(super) enum Scenario {
    /// An agent calls `add(40, 2)` and answers (3 events).
    #[value(name = "a_tool")]
    ATool,
    /// Three agents in sequence, each with an output_key (3 events).
    #[value(name = "b_sequential")]
    BSequential,
    /// A loop of five model calls ended by exit_loop (6 events).
    #[value(name = "c_loop")]
    CLoop,
    /// A coordinator transfers to a helper, which answers (3 events).
    #[value(name = "d_transfer")]
    DTransfer,
    /// `a_tool`, turn after turn in one session.
    #[value(name = "long_session")]
    LongSession,
    /// The contract appendix's ADK 2 workflow loop: an LLM node and a Router, twice
    /// round, then a Router publishing (5 events; an adk-flow extension of the bench).
    #[value(name = "w_graph")]
    WGraph,
}

impl Scenario {
    /// Its name on the command line and in the JSON output.
    pub(super) fn name(self) -> &'static str {
        match self {
            Scenario::ATool => "a_tool",
            Scenario::BSequential => "b_sequential",
            Scenario::CLoop => "c_loop",
            Scenario::DTransfer => "d_transfer",
            Scenario::LongSession => "long_session",
            Scenario::WGraph => "w_graph",
        }
    }

    /// The agent tree, with a scripted model serving one invocation's replies over again.
    pub(super) fn tree(self) -> AgentTree {
        let mut tree = AgentTree::new();
        match self {
            Scenario::ATool | Scenario::LongSession => {
                let model = scripted(json!({
                    "calc": one_round(&[
                        json!({"function_call": {"name": "add", "args": {"a": 40, "b": 2}}}),
                        json!({"text": "The answer is 42."}),
                    ]),
                }));
                let tools: Vec<Arc<dyn Tool>> = vec![Arc::new(Add)];
                tree.add(
                    None,
                    "calc",
                    "Adds numbers.",
                    llm(
                        &model,
                        "Answer arithmetic questions with the add tool.",
                        tools,
                        "answer",
                    ),
                );
            }
            Scenario::BSequential => {
                let mut replies = serde_json::Map::new();
                for n in 1..=3 {
                    replies.insert(
                        format!("step{n}"),
                        one_round(&[json!({"text": format!("output of step {n}")})]),
                    );
                }
                let model = scripted(Value::Object(replies));
                let root = tree.add(
                    None,
                    "pipeline",
                    "Three steps.",
                    AgentKind::Sequential {
                        task_completed: false,
                    },
                );
                for n in 1..=3 {
                    let instruction = if n == 1 {
                        "Do step 1.".to_owned()
                    } else {
                        format!("Do step {n} using {{out{}}}.", n - 1)
                    };
                    tree.add(
                        Some(root),
                        format!("step{n}"),
                        format!("Step {n}."),
                        llm(&model, &instruction, Vec::new(), &format!("out{n}")),
                    );
                }
            }
            Scenario::CLoop => {
                let mut once: Vec<Value> = (1..=4)
                    .map(|n| json!({"text": format!("iteration {n}")}))
                    .collect();
                once.push(json!({"function_call": {"name": "exit_loop", "args": {}}}));
                let model = scripted(json!({ "worker": one_round(&once) }));
                let root = tree.add(
                    None,
                    "loop",
                    "Refines an answer.",
                    AgentKind::Loop {
                        max_iterations: Some(10),
                    },
                );
                let tools: Vec<Arc<dyn Tool>> = vec![Arc::new(ExitLoop)];
                tree.add(
                    Some(root),
                    "worker",
                    "Improves the answer.",
                    llm(
                        &model,
                        "Improve the answer; call exit_loop when it is good.",
                        tools,
                        "last_iteration",
                    ),
                );
            }
            Scenario::WGraph => super::workflow::tree(&mut tree),
            Scenario::DTransfer => {
                let model = scripted(json!({
                    "coordinator": one_round(&[json!(
                        {"function_call": {"name": "transfer_to_agent", "args": {"agent_name": "helper_a"}}}
                    )]),
                    "helper_a": one_round(&[json!({"text": "helper_a says 42"})]),
                }));
                let root = tree.add(
                    None,
                    "coordinator",
                    "Routes questions.",
                    llm(&model, "Send the user to the right helper.", Vec::new(), ""),
                );
                tree.add(
                    Some(root),
                    "helper_a",
                    "Answers arithmetic.",
                    llm(&model, "Answer the question.", Vec::new(), "helper_answer"),
                );
                tree.add(
                    Some(root),
                    "helper_b",
                    "Answers everything else.",
                    llm(&model, "Answer the question.", Vec::new(), ""),
                );
            }
        }
        tree
    }

    /// The committed events of one invocation, normalized as `testing::normalize_events`
    /// writes them (ADK's golden form), one JSON object per line.
    pub(super) fn expected(self) -> &'static str {
        match self {
            Scenario::ATool | Scenario::LongSession => A_TOOL,
            Scenario::BSequential => B_SEQUENTIAL,
            Scenario::CLoop => C_LOOP,
            Scenario::DTransfer => D_TRANSFER,
            Scenario::WGraph => super::workflow::EXPECTED,
        }
    }
}

const A_TOOL: &str = r#"{"author":"calc","content":{"parts":[{"functionCall":{"id":"call:1","args":{"a":40,"b":2},"name":"add"}}],"role":"model"},"invocationId":"inv:1"}
{"author":"calc","content":{"parts":[{"functionResponse":{"id":"call:1","name":"add","response":{"result":42}}}],"role":"user"},"invocationId":"inv:1"}
{"actions":{"stateDelta":{"answer":"The answer is 42."}},"author":"calc","content":{"parts":[{"text":"The answer is 42."}],"role":"model"},"invocationId":"inv:1"}
"#;

const B_SEQUENTIAL: &str = r#"{"actions":{"stateDelta":{"out1":"output of step 1"}},"author":"step1","content":{"parts":[{"text":"output of step 1"}],"role":"model"},"invocationId":"inv:1"}
{"actions":{"stateDelta":{"out2":"output of step 2"}},"author":"step2","content":{"parts":[{"text":"output of step 2"}],"role":"model"},"invocationId":"inv:1"}
{"actions":{"stateDelta":{"out3":"output of step 3"}},"author":"step3","content":{"parts":[{"text":"output of step 3"}],"role":"model"},"invocationId":"inv:1"}
"#;

const C_LOOP: &str = r#"{"actions":{"stateDelta":{"last_iteration":"iteration 1"}},"author":"worker","content":{"parts":[{"text":"iteration 1"}],"role":"model"},"invocationId":"inv:1"}
{"actions":{"stateDelta":{"last_iteration":"iteration 2"}},"author":"worker","content":{"parts":[{"text":"iteration 2"}],"role":"model"},"invocationId":"inv:1"}
{"actions":{"stateDelta":{"last_iteration":"iteration 3"}},"author":"worker","content":{"parts":[{"text":"iteration 3"}],"role":"model"},"invocationId":"inv:1"}
{"actions":{"stateDelta":{"last_iteration":"iteration 4"}},"author":"worker","content":{"parts":[{"text":"iteration 4"}],"role":"model"},"invocationId":"inv:1"}
{"author":"worker","content":{"parts":[{"functionCall":{"id":"call:1","args":{},"name":"exit_loop"}}],"role":"model"},"invocationId":"inv:1"}
{"actions":{"escalate":true,"skipSummarization":true},"author":"worker","content":{"parts":[{"functionResponse":{"id":"call:1","name":"exit_loop","response":{"result":null}}}],"role":"user"},"invocationId":"inv:1"}
"#;

const D_TRANSFER: &str = r#"{"author":"coordinator","content":{"parts":[{"functionCall":{"id":"call:1","args":{"agent_name":"helper_a"},"name":"transfer_to_agent"}}],"role":"model"},"invocationId":"inv:1"}
{"actions":{"transferToAgent":"helper_a"},"author":"coordinator","content":{"parts":[{"functionResponse":{"id":"call:1","name":"transfer_to_agent","response":{"result":null}}}],"role":"user"},"invocationId":"inv:1"}
{"actions":{"stateDelta":{"helper_answer":"helper_a says 42"}},"author":"helper_a","content":{"parts":[{"text":"helper_a says 42"}],"role":"model"},"invocationId":"inv:1"}
"#;

/// One invocation's `replies`, in order.
pub(super) fn one_round(replies: &[Value]) -> Value {
    Value::Array(replies.to_vec())
}

/// The scripted model of a scenario: one round of replies per agent (one invocation's),
/// served over again for every invocation, so that no script grows with the number of
/// invocations (nor leaves memory freed before the measured loop).
pub(super) fn scripted(replies: Value) -> Arc<dyn Model> {
    // The replies are built above and always well formed.
    let script: Script = serde_json::from_value(json!({ "replies": replies }))
        .unwrap_or_else(|e| unreachable!("bench script: {e}"));
    let model = ScriptedModel::new(script).unwrap_or_else(|e| unreachable!("bench script: {e}"));
    Arc::new(model.cyclic())
}

pub(super) fn llm(
    model: &Arc<dyn Model>,
    instruction: &str,
    tools: Vec<Arc<dyn Tool>>,
    output_key: &str,
) -> AgentKind {
    AgentKind::Llm(Box::new(LlmAgent {
        model: Arc::clone(model),
        model_name: "gemini-2.5-flash".into(),
        instruction: instruction.into(),
        static_instruction: None,
        tools,
        output_key: (!output_key.is_empty()).then(|| output_key.to_owned()),
        output_schema: None,
        input_schema: None,
        include_contents: IncludeContents::Default,
        disallow_transfer_to_parent: false,
        disallow_transfer_to_peers: false,
        generate_content_config: None,
    }))
}

/// The scenarios' function tool: `add(a, b)` returns `{"result": a + b}`.
struct Add;

#[async_trait]
impl Tool for Add {
    fn name(&self) -> &str {
        "add"
    }

    fn declaration(&self) -> FunctionDeclaration {
        FunctionDeclaration {
            name: "add".into(),
            description: "Adds two numbers.".into(),
            parameters: Some(json!({
                "type": "object",
                "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
                "required": ["a", "b"],
            })),
        }
    }

    async fn run(&self, args: Value, _ctx: &mut ToolContext) -> Result<Value, ToolError> {
        let number = |k: &str| {
            args.get(k)
                .ok_or_else(|| ToolError::new(format!("missing argument `{k}`")))
        };
        let (a, b) = (number("a")?, number("b")?);
        let sum = match (a.as_i64(), b.as_i64()) {
            (Some(a), Some(b)) => a.checked_add(b).map(Value::from),
            _ => None,
        }
        .or_else(|| Some(json!(a.as_f64()? + b.as_f64()?)))
        .ok_or_else(|| ToolError::new("`a` and `b` must be numbers"))?;
        Ok(json!({ "result": sum }))
    }
}
