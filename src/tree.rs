//! The agent tree of a workflow at run time: an arena ([`AgentTree`]) addressed by
//! [`AgentId`]. Parents and children are ids, so lookups by name (transfers) and walks to
//! the root (routing) are cheap and nothing is reference-counted per node. It also holds
//! ADK's transfer rules, which only depend on the tree's shape.

use crate::callback::Hooks;
use crate::model::Model;
use crate::routes::EdgeRoute;
use crate::template::jinja::Expression;
use crate::tool::Tool;
use serde_json::Value;
use std::any::Any;
use std::sync::{Arc, OnceLock};

/// Index of an agent in its [`AgentTree`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct AgentId(usize);

/// How much of the conversation an LLM agent sees.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum IncludeContents {
    /// Every event of its branch, other agents' turns quoted "For context".
    #[default]
    Default,
    /// Only the current turn: from the latest user message or other agent's reply.
    None,
}

/// An agent driven by a model: instruction, tools, and transfer to other agents.
pub struct LlmAgent {
    /// The model it calls.
    pub model: Arc<dyn Model>,
    /// The model name, as sent in requests.
    pub model_name: String,
    /// The instruction template (ADK `{key}` syntax).
    pub instruction: String,
    /// ADK's `static_instruction`: sent as written at the start of the system
    /// instruction; the templated instruction then goes to the contents as a user message.
    pub static_instruction: Option<String>,
    /// Its tools, in declaration order.
    pub tools: Vec<Arc<dyn Tool>>,
    /// State key that receives its final text (as JSON with an `output_schema`).
    pub output_key: Option<String>,
    /// The JSON Schema its final reply must fit.
    pub output_schema: Option<Arc<crate::model::schema::OutputSchema>>,
    /// The JSON Schema of its arguments when it runs as an AgentTool.
    pub input_schema: Option<Arc<crate::model::schema::OutputSchema>>,
    /// How much history it sees.
    pub include_contents: IncludeContents,
    /// It may not hand control back to its parent.
    pub disallow_transfer_to_parent: bool,
    /// It may not hand control to its siblings.
    pub disallow_transfer_to_peers: bool,
    /// Provider generation parameters, passed through.
    pub generate_content_config: Option<Value>,
}

/// The kind of an agent and its kind-specific settings.
pub enum AgentKind {
    /// A model-driven agent.
    Llm(Box<LlmAgent>),
    /// Runs its children once, in order.
    Sequential {
        /// Offer `task_completed` to each LLM child so it can end its step.
        task_completed: bool,
    },
    /// Runs its children in order, again and again, until one escalates.
    Loop {
        /// Upper bound on iterations; `None` (or 0, as in ADK 1.x) is unbounded.
        max_iterations: Option<u32>,
    },
    /// Runs its children concurrently, each on its own branch.
    Parallel,
    /// An ADK 2 Workflow graph: its LLM nodes and nested workflows are its children.
    Graph(Box<Graph>),
}

/// A compiled `adk_flow.Router`: expressions over `input` and `state`.
pub struct Router {
    /// The route expression.
    pub route: Expression,
    /// The output expression; `None`: the input passes on.
    pub output: Option<Expression>,
    /// State keys and their expressions, in file order.
    pub state: Vec<(String, Expression)>,
    /// Whether any of its expressions reads `state` (see [`Router::new`]).
    reads_state: bool,
}

impl Router {
    /// A Router of these expressions; whether they read `state` is found once, here,
    /// rather than at each run (a Router that does not reads no session).
    pub fn new(
        route: Expression,
        output: Option<Expression>,
        state: Vec<(String, Expression)>,
    ) -> Router {
        let exprs = std::iter::once(&route)
            .chain(output.as_ref())
            .chain(state.iter().map(|(_, e)| e));
        let reads_state = crate::template::jinja::reads_any(exprs, "state");
        Router {
            route,
            output,
            state,
            reads_state,
        }
    }

