//! The apps the page's tests serve beside the example workflows: one whose agent waits
//! for the client's answer to a long-running call, one whose model refuses, one whose tool
//! answers at length, the sleeper; and the script that answers them all.

use super::Serve;
use crate::common::repo;
use std::path::Path;

/// A copy of `workflows/` (so the test may edit it), served with `--token`.
pub(super) fn serve_workflows(script: &str) -> (Serve, String) {
    let dir = tempfile::tempdir().unwrap();
    copy_dir(&repo().join("workflows"), dir.path());
    std::fs::write(dir.path().join("page.script.yaml"), script).unwrap();
    std::fs::write(dir.path().join("refunds.yaml"), REFUNDS).unwrap();
    std::fs::write(dir.path().join("blocked.yaml"), BLOCKED).unwrap();
    std::fs::write(dir.path().join("sleeper.yaml"), super::SLEEPER).unwrap();
    std::fs::write(dir.path().join("catalog.yaml"), catalog()).unwrap();
    let token = format!("t-{}", uuid::Uuid::new_v4().simple());
    let s = Serve::start_in(
        dir,
        &[
            ".",
            "--script",
            "page.script.yaml",
            "--db",
            "memory",
            "--token",
            &token,
            "--allow-commands",
        ],
    );
    (s, token)
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let path = entry.unwrap().path();
        let target = to.join(path.file_name().unwrap());
        if path.is_dir() {
            copy_dir(&path, &target);
        } else {
            std::fs::copy(&path, &target).unwrap();
        }
    }
}

/// An app whose agent waits for the client: `ask_manager` is a long-running call the
/// page answers with a form.
const REFUNDS: &str = r#"
name: refunds
model: m
instruction: Ask the manager before any refund.
tools: [{name: ask_manager}]
define:
  tools:
    ask_manager:
      description: Ask the manager to approve a refund; the answer comes later.
      parameters: {type: object, properties: {amount: {type: string}}, required: [amount]}
      long_running: true
      client: {}
"#;

/// An app whose tool answers at length (a catalog of 60 items): the page folds the result.
fn catalog() -> String {
    let items: Vec<String> = (1..=60)
        .map(|i| format!("{{sku: SKU-{i:03}, name: Widget {i}}}"))
        .collect();
    format!(
        r#"
name: catalog
model: m
instruction: Answer from the catalog.
tools: [{{name: lookup}}]
define:
  tools:
    lookup:
      description: The catalog.
      parameters: {{type: object, properties: {{id: {{type: string}}}}, required: [id]}}
      lookup: {{key: "{{{{ id }}}}", table: {{all: [{}]}}}}
"#,
        items.join(", ")
    )
}

/// An app whose model refuses: its error event is shown as an error.
const BLOCKED: &str = r#"
name: blocked
model: m
instruction: Answer.
"#;

/// The support workflow's replies, the first draft streamed in three chunks, the refunds
/// app's, the blocked app's, the sleeper's (a two-second nap), and the helpdesk workflow
/// graph's.
pub(super) fn script() -> String {
    let refunds = "  refunds:\n    - function_call: {name: ask_manager, args: {amount: \"19.90 EUR\"}}\n    - text: \"The manager approved: your refund of 19.90 EUR is on its way.\"\n";
    let draft = "    - text: '{\"reply\": \"Please reinstall the app, then sign in again.\"}'\n";
    let blocked = "  blocked:\n    - error: {code: SAFETY, message: \"The reply was blocked.\"}\n";
    let catalog = "  catalog:\n    - function_calls: [{name: lookup, args: {id: all}}, {name: lookup, args: {id: all}}]\n    - text: \"Here is **the catalog**:\\n\\n- 60 widgets, `SKU-001` to `SKU-060`\\n- <b>no HTML</b>\"\n";
    let sleeper = super::sleeper_script("2");
    let sleeper = sleeper.strip_prefix("replies:\n").unwrap();
    let helpdesk = std::fs::read_to_string(repo().join("workflows/helpdesk.script.yaml")).unwrap();
    let helpdesk = &helpdesk[helpdesk.find("replies:\n").unwrap() + "replies:\n".len()..];
    let script = std::fs::read_to_string(repo().join("workflows/support.script.yaml")).unwrap();
    assert!(script.contains(draft), "{script}");
    script
        .replace(
            "replies:\n",
            &format!("replies:\n{refunds}{blocked}{catalog}{sleeper}{helpdesk}"),
        )
        .replace(
            draft,
            &format!("{draft}      chunks: ['{{\"reply\": ', '\"Please reinstall the app, ', 'then sign in again.\"}}']\n"),
        )
}
