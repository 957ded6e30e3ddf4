//! Where each box of the SVG picture goes: agent trees top-down, children side by side
//! under their parent; an ADK 2 workflow's nodes (START, its agents, Routers and
//! JoinNodes) in layers under the workflow's box, each node one layer below the
//! furthest node that leads to it (back edges, which close loops, do not count).

use super::workflow::{self, Extra};
use super::{EdgeKind, kind_name, tool_names};
use crate::config::{AgentSpec, AgentSpecKind};
use std::collections::HashMap;

/// Height of an agent's box.
pub const NODE_H: f64 = 58.0;
/// Height of a START, Router or JoinNode shape.
pub const EXTRA_H: f64 = 40.0;
/// Vertical room between a box and what hangs under it.
const ROW_GAP: f64 = 56.0;
/// Horizontal room between sibling subtrees.
const COL_GAP: f64 = 28.0;
/// Approximate advance of one character at the diagram's font size (system sans-serif,
/// 13px): generous, so names never overflow their boxes.
pub const CHAR_W: f64 = 7.4;
/// Longest tool list shown in a box; the full list is in the box's tooltip.
const TOOLS_MAX: usize = 34;

/// Where a box is.
#[derive(Debug, Clone, Copy)]
pub struct Place {
    /// Left edge.
    pub x: f64,
    /// Top edge.
    pub y: f64,
    /// Width.
    pub w: f64,
    /// Height.
    pub h: f64,
}

impl Place {
    /// Horizontal centre.
    pub fn cx(&self) -> f64 {
        self.x + self.w / 2.0
    }
    /// Right edge.
    pub fn right(&self) -> f64 {
        self.x + self.w
    }
    /// Vertical centre.
    pub fn cy(&self) -> f64 {
        self.y + self.h / 2.0
    }
    /// Bottom edge.
    pub fn bottom(&self) -> f64 {
        self.y + self.h
    }
}

/// An agent's three lines of text: name, kind (and model), tools.
pub fn lines(agent: &AgentSpec) -> (String, String, String) {
    let kind = match &agent.kind {
        AgentSpecKind::Llm(llm) => match &llm.model {
            Some(model) => format!("LlmAgent · {model}"),
            None => "LlmAgent".to_owned(),
        },
        _ => kind_name(agent),
    };
    let tools = tool_names(agent);
    let tools = if tools.is_empty() {
        String::new()
    } else {
        let all = format!("tools: {}", tools.join(", "));
        if all.chars().count() > TOOLS_MAX {
            let cut: String = all.chars().take(TOOLS_MAX - 1).collect();
            format!("{cut}…")
        } else {
            all
        }
    };
    (agent.name.clone(), kind, tools)
}

fn node_width(agent: &AgentSpec) -> f64 {
    let (name, kind, tools) = lines(agent);
    let longest = [
        name.chars().count() as f64 * 1.1,
        kind.chars().count() as f64 * 0.9,
        tools.chars().count() as f64 * 0.9,
    ]
    .into_iter()
    .fold(0.0, f64::max);
    (longest * CHAR_W + 24.0).max(96.0)
}

fn extra_width(extra: &Extra) -> f64 {
    let text = extra.label.chars().count() as f64 * CHAR_W + 28.0;
    match extra.shape {
        // A diamond needs about twice its text's width.
        workflow::Shape::Router => (text * 1.6).max(72.0),
        _ => text.max(64.0),
    }
}

/// One node of a workflow's layers: an agent's subtree or a shape.
enum Item<'a> {
    Agent(&'a AgentSpec),
    Extra(Extra),
}