    /// Whether any of its expressions reads `state`.
    pub fn reads_state(&self) -> bool {
        self.reads_state
    }
}

/// What a graph node runs.
pub enum GraphNodeKind {
    /// An LLM node or a nested workflow of the tree.
    Agent(AgentId),
    /// A declarative router.
    Router(Box<Router>),
    /// Waits for every predecessor, then passes their outputs on.
    Join,
}

/// One node of a workflow graph.
pub struct GraphNode {
    /// Its name (unique in the workflow).
    pub name: String,
    /// What it runs.
    pub kind: GraphNodeKind,
    /// It has no outgoing edge: its output is its workflow's.
    pub terminal: bool,
}

/// One edge; `from: None` is START.
pub struct GraphEdge {
    /// The node it leaves, `None` for START.
    pub from: Option<usize>,
    /// The node it reaches.
    pub to: usize,
    /// When it fires.
    pub route: EdgeRoute,
}

/// A workflow graph ready to run.
pub struct Graph {
    /// Its nodes.
    pub nodes: Vec<GraphNode>,
    /// Its edges, in declaration order.
    pub edges: Vec<GraphEdge>,
    /// At most this many nodes run at once.
    pub max_concurrency: Option<u32>,
    /// At most this many runs of one node per workflow run (adk-flow's extension).
    pub max_node_runs: Option<u32>,
}

/// One agent of the tree.
pub struct AgentNode {
    /// Unique name in the tree.
    pub name: String,
    /// What it does, shown to agents that may transfer to it.
    pub description: String,
    /// Its parent, `None` for the root.
    pub parent: Option<AgentId>,
    /// Its children, in order.
    pub sub_agents: Vec<AgentId>,
    /// Its kind.
    pub kind: AgentKind,
    /// Its declared callbacks.
    pub hooks: Hooks,
    /// What the runtime derives once from this agent and the tree (its tools, their
    /// declarations, the fixed part of its instruction), computed on first use.
    prepared: OnceLock<Arc<dyn Any + Send + Sync>>,
}

impl AgentNode {
    /// The runtime's per-agent constants of type `T`: computed by `init` on first use,
    /// then shared. The tree never changes after it is built, so neither do they.
    pub fn prepared<T: Send + Sync + 'static>(&self, init: impl FnOnce() -> T) -> Arc<T> {
        if let Some(done) = self.prepared.get()
            && let Ok(value) = Arc::clone(done).downcast::<T>()
        {
            return value;
        }
        let value = Arc::new(init());
        // Two first uses at once compute it twice; either result is the same.
        let _ = self
            .prepared
            .set(Arc::clone(&value) as Arc<dyn Any + Send + Sync>);
        value
    }

    /// The LLM settings, when this is an LLM agent.
    pub fn as_llm(&self) -> Option<&LlmAgent> {
        match &self.kind {
            AgentKind::Llm(llm) => Some(llm),
            _ => None,
        }
    }
}

/// All agents of a workflow; the first one added is the root.
#[derive(Default)]
pub struct AgentTree {
    nodes: Vec<AgentNode>,
    /// Whether an LLM agent has an AgentTool, found once (see [`AgentTree::has_agent_tool`]).
    agent_tool: OnceLock<bool>,
}

impl AgentTree {
    /// An empty tree.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds an agent under `parent` (the root when `None`) and returns its id.
    pub fn add(
        &mut self,
        parent: Option<AgentId>,
        name: impl Into<String>,
        description: impl Into<String>,
        kind: AgentKind,
    ) -> AgentId {
        let id = AgentId(self.nodes.len());
        self.agent_tool = OnceLock::new();
        self.nodes.push(AgentNode {
            name: name.into(),
            description: description.into(),
            parent,
            sub_agents: Vec::new(),
            kind,
            hooks: Hooks::default(),
            prepared: OnceLock::new(),
        });
        if let Some(p) = parent {
            self.nodes[p.0].sub_agents.push(id);
        }
        id
    }

