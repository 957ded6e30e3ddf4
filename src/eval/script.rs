//! The `--script` file of `adk-flow eval`: the agents' replies in `run`'s script format,
//! plus the judge's and the simulated user's replies, served in order.
//!
//! ```yaml
//! replies:                      # per agent, as in `adk-flow run --script`
//!   weather_agent:
//!     - function_call: {name: get_weather, args: {city: Paris}}
//!     - text: "Sunny, 25 degrees."
//! judge:                        # judge calls in order: metric (config order), invocation, sample
//!   - '{"reasoning": "same facts", "is_the_agent_response_valid": "valid"}'
//!   - text: "Property: ...\nRationale: ...\nVerdict: yes"
//! user:                         # the user simulator's messages after the starting prompt
//!   - "And tomorrow?"
//!   - "</finished>"
//! ```
//!
//! Every list restarts for each eval case and each run.

use crate::model::Model;
use crate::model::scripted::{ReplyKeys, Script, ScriptedModel};
use serde::Deserialize;
use std::collections::HashMap;
use std::sync::Arc;

/// A judge or user reply: a plain string (the text) or a scripted reply.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum TextReply {
    /// The reply's text.
    Text(String),
    /// A full scripted reply (`text:`, `error:`...).
    Reply(Box<ReplyKeys>),
}

impl TextReply {
    fn reply(&self) -> ReplyKeys {
        match self {
            TextReply::Text(t) => ReplyKeys::text(t.clone()),
            TextReply::Reply(r) => (**r).clone(),
        }
    }
}

/// A whole eval script file.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EvalScript {
    /// Agent replies per agent name.
    #[serde(default)]
    pub replies: HashMap<String, Vec<ReplyKeys>>,
    /// Judge replies in call order.
    #[serde(default)]
    pub judge: Vec<TextReply>,
    /// Simulated user messages in order (after the starting prompt).
    #[serde(default)]
    pub user: Vec<TextReply>,
}

fn model(who: &str, replies: Vec<ReplyKeys>) -> Result<Arc<dyn Model>, String> {
    let script = Script {
        replies: HashMap::from([(who.to_owned(), replies)]),
    };
    Ok(Arc::new(
        ScriptedModel::new(script).map_err(|e| e.to_string())?,
    ))
}

impl EvalScript {
    /// Problems the types cannot catch (a reply with no kind or two), as (pointer, message).
    pub fn problems(&self) -> Vec<(String, String)> {
        let agents = Script {
            replies: self.replies.clone(),
        };
        let mut out: Vec<(String, String)> = agents
            .problems()
            .iter()
            .map(|p| (p.pointer(), p.to_string()))
            .collect();
        for (key, list) in [("judge", &self.judge), ("user", &self.user)] {
            let script = Script {
                replies: HashMap::from([(
                    key.to_owned(),
                    list.iter().map(TextReply::reply).collect(),
                )]),
            };
            out.extend(script.problems().iter().map(|p| {
                (
                    format!("/{key}/{}", p.index),
                    format!("{key}[{}]: {}", p.index, p.message),
                )
            }));
        }
        out
    }

    /// Fresh agent replies for one case run.
    ///
    /// # Errors
    /// A malformed reply.
    pub fn agents(&self) -> Result<Arc<dyn Model>, String> {
        let script = Script {
            replies: self.replies.clone(),
        };
        Ok(Arc::new(
            ScriptedModel::new(script).map_err(|e| e.to_string())?,
        ))
    }

    /// Fresh judge replies for one case run.
    ///
    /// # Errors
    /// A malformed reply.
    pub fn judge(&self) -> Result<Arc<dyn Model>, String> {
        model("judge", self.judge.iter().map(TextReply::reply).collect())
    }

    /// Fresh simulated-user replies for one case run.
    ///
    /// # Errors
    /// A malformed reply.
    pub fn user(&self) -> Result<Arc<dyn Model>, String> {
        model("user", self.user.iter().map(TextReply::reply).collect())
    }
}
