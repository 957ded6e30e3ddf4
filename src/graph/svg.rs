//! The diagram as SVG, laid out by adk-flow itself (no Graphviz): each tree of
//! [`trees`](super::trees) drawn top-down, side by side, with the edges of
//! [`edges`](super::edges) as curves.
//!
//! The picture is styled by classes (`af-node`, `af-llm`, `af-edge`, `af-transfer`, ...)
//! and one `<style>` element with a light and a dark scheme, so a page that embeds it can
//! restyle it and highlight an agent (`af-active`). Each agent is a group with the id
//! `agent-NAME` and `data-agent="NAME"`; class names carry the `af-` prefix because an
//! inline SVG's style applies to the whole page it is in.

use super::{Edge, EdgeKind, kind_name, tool_names, trees};
use crate::config::{AgentSpec, AgentSpecKind};
use std::collections::HashMap;
use std::fmt::Write as _;

/// Height of an agent's box.
const NODE_H: f64 = 58.0;
/// Vertical room between a parent's box and its children's.
const ROW_GAP: f64 = 56.0;
/// Horizontal room between sibling subtrees.
const COL_GAP: f64 = 28.0;
/// Horizontal room between trees (the workflow's and each `AgentTool`'s).
const TREE_GAP: f64 = 72.0;
/// Margin around the picture; wide enough for the curves of upward edges.
const MARGIN: f64 = 24.0;
/// Approximate advance of one character at the diagram's font size (system sans-serif,
/// 13px): generous, so names never overflow their boxes.
const CHAR_W: f64 = 7.4;
/// Longest tool list shown in a box; the full list is in the box's tooltip.
const TOOLS_MAX: usize = 34;