    /// Replaces the kind of an agent (a graph is lowered once its nodes have ids).
    pub fn set_kind(&mut self, id: AgentId, kind: AgentKind) {
        self.agent_tool = OnceLock::new();
        self.nodes[id.0].kind = kind;
    }

    /// Sets the callbacks of an agent.
    pub fn set_hooks(&mut self, id: AgentId, hooks: Hooks) {
        self.nodes[id.0].hooks = hooks;
    }

    /// The root agent.
    pub fn root(&self) -> AgentId {
        AgentId(0)
    }

    /// The agent with this id.
    pub fn get(&self, id: AgentId) -> &AgentNode {
        &self.nodes[id.0]
    }

    /// The schema of the reply an agent ends with (ADK's `_get_output_schema`): an LLM
    /// agent's own, or that of its last sub-agent, recursively.
    pub fn output_schema(&self, id: AgentId) -> Option<&Arc<crate::model::schema::OutputSchema>> {
        let node = self.get(id);
        match node.as_llm() {
            Some(llm) => llm.output_schema.as_ref(),
            None => node.sub_agents.last().and_then(|&c| self.output_schema(c)),
        }
    }

    /// The schema of an AgentTool's arguments (ADK's `_get_input_schema`): an LLM agent's
    /// own `input_schema`, or that of its first sub-agent, recursively.
    pub fn input_schema(&self, id: AgentId) -> Option<&Arc<crate::model::schema::OutputSchema>> {
        let node = self.get(id);
        match node.as_llm() {
            Some(llm) => llm.input_schema.as_ref(),
            None => node.sub_agents.first().and_then(|&c| self.input_schema(c)),
        }
    }

    /// The agent with this name, anywhere in the tree.
    pub fn find(&self, name: &str) -> Option<AgentId> {
        self.nodes.iter().position(|n| n.name == name).map(AgentId)
    }

    /// All agent names, in tree order.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.nodes.iter().map(|n| n.name.as_str())
    }

    /// Whether an LLM agent of the tree has an AgentTool: found once, as every
    /// invocation of a workflow app asks it.
    pub fn has_agent_tool(&self) -> bool {
        *self.agent_tool.get_or_init(|| {
            self.nodes
                .iter()
                .filter_map(AgentNode::as_llm)
                .any(|l| l.tools.iter().any(|t| crate::tool::is_agent_tool(&**t)))
        })
    }

    /// Number of agents.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// Whether the tree has no agent.
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// ADK's `_get_transfer_targets`: sub-agents; then, only under an LLM parent, the
    /// parent and the peers unless disallowed.
    pub fn transfer_targets(&self, id: AgentId) -> Vec<AgentId> {
        let node = self.get(id);
        let Some(llm) = node.as_llm() else {
            return Vec::new();
        };
        let mut targets = node.sub_agents.clone();
        let Some(parent) = node.parent else {
            return targets;
        };
        if self.get(parent).as_llm().is_none() {
            return targets;
        }
        if !llm.disallow_transfer_to_parent {
            targets.push(parent);
        }
        if !llm.disallow_transfer_to_peers {
            targets.extend(
                self.get(parent)
                    .sub_agents
                    .iter()
                    .copied()
                    .filter(|&peer| peer != id),
            );
        }
        targets
    }

    /// ADK's `_is_transferable_across_agent_tree`: every agent from `id` to the root is an
    /// LLM agent that allows transfer to its parent. Such an agent keeps answering the
    /// next user message.
    pub fn is_transferable_across_tree(&self, id: AgentId) -> bool {
        let mut cur = Some(id);
        while let Some(c) = cur {
            let node = self.get(c);
            match node.as_llm() {
                Some(llm) if !llm.disallow_transfer_to_parent => cur = node.parent,
                _ => return false,
            }
        }
        true
    }
}
