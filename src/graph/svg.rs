//! The diagram as SVG, laid out by adk-flow itself (no Graphviz): each tree of
//! [`trees`](super::trees) drawn top-down, side by side, with the edges of
//! [`edges`](super::edges) as curves.
//!
//! An ADK 2 workflow's START, Routers and JoinNodes are a pill, a diamond and a hexagon
//! (`af-start`, `af-router`, `af-join`, with `data-node`), laid out in layers by
//! [`layout`](super::layout); loops' back edges curve back up.
//!
//! The picture is styled by classes (`af-node`, `af-llm`, `af-edge`, `af-transfer`, ...)
//! and one `<style>` element with a light and a dark scheme, so a page that embeds it can
//! restyle it and highlight an agent (`af-active`). Each agent is a group with the id
//! `agent-NAME` and `data-agent="NAME"`; class names carry the `af-` prefix because an
//! inline SVG's style applies to the whole page it is in.

use super::layout::{CHAR_W, Layout, Place, lines};
use super::route::{curve, points};
use super::style::{STYLE, class_of, esc, marker_of};
use super::workflow::Shape;
use super::{Edge, EdgeKind, tool_names, trees};
use crate::config::{AgentSpec, AgentSpecKind};
use std::collections::HashMap;
use std::fmt::Write as _;

/// Horizontal room between trees (the workflow's and each `AgentTool`'s).
const TREE_GAP: f64 = 72.0;
/// Margin around the picture; wide enough for the curves of upward edges.
const MARGIN: f64 = 24.0;

