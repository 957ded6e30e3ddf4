//! How the SVG picture looks: its classes' style (a light and a dark scheme), the class
//! and arrow of each kind of edge, and XML escaping of its text.

use super::EdgeKind;

/// The picture's one `<style>` element's rules: a light and a dark scheme.
pub(super) const STYLE: &str = "
.af-graph{font-family:system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;font-size:13px}
.af-node rect{fill:#ffffff;stroke:#5f6368;stroke-width:1.2}
.af-node.af-llm rect{fill:#e8f0fe;stroke:#1a73e8}
.af-node.af-workflow rect,.af-node.af-start rect,.af-node.af-router polygon,.af-node.af-join polygon{fill:#f1f3f4;stroke:#5f6368;stroke-width:1.2}
.af-edge.af-back path{stroke-width:2}
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
.af-node.af-workflow rect,.af-node.af-start rect,.af-node.af-router polygon,.af-node.af-join polygon{fill:#292a2d;stroke:#9aa0a6}
.af-node .af-name{fill:#e8eaed}
.af-node .af-kind,.af-node .af-tools{fill:#bdc1c6}
.af-node.af-active rect{fill:#3c2f00;stroke:#fdd663}
.af-edge path{stroke:#9aa0a6}.af-edge.af-transfer path{stroke:#8ab4f8}
.af-edge.af-agent-tool path{stroke:#81c995}
.af-edge text{fill:#e8eaed;stroke:#202124}
.af-arrow{fill:#9aa0a6}.af-arrow-transfer{fill:#8ab4f8}.af-arrow-agent-tool{fill:#81c995}
}
";

/// Escapes text for XML content and attribute values.
pub(super) fn esc(text: &str) -> String {
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

/// The class of an edge of `kind`.
pub(super) fn class_of(kind: EdgeKind) -> &'static str {
    match kind {
        EdgeKind::Structure => "af-structure",
        EdgeKind::Back => "af-back",
        EdgeKind::Transfer => "af-transfer",
        EdgeKind::AgentTool => "af-agent-tool",
    }
}

/// The arrow marker of an edge of `kind`.
pub(super) fn marker_of(kind: EdgeKind) -> &'static str {
    match kind {
        EdgeKind::Structure | EdgeKind::Back => "af-arrow",
        EdgeKind::Transfer => "af-arrow-transfer",
        EdgeKind::AgentTool => "af-arrow-agent-tool",
    }
}