/// A workflow's nodes by layer, in the order the workflow lists them.
fn layers(agent: &AgentSpec) -> Vec<Vec<Item<'_>>> {
    let mut items: Vec<(String, Item<'_>)> = workflow::extras(agent)
        .into_iter()
        .map(|x| (x.id.clone(), Item::Extra(x)))
        .collect();
    items.extend(
        agent
            .sub_agents
            .iter()
            .map(|a| (a.name.clone(), Item::Agent(a))),
    );
    let index: HashMap<String, usize> = items
        .iter()
        .enumerate()
        .map(|(i, (id, _))| (id.clone(), i))
        .collect();
    let edges: Vec<(usize, usize)> = workflow::edges(agent)
        .into_iter()
        .filter(|e| e.kind != EdgeKind::Back)
        .filter_map(|e| Some((*index.get(&e.from)?, *index.get(&e.to)?)))
        .collect();
    let mut rank = vec![0usize; items.len()];
    // Longest path on an acyclic graph: as many rounds as nodes at most.
    for _ in 0..items.len() {
        let mut changed = false;
        for &(a, b) in &edges {
            if rank[b] < rank[a] + 1 {
                rank[b] = rank[a] + 1;
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    let depth = rank.iter().copied().max().unwrap_or(0);
    let mut out: Vec<Vec<Item<'_>>> = (0..=depth).map(|_| Vec::new()).collect();
    for (i, (_, item)) in items.into_iter().enumerate() {
        out[rank[i]].push(item);
    }
    out.retain(|l| !l.is_empty());
    out
}

/// Lays the boxes out: `measure` then `place`, memoized by the agent's address.
#[derive(Default)]
pub struct Layout {
    sizes: HashMap<*const AgentSpec, (f64, f64)>,
    /// Every agent's box, by name (the first agent of a name wins).
    pub agents: Vec<(String, Place)>,
    /// Every START, Router and JoinNode, with its box.
    pub extras: Vec<(Extra, Place)>,
    /// Every workflow's block (its box and its nodes under it), by the workflow's name.
    pub blocks: Vec<(String, Place)>,
}

impl Layout {
    fn item_size(&mut self, item: &Item<'_>) -> (f64, f64) {
        match item {
            Item::Agent(a) => self.measure(a),
            Item::Extra(x) => (extra_width(x), EXTRA_H),
        }
    }

    /// Width and height of the block under and including `agent`.
    pub fn measure(&mut self, agent: &AgentSpec) -> (f64, f64) {
        if let Some(size) = self.sizes.get(&(agent as *const _)) {
            return *size;
        }
        let own = node_width(agent);
        let size = if let AgentSpecKind::Graph(_) = agent.kind {
            let mut w = own;
            let mut h = NODE_H;
            for layer in layers(agent) {
                let sizes: Vec<(f64, f64)> = layer.iter().map(|i| self.item_size(i)).collect();
                w = w.max(
                    sizes.iter().map(|s| s.0).sum::<f64>()
                        + COL_GAP * sizes.len().saturating_sub(1) as f64,
                );
                h += ROW_GAP + sizes.iter().map(|s| s.1).fold(0.0, f64::max);
            }
            (w, h)
        } else if agent.sub_agents.is_empty() {
            (own, NODE_H)
        } else {
            let sizes: Vec<(f64, f64)> = agent.sub_agents.iter().map(|s| self.measure(s)).collect();
            let children = sizes.iter().map(|s| s.0).sum::<f64>()
                + COL_GAP * sizes.len().saturating_sub(1) as f64;
            (
                own.max(children),
                NODE_H + ROW_GAP + sizes.iter().map(|s| s.1).fold(0.0, f64::max),
            )
        };
        self.sizes.insert(agent as *const _, size);
        size
    }

    /// Places `agent`'s block with its top left corner at (`left`, `top`).
    pub fn place(&mut self, agent: &AgentSpec, left: f64, top: f64) {
        let (band, _) = self.measure(agent);
        let w = node_width(agent);
        self.agents.push((
            agent.name.clone(),
            Place {
                x: left + (band - w) / 2.0,
                y: top,
                w,
                h: NODE_H,
            },
        ));
        let mut y = top + NODE_H + ROW_GAP;
        if let AgentSpecKind::Graph(_) = agent.kind {
            let (_, h) = self.measure(agent);
            self.blocks.push((
                agent.name.clone(),
                Place {
                    x: left,
                    y: top,
                    w: band,
                    h,
                },
            ));
            for layer in layers(agent) {
                let sizes: Vec<(f64, f64)> = layer.iter().map(|i| self.item_size(i)).collect();
                let width = sizes.iter().map(|s| s.0).sum::<f64>()
                    + COL_GAP * sizes.len().saturating_sub(1) as f64;
                let height = sizes.iter().map(|s| s.1).fold(0.0, f64::max);
                let mut x = left + (band - width) / 2.0;
                for (item, (w, h)) in layer.into_iter().zip(sizes) {
                    match item {
                        Item::Agent(a) => self.place(a, x, y),
                        Item::Extra(extra) => self.extras.push((
                            extra,
                            Place {
                                x,
                                y: y + (NODE_H.min(height) - h) / 2.0,
                                w,
                                h,
                            },
                        )),
                    }
                    x += w + COL_GAP;
                }
                y += height + ROW_GAP;
            }
            return;
        }
        let sizes: Vec<(f64, f64)> = agent.sub_agents.iter().map(|s| self.measure(s)).collect();
        let children =
            sizes.iter().map(|s| s.0).sum::<f64>() + COL_GAP * sizes.len().saturating_sub(1) as f64;
        let mut x = left + (band - children) / 2.0;
        for (sub, (w, _)) in agent.sub_agents.iter().zip(sizes) {
            self.place(sub, x, y);
            x += w + COL_GAP;
        }
    }
}