/// The SVG picture of a workflow: its agents as boxes (name, kind and model, tools), its
/// structure, transfers and `AgentTool` calls as edges.
pub fn svg(root: &AgentSpec) -> String {
    let mut layout = Layout::default();
    let mut left = MARGIN;
    let trees = trees(root);
    for tree in &trees {
        layout.place(tree, left, MARGIN);
        left += layout.measure(tree).0 + TREE_GAP;
    }
    let places: Vec<(String, Place)> = layout
        .agents
        .iter()
        .cloned()
        .chain(layout.extras.iter().map(|(x, p)| (x.id.clone(), *p)))
        .collect();
    let mut at: HashMap<&str, Place> = HashMap::new();
    for (name, p) in &places {
        at.entry(name.as_str()).or_insert(*p);
    }
    let blocks = &layout.blocks;
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
    // Edges rerouted beside a nested workflow's block run right of it, one lane each.
    let nested: Vec<&Place> = blocks
        .iter()
        .filter(|(name, _)| !trees.iter().any(|t| t.name == *name))
        .map(|(_, r)| r)
        .collect();
    let max_right = places
        .iter()
        .map(|(_, p)| p.right())
        .chain(
            nested
                .iter()
                .map(|r| r.right() + 14.0 + 8.0 * nested.len() as f64),
        )
        .fold(MARGIN, f64::max);
    let max_bottom = places
        .iter()
        .map(|(_, p)| p.bottom())
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
        .filter(|(e, _)| matches!(e.kind, EdgeKind::Structure | EdgeKind::Back))
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
    s.push_str("<defs>\n");
    for class in ["af-arrow", "af-arrow-transfer", "af-arrow-agent-tool"] {
        let _ = writeln!(
            s,
            "<marker id=\"{class}\" viewBox=\"0 0 10 10\" refX=\"9\" refY=\"5\" markerUnits=\"userSpaceOnUse\" markerWidth=\"10\" markerHeight=\"10\" orient=\"auto-start-reverse\"><path class=\"{class}\" d=\"M0,0 L10,5 L0,10 z\"/></marker>"
        );
    }
    s.push_str("</defs>\n<g class=\"af-edges\">\n");
    let mut lane = 0.0;
    let mut side_lane = 0.0;
    // The rightmost lane of an edge rerouted around a block: the picture is widened to it.
    let mut rerouted_right: f64 = 0.0;
    for (e, both) in &drawn {
        let (Some(a), Some(b)) = (at.get(e.from.as_str()), at.get(e.to.as_str())) else {
            continue;
        };
        let up = b.y + 1.0 < a.y;
        // A downward edge goes around the nested workflows' blocks it would cross.
        let rerouted = (b.y > a.y + 1.0)
            .then(|| {
                let own = blocks
                    .iter()
                    .find(|(name, r)| *name == e.from && (r.y - a.y).abs() < 0.5)
                    .map(|(_, r)| r)
                    .filter(|r| {
                        !(b.y >= r.y
                            && b.bottom() <= r.bottom() + 0.5
                            && b.x >= r.x - 0.5
                            && b.right() <= r.right() + 0.5)
                    });
                let others: Vec<&Place> = blocks.iter().map(|(_, r)| r).collect();
                super::route::around(a, b, points(*a, *b, 0.0), &others, own, side_lane)
            })
            .flatten();
        if let Some((_, (x, _))) = &rerouted {
            side_lane += 8.0;
            rerouted_right = rerouted_right.max(*x);
        }
        let (path, (lx, ly)) =
            rerouted.unwrap_or_else(|| curve(*a, *b, if up { lane } else { 0.0 }));
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
        // Labels on edges going down or across, and on loops' repeats (a LoopAgent's, a
        // workflow's back edge: `retry`); the transfers back up are many (every one to a
        // parent) and their meaning is in the tooltip.
        if !up {
            let _ = write!(
                s,
                "<text x=\"{lx:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>",
                ly + 4.0,
                esc(&e.label)
            );
        } else if matches!(e.kind, EdgeKind::Structure | EdgeKind::Back) {
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
            "<g class=\"af-node {class}\" id=\"agent-{}\" data-agent=\"{}\" tabindex=\"0\" aria-label=\"{}\"><title>{}</title><rect x=\"{:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{:.0}\" rx=\"{}\"/>",
            esc(&name),
            esc(&name),
            esc(&tip),
            esc(&tip),
            p.x,
            p.y,
            p.w,
            p.h,
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
    for (extra, p) in &layout.extras {
        let (class, shape) = match extra.shape {
            Shape::Start => (
                "af-start",
                format!(
                    "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{:.1}\" rx=\"{:.1}\"/>",
                    p.x,
                    p.y,
                    p.w,
                    p.h,
                    p.h / 2.0
                ),
            ),
            Shape::Router => (
                "af-router",
                format!(
                    "<polygon points=\"{:.1},{:.1} {:.1},{:.1} {:.1},{:.1} {:.1},{:.1}\"/>",
                    p.cx(),
                    p.y,
                    p.right(),
                    p.cy(),
                    p.cx(),
                    p.bottom(),
                    p.x,
                    p.cy()
                ),
            ),
            Shape::Join => {
                let d = 12.0;
                (
                    "af-join",
                    format!(
                        "<polygon points=\"{:.1},{:.1} {:.1},{:.1} {:.1},{:.1} {:.1},{:.1} {:.1},{:.1} {:.1},{:.1}\"/>",
                        p.x + d,
                        p.y,
                        p.right() - d,
                        p.y,
                        p.right(),
                        p.cy(),
                        p.right() - d,
                        p.bottom(),
                        p.x + d,
                        p.bottom(),
                        p.x,
                        p.cy()
                    ),
                )
            }
        };
        let tip = match extra.shape {
            Shape::Start => "START".to_owned(),
            Shape::Router => format!("{}: adk_flow.Router", extra.label),
            Shape::Join => format!("{}: JoinNode", extra.label),
        };
        let _ = writeln!(
            s,
            "<g class=\"af-node {class}\" id=\"node-{}\" data-node=\"{}\"><title>{}</title>{shape}<text class=\"af-name\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text></g>",
            esc(&extra.id),
            esc(&extra.id),
            esc(&tip),
            p.cx(),
            p.cy() + 4.0,
            esc(&extra.label)
        );
    }
    s.push_str("</g>\n</svg>\n");
    // Wide enough for the lanes of edges rerouted around blocks.
    let width = width.max(rerouted_right + MARGIN);
    let mut head = String::new();
    let _ = writeln!(
        head,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"af-graph\" viewBox=\"0 {top:.0} {width:.0} {:.0}\" width=\"{width:.0}\" height=\"{:.0}\" role=\"img\" aria-label=\"Agents of {}\">",
        height - top,
        height - top,
        esc(&root.name)
    );
    let _ = writeln!(head, "<title>{}</title>", esc(&root.name));
    let _ = writeln!(head, "<style>{STYLE}</style>");
    head.push_str(&s);
    head
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
