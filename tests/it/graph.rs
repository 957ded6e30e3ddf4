//! `adk-flow graph`: the tree, transfer edges and loops, in Mermaid and DOT.

use crate::common;

fn graph(args: &[&str]) -> String {
    let out = common::bin()
        .current_dir(common::repo())
        .arg("graph")
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn mermaid_shows_transfers_steps_and_loops() {
    let m = graph(&["workflows/support.yaml"]);
    assert!(m.starts_with("flowchart TD\n"));
    assert!(m.contains("support_router -.->|transfer| orders"), "{m}");
    assert!(
        m.contains("support_router -.->|transfer| app_support"),
        "{m}"
    );
    // The teams are workflow agents: no way back to the router or over to the other team.
    assert!(!m.contains("orders -.->"), "{m}");
    assert!(m.contains("orders -->|step 2| order_desk"), "{m}");
    assert!(m.contains("app_support -->|step 2| review"), "{m}");
    assert!(m.contains("review -->|body 1| drafter"), "{m}");
    assert!(
        m.contains("checker -->|repeat until exit_loop| review"),
        "{m}"
    );
    assert!(m.contains("LoopAgent, at most 3"), "{m}");
    // Children of a LoopAgent cannot transfer to their parent or peers.
    assert!(!m.contains("drafter -.->"), "{m}");
}

#[test]
fn dot_output_and_parallel_branches() {
    let d = graph(&["workflows/parallel.yaml", "--format", "dot"]);
    assert!(d.starts_with("digraph \"research\" {"), "{d}");
    assert!(
        d.contains("\"fan_out\" -> \"pros\" [label=\"branch\"];"),
        "{d}"
    );
    assert!(
        d.contains("\"research\" -> \"synthesizer\" [label=\"step 2\"];"),
        "{d}"
    );
    assert!(d.trim_end().ends_with('}'));
}

#[test]
fn an_invalid_workflow_is_reported_not_drawn() {
    let dir = common::write_files(&[("root_agent.yaml", "name: a\nmodle: x\n")]);
    let out = common::bin()
        .current_dir(dir.path())
        .args(["graph", "root_agent.yaml"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8(out.stderr)
            .unwrap()
            .contains("root_agent.yaml:2:1: error: unknown key `modle`")
    );
}

/// Agents called through `AgentTool` are drawn with an edge of their own (dotted in DOT,
/// thick in Mermaid), with their own trees; each LLM agent lists its tools.
#[test]
fn agent_tools_and_each_agents_tools_are_drawn() {
    let dir = common::write_files(&[
        (
            "root.yaml",
            "name: writer\nmodel: m\ninstruction: Write.\ntools:\n  - name: exit_loop\n  - name: AgentTool\n    args:\n      agent: {config_path: research.yaml}\n",
        ),
        (
            "research.yaml",
            "agent_class: SequentialAgent\nname: research\nsub_agents:\n  - name: search\n    model: m\n    instruction: Search.\n  - name: summarize\n    model: m\n    instruction: Summarize.\n",
        ),
    ]);
    let run = |format: &str| {
        let out = common::bin()
            .current_dir(dir.path())
            .args(["graph", "root.yaml", "--format", format])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    let d = run("dot");
    assert!(
        d.contains(
            "\"writer\" [shape=box, style=rounded, label=\"writer\\nLlmAgent\\ntools: exit_loop\"];"
        ),
        "{d}"
    );
    assert!(
        d.contains("\"writer\" -> \"research\" [label=\"AgentTool\", style=dotted];"),
        "{d}"
    );
    // The called agent's own tree is drawn, and it is no transfer target of the caller.
    assert!(
        d.contains("\"research\" -> \"summarize\" [label=\"step 2\"];"),
        "{d}"
    );
    assert!(
        !d.contains("\"writer\" -> \"research\" [label=\"transfer\""),
        "{d}"
    );
    let m = run("mermaid");
    assert!(m.contains("writer ==>|AgentTool| research"), "{m}");
    assert!(m.contains("<small>tools: exit_loop</small>"), "{m}");
    assert!(
        m.contains("search[\"search<br/><small>LlmAgent</small>\"]"),
        "{m}"
    );
}

/// `--format svg`: a picture laid out by adk-flow, one box per agent (the page finds them
/// by `data-agent`), edges by kind with their labels, tools in the boxes, in a light and a
/// dark scheme; an agent called through `AgentTool` gets an edge of its own.
#[test]
fn svg_draws_every_agent_and_edge() {
    let s = graph(&["workflows/support.yaml", "--format", "svg"]);
    assert!(
        s.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""),
        "{s}"
    );
    assert!(s.trim_end().ends_with("</svg>"), "{s}");
    for agent in [
        "support_router",
        "orders",
        "app_support",
        "order_desk",
        "review",
        "drafter",
        "checker",
    ] {
        assert_eq!(
            s.matches(&format!("data-agent=\"{agent}\"")).count(),
            1,
            "{agent}: {s}"
        );
    }
    assert!(
        s.contains(
            "<g class=\"af-edge af-transfer\" data-from=\"support_router\" data-to=\"orders\">"
        ),
        "{s}"
    );
    assert!(
        s.contains("data-from=\"checker\" data-to=\"review\"><title>checker → review: repeat until exit_loop</title>"),
        "{s}"
    );
    assert!(s.contains(">tools: exit_loop, support_docs</text>"), "{s}");
    assert!(s.contains(">LoopAgent, at most 3</text>"), "{s}");
    assert!(s.contains("@media (prefers-color-scheme: dark)"), "{s}");
    // The orders team may not transfer anywhere: only its steps leave it.
    assert!(!s.contains("af-transfer\" data-from=\"orders\""), "{s}");

    let dir = common::write_files(&[
        (
            "root.yaml",
            "name: writer\nmodel: m\ninstruction: Write.\nsub_agents:\n  - {name: a, model: m, instruction: A.}\n  - {name: b, model: m, instruction: B.}\ntools:\n  - name: AgentTool\n    args:\n      agent: {config_path: research.yaml}\n",
        ),
        (
            "research.yaml",
            "name: research\nmodel: m\ninstruction: Search.\n",
        ),
    ]);
    let out = common::bin()
        .current_dir(dir.path())
        .args(["graph", "root.yaml", "--format", "svg"])
        .output()
        .unwrap();
    let s = String::from_utf8(out.stdout).unwrap();
    assert!(
        s.contains("<g class=\"af-edge af-agent-tool\" data-from=\"writer\" data-to=\"research\">"),
        "{s}"
    );
    // Peers that may transfer to each other share one curve with two arrowheads.
    assert!(
        s.contains("data-from=\"a\" data-to=\"b\"><title>a ⇄ b: transfer</title>"),
        "{s}"
    );
    assert!(!s.contains("data-from=\"b\" data-to=\"a\""), "{s}");
}

#[test]
fn workflows_are_drawn_with_start_routers_joins_labels_and_back_edges() {
    let m = graph(&["tests/data/graphs/appendix_loop/root_agent.yaml"]);
    assert!(m.contains("    headline_wf__START((\"START\"))\n"), "{m}");
    assert!(m.contains("    headline_wf__judge{\"judge\"}\n"), "{m}");
    assert!(m.contains("    headline_wf__START --> writer\n"), "{m}");
    assert!(m.contains("    writer --> headline_wf__judge\n"), "{m}");
    // The loop's edge goes back to the writer; the way out is labelled.
    assert!(
        m.contains("    headline_wf__judge -->|↺ retry| writer\n"),
        "{m}"
    );
    assert!(
        m.contains("    headline_wf__judge -->|done| headline_wf__publish\n"),
        "{m}"
    );
    let d = graph(&[
        "tests/data/graphs/fanout_join/root_agent.yaml",
        "--format",
        "dot",
    ]);
    assert!(
        d.contains("\"research__gather\" [shape=hexagon, label=\"gather\"];"),
        "{d}"
    );
    for researcher in ["facts", "quotes", "numbers"] {
        assert!(
            d.contains(&format!("\"research__START\" -> \"{researcher}\"")),
            "{d}"
        );
        assert!(
            d.contains(&format!("\"{researcher}\" -> \"research__gather\"")),
            "{d}"
        );
    }
    let d = graph(&[
        "tests/data/graphs/appendix_loop/root_agent.yaml",
        "--format",
        "dot",
    ]);
    assert!(
        d.contains(
            "\"headline_wf__judge\" -> \"writer\" [label=\"retry\", style=bold, constraint=false];"
        ),
        "{d}"
    );
    // Nested workflows are drawn inside, from their own START; labels keep their type.
    let m = graph(&["tests/data/graphs/nested_workflow/root_agent.yaml"]);
    assert!(m.matches("__START((\"START\"))").count() >= 2, "{m}");
    let m = graph(&["tests/data/graphs/labels_int_bool/root_agent.yaml"]);
    assert!(m.contains("-->|1| int_one"), "{m}");
    // A route list's text is quoted: `|true | never|` does not parse in Mermaid.
    assert!(m.contains("-->|\"true | never\"| bool_true"), "{m}");
}

/// Edge texts that would break the diagram's syntax are quoted or escaped: a `|` or `"`
/// in Mermaid, a `"` or `\` in DOT.
#[test]
fn labels_with_pipes_and_quotes_stay_inside_their_edge() {
    let dir = common::write_files(&[(
        "root_agent.yaml",
        "agent_class: Workflow\nname: wf\nedges:\n  - - START\n    - {name: r, agent_class: adk_flow.Router, route: \"input\"}\n    - 'say \"hi\" \\ bye': {name: a, agent_class: adk_flow.Router, route: \"none\"}\n  - {from_node: r, to_node: a, route: [x, y]}\n",
    )]);
    let root = dir.path().join("root_agent.yaml");
    let root = root.to_str().unwrap();
    let m = graph(&[root]);
    assert!(
        m.contains("wf__r -->|\"say #quot;hi#quot; \\ bye\"| wf__a"),
        "{m}"
    );
    assert!(m.contains("wf__r -->|\"x | y\"| wf__a"), "{m}");
    let d = graph(&[root, "--format", "dot"]);
    assert!(
        d.contains("\"wf__r\" -> \"wf__a\" [label=\"say \\\"hi\\\" \\\\ bye\"];"),
        "{d}"
    );
}

/// `--format svg` draws an ADK 2 workflow in layers: START a pill, each Router a diamond,
/// the routed nodes side by side with their labels, and the edge closing the review loop
/// curving back up.
#[test]
fn svg_draws_workflow_graphs() {
    let s = graph(&["workflows/helpdesk.yaml", "--format", "svg"]);
    assert!(
        s.contains("<g class=\"af-node af-start\" id=\"node-helpdesk__START\""),
        "{s}"
    );
    assert!(
        s.contains("<g class=\"af-node af-router\" id=\"node-helpdesk__gate\" data-node=\"helpdesk__gate\"><title>gate: adk_flow.Router</title><polygon"),
        "{s}"
    );
    for agent in [
        "triage", "billing", "tech", "general", "reviewer", "rewriter",
    ] {
        assert_eq!(
            s.matches(&format!("data-agent=\"{agent}\"")).count(),
            1,
            "{agent}: {s}"
        );
    }
    assert!(
        s.contains("<g class=\"af-edge af-back\" data-from=\"rewriter\" data-to=\"reviewer\">"),
        "{s}"
    );
    assert!(
        s.contains(
            "data-from=\"triage\" data-to=\"billing\"><title>triage → billing: billing</title>"
        ),
        "{s}"
    );
    // The routed specialists share one layer: their boxes start at the same height.
    let top = |agent: &str| -> String {
        let at = s.find(&format!("data-agent=\"{agent}\"")).unwrap();
        let rect = &s[at..];
        let y = &rect[rect.find(" y=\"").unwrap() + 4..];
        y[..y.find('"').unwrap()].to_owned()
    };
    assert_eq!(top("billing"), top("tech"));
    assert_eq!(top("tech"), top("general"));
    assert_ne!(top("triage"), top("billing"));
}

/// A loop's back edge is its labelled repeat where the loop can be entered twice:
/// `research_nested_join` enters its loop at `deep` (from `plan`) and at `gather` (from
/// `web`); `decide`'s `more` edge back to `deep` closes it, not `deep`'s plain edge on
/// to the JoinNode (which a depth-first walk reached first). Every format agrees.
#[test]
fn a_loop_entered_twice_is_closed_by_its_labelled_repeat() {
    let root = "tests/data/graphs/research_nested_join/root_agent.yaml";
    let m = graph(&[root]);
    assert!(m.contains("research__decide -->|↺ more| deep"), "{m}");
    assert!(m.contains("deep --> research__gather\n"), "{m}");
    let d = graph(&[root, "--format", "dot"]);
    let line = |from: &str, to: &str| {
        d.lines()
            .find(|l| l.contains(&format!("\"{from}\" -> \"{to}\"")))
            .unwrap_or_else(|| panic!("{from} -> {to}: {d}"))
            .to_owned()
    };
    assert!(
        line("research__decide", "deep").contains("constraint=false"),
        "{d}"
    );
    assert!(
        !line("deep", "research__gather").contains("constraint=false"),
        "{d}"
    );
    let m = graph(&["tests/data/graphs/join_in_loop_terminal_join/root_agent.yaml"]);
    assert!(m.contains("joins__right --> joins__meet\n"), "{m}");
    assert!(m.contains("joins__loop -->|↺ again| joins__right"), "{m}");
}

/// The SVG labels a loop's back edge (`retry`), as Mermaid and DOT do.
#[test]
fn svg_labels_back_edges() {
    let s = graph(&[
        "tests/data/graphs/appendix_loop/root_agent.yaml",
        "--format",
        "svg",
    ]);
    let at = s
        .find("<g class=\"af-edge af-back\" data-from=\"headline_wf__judge\" data-to=\"writer\">")
        .unwrap_or_else(|| panic!("{s}"));
    let edge = &s[at..at + s[at..].find("</g>").unwrap()];
    assert!(edge.contains(">retry</text>"), "{edge}");
}

/// A 5,000-node chain whose every 10th node loops back 10 nodes: each loop is closed by
/// its labelled repeat, and nothing else is a back edge. (The back-edge search scanned
/// every edge for every node at every step: this file took over 10 minutes in a debug
/// build; it now takes under a second.)
#[test]
fn a_long_chain_with_back_edges_draws() {
    let dir = tempfile::tempdir().unwrap();
    let n = 5000;
    let mut yaml = String::from("name: wf\nagent_class: Workflow\nedges:\n  - - START\n");
    for i in 0..n {
        yaml.push_str(&format!(
            "    - {{name: r{i}, agent_class: adk_flow.Router, route: \"'a'\"}}\n"
        ));
    }
    for i in (10..n).step_by(10) {
        yaml.push_str(&format!(
            "  - {{from_node: r{i}, to_node: r{}, route: again}}\n",
            i - 10
        ));
    }
    let file = dir.path().join("chain.yaml");
    std::fs::write(&file, yaml).unwrap();
    let m = graph(&[file.to_str().unwrap()]);
    let back: Vec<&str> = m.lines().filter(|l| l.contains("↺")).collect();
    assert_eq!(back.len(), n / 10 - 1, "{}", back.join("\n"));
    for i in (10..n).step_by(10) {
        assert!(
            m.contains(&format!("    wf__r{i} -->|↺ again| wf__r{}\n", i - 10)),
            "r{i}"
        );
    }
    for i in 1..n {
        assert!(
            m.contains(&format!("    wf__r{} --> wf__r{i}\n", i - 1)),
            "r{i}"
        );
    }
}

/// The points along an SVG path of `M`, `C` and `L` commands (absolute), 20 per segment.
/// The width of an SVG picture (its root's `width`).
fn svg_width(svg: &str) -> f64 {
    svg.split("width=\"")
        .nth(1)
        .and_then(|v| v.split('"').next())
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no width: {svg}"))
}

/// The path (`d`) of the SVG picture's edge `from -> to`.
fn svg_edge_path(svg: &str, from: &str, to: &str) -> String {
    svg.split(&format!("data-from=\"{from}\" data-to=\"{to}\""))
        .nth(1)
        .and_then(|g| g.split("<path d=\"").nth(1))
        .and_then(|d| d.split('"').next())
        .unwrap_or_else(|| panic!("{from} -> {to}: {svg}"))
        .to_owned()
}

fn path_points(d: &str) -> Vec<(f64, f64)> {
    let mut nums = d
        .split(|c: char| c.is_ascii_alphabetic() || c == ' ')
        .filter(|t| !t.is_empty())
        .map(|t| {
            let (x, y) = t.split_once(',').unwrap();
            (x.parse::<f64>().unwrap(), y.parse::<f64>().unwrap())
        });
    let commands: Vec<char> = d.chars().filter(char::is_ascii_alphabetic).collect();
    let mut at = (0.0, 0.0);
    let mut out = vec![];
    for c in commands {
        match c {
            'M' => at = nums.next().unwrap(),
            'L' => {
                let to = nums.next().unwrap();
                out.extend((0..=20).map(|i| {
                    let t = f64::from(i) / 20.0;
                    (at.0 + (to.0 - at.0) * t, at.1 + (to.1 - at.1) * t)
                }));
                at = to;
            }
            'C' => {
                let (p1, p2, p3) = (
                    nums.next().unwrap(),
                    nums.next().unwrap(),
                    nums.next().unwrap(),
                );
                out.extend((0..=20).map(|i| {
                    let t = f64::from(i) / 20.0;
                    let u = 1.0 - t;
                    let w = [u * u * u, 3.0 * u * u * t, 3.0 * u * t * t, t * t * t];
                    (
                        w[0] * at.0 + w[1] * p1.0 + w[2] * p2.0 + w[3] * p3.0,
                        w[0] * at.1 + w[1] * p1.1 + w[2] * p2.1 + w[3] * p3.1,
                    )
                }));
                at = p3;
            }
            other => panic!("path command {other} in {d}"),
        }
    }
    out
}

/// Edges that would cross a nested workflow's block go around it: `a -> b` past the
/// block that lies between them, and the nested workflow's own edge to `b`, which left
/// its box at the top of its block, down beside the block (both ran through `i1` and
/// `i2`).
#[test]
fn svg_edges_go_around_nested_workflows() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("nested.yaml");
    std::fs::write(
        &file,
        "name: outer\nagent_class: Workflow\nedges:\n  - - START\n    - {name: a, instruction: x}\n    - {name: inner, agent_class: Workflow, edges: [[START, {name: i1, instruction: x}, {name: i2, instruction: y}]]}\n    - {name: b, instruction: x}\n  - [a, b]\n",
    )
    .unwrap();
    let s = graph(&[file.to_str().unwrap(), "--format", "svg"]);
    let rect_of = |agent: &str| -> (f64, f64, f64, f64) {
        let g = s.split(&format!("data-agent=\"{agent}\"")).nth(1).unwrap();
        let r = g
            .split("<rect ")
            .nth(1)
            .unwrap()
            .split("/>")
            .next()
            .unwrap();
        let r = format!(" {r}");
        let attr = |name: &str| -> f64 {
            let v = r.split(&format!(" {name}=\"")).nth(1).unwrap();
            v.split('"').next().unwrap().parse().unwrap()
        };
        (attr("x"), attr("y"), attr("width"), attr("height"))
    };
    let path_of = |from: &str, to: &str| svg_edge_path(&s, from, to);
    let width = svg_width(&s);
    for (from, to) in [("a", "b"), ("inner", "b")] {
        let d = path_of(from, to);
        for node in ["i1", "i2"] {
            let (x, y, w, h) = rect_of(node);
            for (px, py) in path_points(&d) {
                assert!(
                    !(px > x && px < x + w && py > y && py < y + h),
                    "{from} -> {to} ({d}) crosses {node} at ({px}, {py})"
                );
            }
        }
        assert!(
            path_points(&d).iter().all(|p| p.0 > 0.0 && p.0 < width),
            "{d}"
        );
    }
    // Two rerouted edges, two lanes.
    assert_ne!(path_of("a", "b"), path_of("inner", "b"));
}

#[test]
fn svg_edges_rerouted_around_a_block_stay_in_the_picture() {
    // A nested workflow's box has edges to three nodes outside its block: each gets a
    // lane of its own beside the block, and the picture holds them all.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("fan.yaml");
    std::fs::write(
        &file,
        "name: outer\nagent_class: Workflow\nedges:\n  - - START\n    - {name: inner, agent_class: Workflow, edges: [[START, [{name: i1, instruction: x}, {name: i2, instruction: y}, {name: i3, instruction: z}, {name: i4, instruction: z}]]]}\n    - {name: b1, instruction: x}\n    - {name: b2, instruction: x}\n    - {name: b3, instruction: x}\n  - {from_node: inner, to_node: b2}\n  - {from_node: inner, to_node: b3}\n",
    )
    .unwrap();
    let s = graph(&[file.to_str().unwrap(), "--format", "svg"]);
    let width = svg_width(&s);
    for to in ["b1", "b2", "b3"] {
        let d = svg_edge_path(&s, "inner", to);
        assert!(
            path_points(&d).iter().all(|p| p.0 > 0.0 && p.0 < width),
            "inner -> {to} leaves the picture (width {width}): {d}"
        );
    }
}