const STYLE: &str = "
.af-graph{font-family:system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;font-size:13px}
.af-node rect{fill:#ffffff;stroke:#5f6368;stroke-width:1.2}
.af-node.af-llm rect{fill:#e8f0fe;stroke:#1a73e8}
.af-node.af-workflow rect{fill:#f1f3f4;stroke:#5f6368;stroke-dasharray:0}
.af-node .af-name{font-weight:600;fill:#202124}
.af-node .af-kind,.af-node .af-tools{fill:#5f6368;font-size:11px}
.af-node.af-active rect{fill:#fef7e0;stroke:#e37400;stroke-width:3}
.af-node:focus{outline:none}.af-node:focus rect{stroke-width:3}
.af-edge path{fill:none;stroke:#5f6368;stroke-width:1.3}
.af-edge.af-transfer path{stroke-dasharray:6 4;stroke:#1a73e8}
.af-edge.af-agent-tool path{stroke-dasharray:2 3;stroke:#188038;stroke-width:2}
.af-edge text{fill:#3c4043;font-size:11px;paint-order:stroke;stroke:#ffffff;stroke-width:4px}
.af-arrow{fill:#5f6368}.af-arrow-transfer{fill:#1a73e8}.af-arrow-agent-tool{fill:#188038}
@media (prefers-color-scheme: dark){
.af-node rect{fill:#202124;stroke:#9aa0a6}
.af-node.af-llm rect{fill:#1c2b41;stroke:#8ab4f8}
.af-node.af-workflow rect{fill:#292a2d;stroke:#9aa0a6}
.af-node .af-name{fill:#e8eaed}
.af-node .af-kind,.af-node .af-tools{fill:#bdc1c6}
.af-node.af-active rect{fill:#3c2f00;stroke:#fdd663}
.af-edge path{stroke:#9aa0a6}.af-edge.af-transfer path{stroke:#8ab4f8}
.af-edge.af-agent-tool path{stroke:#81c995}
.af-edge text{fill:#e8eaed;stroke:#202124}
.af-arrow{fill:#9aa0a6}.af-arrow-transfer{fill:#8ab4f8}.af-arrow-agent-tool{fill:#81c995}
}
";

/// Where an agent's box is.
#[derive(Debug, Clone, Copy)]
struct Place {
    x: f64,
    y: f64,
    w: f64,
}

impl Place {
    fn cx(&self) -> f64 {
        self.x + self.w / 2.0
    }
    fn right(&self) -> f64 {
        self.x + self.w
    }
    fn cy(&self) -> f64 {
        self.y + NODE_H / 2.0
    }
}

/// An agent's three lines of text: name, kind (and model), tools.
fn lines(agent: &AgentSpec) -> (String, String, String) {
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
    ]
    .into_iter()
    .chain([tools.chars().count() as f64 * 0.9])
    .fold(0.0, f64::max);
    (longest * CHAR_W + 24.0).max(96.0)
}

/// Width of the subtree under `agent`, memoized by the agent's address.
fn subtree_width(agent: &AgentSpec, memo: &mut HashMap<*const AgentSpec, f64>) -> f64 {
    if let Some(w) = memo.get(&(agent as *const _)) {
        return *w;
    }
    let children: f64 = agent
        .sub_agents
        .iter()
        .map(|s| subtree_width(s, memo))
        .sum::<f64>()
        + COL_GAP * agent.sub_agents.len().saturating_sub(1) as f64;
    let w = node_width(agent).max(children);
    memo.insert(agent as *const _, w);
    w
}

/// Places `agent`'s subtree in the band starting at `left`, at `depth`.
fn place(
    agent: &AgentSpec,
    left: f64,
    depth: usize,
    memo: &mut HashMap<*const AgentSpec, f64>,
    out: &mut Vec<(String, Place)>,
) {
    let band = subtree_width(agent, memo);
    let w = node_width(agent);
    out.push((
        agent.name.clone(),
        Place {
            x: left + (band - w) / 2.0,
            y: MARGIN + depth as f64 * (NODE_H + ROW_GAP),
            w,
        },
    ));
    let children: f64 = agent
        .sub_agents
        .iter()
        .map(|s| subtree_width(s, memo))
        .sum::<f64>()
        + COL_GAP * agent.sub_agents.len().saturating_sub(1) as f64;
    let mut x = left + (band - children) / 2.0;
    for sub in &agent.sub_agents {
        place(sub, x, depth + 1, memo, out);
        x += subtree_width(sub, memo) + COL_GAP;
    }
}

/// Escapes text for XML content and attribute values.
fn esc(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

fn class_of(kind: EdgeKind) -> &'static str {
    match kind {
        EdgeKind::Structure => "af-structure",
        EdgeKind::Back => "af-back",
        EdgeKind::Transfer => "af-transfer",
        EdgeKind::AgentTool => "af-agent-tool",
    }
}

fn marker_of(kind: EdgeKind) -> &'static str {
    match kind {
        EdgeKind::Structure | EdgeKind::Back => "af-arrow",
        EdgeKind::Transfer => "af-arrow-transfer",
        EdgeKind::AgentTool => "af-arrow-agent-tool",
    }
}

/// The curve of an edge and the point its label sits on.
fn curve(a: Place, b: Place, lane: f64) -> (String, (f64, f64)) {
    let (p0, p1, p2, p3);
    if b.y > a.y + 1.0 {
        // Down the tree: bottom centre to top centre.
        p0 = (a.cx(), a.y + NODE_H);
        p3 = (b.cx(), b.y - 2.0);
        let mid = (p0.1 + p3.1) / 2.0;
        p1 = (p0.0, mid);
        p2 = (p3.0, mid);
    } else if b.y + 1.0 < a.y {
        // Up the tree (a loop's repeat, a transfer back, an AgentTool call): out of the
        // right side, around, into the right side.
        p0 = (a.right(), a.cy());
        p3 = (b.right() + 2.0, b.cy());
        let x = a.right().max(b.right()) + 36.0 + lane;
        p1 = (x, p0.1);
        p2 = (x, p3.1);
    } else {
        // Same row (peers, trees side by side): an arc above both.
        p0 = (a.cx(), a.y);
        p3 = (b.cx(), b.y - 2.0);
        let lift = 22.0 + (a.cx() - b.cx()).abs() * 0.12 + lane;
        p1 = (p0.0, a.y - lift);
        p2 = (p3.0, b.y - lift);
    }
    let label = (
        (p0.0 + 3.0 * p1.0 + 3.0 * p2.0 + p3.0) / 8.0,
        (p0.1 + 3.0 * p1.1 + 3.0 * p2.1 + p3.1) / 8.0,
    );
    (
        format!(
            "M{:.1},{:.1} C{:.1},{:.1} {:.1},{:.1} {:.1},{:.1}",
            p0.0, p0.1, p1.0, p1.1, p2.0, p2.1, p3.0, p3.1
        ),
        label,
    )
}

/// The SVG picture of a workflow: its agents as boxes (name, kind and model, tools), its
/// structure, transfers and `AgentTool` calls as edges.
pub fn svg(root: &AgentSpec) -> String {
    let mut memo = HashMap::new();
    let mut places: Vec<(String, Place)> = Vec::new();
    let mut left = MARGIN;
    let trees = trees(root);
    for tree in &trees {
        place(tree, left, 0, &mut memo, &mut places);
        left += subtree_width(tree, &mut memo) + TREE_GAP;
    }
    let mut at: HashMap<&str, Place> = HashMap::new();
    for (name, p) in &places {
        at.entry(name.as_str()).or_insert(*p);
    }
    let edges = super::edges(root);
    // A transfer both ways is one curve with two arrowheads; a loop's repeat is not the
    // reverse of its body edge, so it keeps its own curve.
    let mut drawn: Vec<(&Edge, bool)> = Vec::new();
    for e in &edges {
        if let Some(other) = drawn.iter_mut().find(|(d, _)| {
            e.kind == EdgeKind::Transfer && d.kind == e.kind && d.from == e.to && d.to == e.from
        }) {
            other.1 = true;
            continue;
        }
        drawn.push((e, false));
    }
    let max_right = places.iter().map(|(_, p)| p.right()).fold(MARGIN, f64::max);
    let max_bottom = places
        .iter()
        .map(|(_, p)| p.y + NODE_H)
        .fold(MARGIN, f64::max);
    let up_edges = drawn
        .iter()
        .filter(
            |(e, _)| match (at.get(e.from.as_str()), at.get(e.to.as_str())) {
                (Some(a), Some(b)) => b.y + 1.0 < a.y,
                _ => false,
            },
        )
        .count() as f64;
    let across =
        drawn.iter().any(
            |(e, _)| match (at.get(e.from.as_str()), at.get(e.to.as_str())) {
                (Some(a), Some(b)) => (a.y - b.y).abs() <= 1.0,
                _ => false,
            },
        );
    let repeat_label = drawn
        .iter()
        .filter(|(e, _)| e.kind == EdgeKind::Structure)
        .filter(
            |(e, _)| match (at.get(e.from.as_str()), at.get(e.to.as_str())) {
                (Some(a), Some(b)) => b.y + 1.0 < a.y,
                _ => false,
            },
        )
        .map(|(e, _)| e.label.chars().count() as f64 * CHAR_W * 0.85)
        .fold(0.0, f64::max);
    let width = max_right + MARGIN + 48.0 + up_edges * 10.0 + repeat_label;
    let height = max_bottom + MARGIN;
    // Arcs between boxes of one row rise above the top row.
    let top = if across { -48.0 } else { 0.0 };

    let mut s = String::new();
    let _ = writeln!(
        s,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"af-graph\" viewBox=\"0 {top:.0} {width:.0} {:.0}\" width=\"{width:.0}\" height=\"{:.0}\" role=\"img\" aria-label=\"Agents of {}\">",
        height - top,
        height - top,
        esc(&root.name)
    );
    let _ = writeln!(s, "<title>{}</title>", esc(&root.name));
    let _ = writeln!(s, "<style>{STYLE}</style>");
    s.push_str("<defs>\n");
    for class in ["af-arrow", "af-arrow-transfer", "af-arrow-agent-tool"] {
        let _ = writeln!(
            s,
            "<marker id=\"{class}\" viewBox=\"0 0 10 10\" refX=\"9\" refY=\"5\" markerWidth=\"8\" markerHeight=\"8\" orient=\"auto-start-reverse\"><path class=\"{class}\" d=\"M0,0 L10,5 L0,10 z\"/></marker>"
        );
    }
    s.push_str("</defs>\n<g class=\"af-edges\">\n");
    let mut lane = 0.0;
    for (e, both) in &drawn {
        let (Some(a), Some(b)) = (at.get(e.from.as_str()), at.get(e.to.as_str())) else {
            continue;
        };
        let up = b.y + 1.0 < a.y;
        let (path, (lx, ly)) = curve(*a, *b, if up { lane } else { 0.0 });
        if up {
            lane += 10.0;
        }
        let marker = marker_of(e.kind);
        let start = if *both {
            format!(" marker-start=\"url(#{marker})\"")
        } else {
            String::new()
        };
        let title = if *both {
            format!("{} ⇄ {}: {}", e.from, e.to, e.label)
        } else {
            format!("{} → {}: {}", e.from, e.to, e.label)
        };
        let _ = write!(
            s,
            "<g class=\"af-edge {}\" data-from=\"{}\" data-to=\"{}\"><title>{}</title><path d=\"{path}\"{start} marker-end=\"url(#{marker})\"/>",
            class_of(e.kind),
            esc(&e.from),
            esc(&e.to),
            esc(&title)
        );
        // Labels on edges going down or across, and on loops' repeats; the transfers back
        // up are many (every one to a parent) and their meaning is in the tooltip.
        if !up {
            let _ = write!(
                s,
                "<text x=\"{lx:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>",
                ly + 4.0,
                esc(&e.label)
            );
        } else if e.kind == EdgeKind::Structure {
            let _ = write!(
                s,
                "<text x=\"{:.1}\" y=\"{:.1}\">{}</text>",
                lx + 6.0,
                ly + 4.0,
                esc(&e.label)
            );
        }
        s.push_str("</g>\n");
    }
    s.push_str("</g>\n<g class=\"af-nodes\">\n");
    let agents: Vec<&AgentSpec> = trees.iter().flat_map(|t| t.walk()).collect();
    let mut seen = std::collections::HashSet::new();
    for agent in agents {
        if !seen.insert(agent.name.as_str()) {
            continue;
        }
        let Some(p) = at.get(agent.name.as_str()) else {
            continue;
        };
        let (name, kind, tools) = lines(agent);
        let class = match agent.kind {
            AgentSpecKind::Llm(_) => "af-llm",
            _ => "af-workflow",
        };
        let full_tools = tool_names(agent).join(", ");
        let tip = if full_tools.is_empty() {
            format!("{name}: {kind}")
        } else {
            format!("{name}: {kind}; tools: {full_tools}")
        };
        let _ = write!(
            s,
            "<g class=\"af-node {class}\" id=\"agent-{}\" data-agent=\"{}\" tabindex=\"0\" aria-label=\"{}\"><title>{}</title><rect x=\"{:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{NODE_H:.0}\" rx=\"{}\"/>",
            esc(&name),
            esc(&name),
            esc(&tip),
            esc(&tip),
            p.x,
            p.y,
            p.w,
            if class == "af-llm" { 10 } else { 3 },
        );
        let cx = p.cx();
        let rows: Vec<(&str, &str)> = [("af-name", name.as_str()), ("af-kind", kind.as_str())]
            .into_iter()
            .chain((!tools.is_empty()).then_some(("af-tools", tools.as_str())))
            .collect();
        let first = if rows.len() == 3 { 18.0 } else { 24.0 };
        for (i, (class, text)) in rows.iter().enumerate() {
            let _ = write!(
                s,
                "<text class=\"{class}\" x=\"{cx:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>",
                p.y + first + i as f64 * 16.0,
                esc(text)
            );
        }
        s.push_str("</g>\n");
    }
    s.push_str("</g>\n</svg>\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{self, FileAccess, LoadOptions};

    fn load(yaml: &str) -> AgentSpec {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("root.yaml");
        std::fs::write(&path, yaml).unwrap();
        let env = |_: &str| None;
        let loaded = config::load(
            &path,
            &LoadOptions {
                env: &env,
                unset_env_is_error: false,
                files: FileAccess::default(),
            },
        );
        loaded.workflow.expect("loads").root
    }

    /// `(x, y, width, height)` of every box, read back from the picture.
    fn boxes(svg: &str) -> Vec<(f64, f64, f64, f64)> {
        svg.split("<rect ")
            .skip(1)
            .map(|r| {
                let attr = |name: &str| -> f64 {
                    let start = r.find(&format!("{name}=\"")).unwrap() + name.len() + 2;
                    r[start..start + r[start..].find('"').unwrap()]
                        .parse()
                        .unwrap()
                };
                (attr("x"), attr("y"), attr("width"), attr("height"))
            })
            .collect()
    }

    #[test]
    fn boxes_never_overlap_and_fit_the_picture() {
        let root = load(
            "agent_class: SequentialAgent\nname: pipeline_with_a_long_name\nsub_agents:\n  - agent_class: ParallelAgent\n    name: fan\n    sub_agents:\n      - {name: one_agent_with_a_very_long_name_indeed, model: m, instruction: x}\n      - {name: b, model: m, instruction: x}\n      - {name: c, model: m, instruction: x}\n  - agent_class: LoopAgent\n    name: loop\n    sub_agents:\n      - {name: d, model: m, instruction: x, tools: [{name: exit_loop}]}\n  - {name: e, model: m, instruction: x}\n",
        );
        let svg = svg(&root);
        let width: f64 = svg
            .split("width=\"")
            .nth(1)
            .unwrap()
            .split('"')
            .next()
            .unwrap()
            .parse()
            .unwrap();
        let b = boxes(&svg);
        assert_eq!(b.len(), 8, "{svg}");
        for (i, p) in b.iter().enumerate() {
            assert!(
                p.0 >= 0.0 && p.0 + p.2 <= width,
                "box {i} outside: {p:?} {width}"
            );
            for q in &b[i + 1..] {
                let apart =
                    p.0 + p.2 <= q.0 || q.0 + q.2 <= p.0 || p.1 + p.3 <= q.1 || q.1 + q.3 <= p.1;
                assert!(apart, "{p:?} overlaps {q:?}");
            }
        }
    }

    #[test]
    fn text_is_escaped() {
        assert_eq!(
            esc("a<b & \"c\" 'd'>"),
            "a&lt;b &amp; &quot;c&quot; &#39;d&#39;&gt;"
        );
        let root = load("name: r\nmodel: \"x<y&z\"\ninstruction: x\n");
        let svg = svg(&root);
        assert!(svg.contains("LlmAgent · x&lt;y&amp;z"), "{svg}");
        assert!(!svg.contains("x<y"), "{svg}");
    }
}
