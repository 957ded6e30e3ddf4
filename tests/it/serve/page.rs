//! adk-flow's own web page (`serve` without `--ui`): the page and its routes over HTTP,
//! then the page itself in headless Chromium (`tests/fixtures/browser/page.mjs`, then
//! `page_more.mjs`) with the example support and helpdesk workflows (and the apps of
//! `page_apps.rs`), as a new user would use it. Screenshots are kept in
//! `target/browser-test/page-*.png`.

use super::browser::{chromium_sh, target_dir};
use super::page_apps::{script, serve_workflows};
use crate::common::{npm_install, repo};
use serde_json::{Value, json};
use std::time::Duration;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_page_and_its_routes() {
    let (s, token) = serve_workflows(&script());
    let get = |path: &str| s.http.get(s.url(path)).bearer_auth(&token).send();
    assert!(
        s.logs()
            .contains(&format!("  web page: {}/?token={token}", s.base)),
        "{}",
        s.logs()
    );

    // The page: three embedded files, nothing from elsewhere, no framing.
    let page = get("/").await.unwrap();
    assert_eq!(page.status(), 200);
    assert_eq!(page.headers()["content-type"], "text/html; charset=utf-8");
    let csp = page.headers()["content-security-policy"]
        .to_str()
        .unwrap()
        .to_owned();
    assert!(csp.starts_with("default-src 'self'"), "{csp}");
    assert_eq!(page.headers()["x-frame-options"], "DENY");
    let html = page.text().await.unwrap();
    assert!(
        html.contains("<script type=\"module\" src=\"/adk-flow/page.js\"></script>"),
        "{html}"
    );
    assert!(
        !html.contains("http://") && !html.contains("https://"),
        "{html}"
    );
    let js = "text/javascript; charset=utf-8";
    for (path, kind) in [
        ("/adk-flow/page.js", js),
        ("/adk-flow/core.js", js),
        ("/adk-flow/sessions.js", js),
        ("/adk-flow/chat.js", js),
        ("/adk-flow/graph.js", js),
        ("/adk-flow/inspect.js", js),
        ("/adk-flow/timeline.js", js),
        ("/adk-flow/markdown.js", js),
        ("/adk-flow/page.css", "text/css; charset=utf-8"),
    ] {
        let r = get(path).await.unwrap();
        assert_eq!(r.status(), 200, "{path}");
        assert_eq!(r.headers()["content-type"], kind, "{path}");
        let text = r.text().await.unwrap();
        assert!(
            !text.contains("https://") && !text.contains("http://") && !text.contains("@import"),
            "{path} reaches out: {text}"
        );
    }
    let r = get("/adk-flow/../Cargo.toml").await.unwrap();
    assert_eq!(r.status(), 404);
    let r = get("/adk-flow/nothing.js").await.unwrap();
    assert_eq!(r.status(), 404);
    // Without the token, nothing.
    let r = s
        .http
        .get(s.url("/adk-flow/apps/support"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 401);

    // The app: its agents as written and as configured, and its test file.
    let info: Value = get("/adk-flow/apps/support")
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let names: Vec<&str> = info["agents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "support_router",
            "orders",
            "billing_ticket",
            "order_desk",
            "app_support",
            "tech_ticket",
            "review",
            "drafter",
            "checker"
        ]
    );
    assert_eq!(info["tests"], json!(["support.test.yaml"]));
    let desk = &info["agents"][3];
    assert_eq!(desk["file"], "support.yaml");
    assert_eq!(desk["model"], "gemini-2.5-flash");
    assert_eq!(desk["modelFrom"], "an ancestor");
    assert_eq!(desk["tools"], json!(["lookup_order"]));
    let yaml = desk["yaml"].as_str().unwrap();
    let source = std::fs::read_to_string(repo().join("workflows/support.yaml")).unwrap();
    let line = desk["line"].as_u64().unwrap() as usize;
    assert_eq!(
        source.lines().nth(line - 1),
        Some("      - name: order_desk")
    );
    assert!(yaml.starts_with("      - name: order_desk\n"), "{yaml}");
    assert!(
        yaml.ends_with("          - name: ${SUPPORT_ORDERS_TOOL:-lookup_order}"),
        "{yaml}"
    );
    assert_eq!(info["agents"][6]["kind"], "LoopAgent, at most 3");
    // The drafter's output_schema as written; the checker has none.
    assert_eq!(
        info["agents"][7]["outputSchema"]["properties"]["reply"]["type"], "string",
        "{info}"
    );
    assert_eq!(info["agents"][8]["outputSchema"], Value::Null);
    // What answers instead of the YAML's models, and messages to start with: the first
    // user message of each test case.
    assert_eq!(info["answeredBy"], "--script");
    // The examples are the turns the example script answers, in order
    // (`support.messages.txt`), not the test cases' first messages.
    assert_eq!(
        info["examples"],
        json!(["Was order 42 paid?", "The app crashes on start."])
    );
    // Without one, the first user message of each test case.
    let looped: Value = get("/adk-flow/apps/loop")
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(looped["examples"], json!(["coffee"]));
    assert!(info["examples"].as_array().unwrap().len() <= 4, "{info}");

    // A workflow graph's Routers and JoinNodes, with the ids the diagram gives them.
    let helpdesk: Value = get("/adk-flow/apps/helpdesk")
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let nodes = helpdesk["nodes"].as_array().unwrap();
    let names: Vec<&str> = nodes.iter().map(|n| n["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["gate", "send", "escalate"], "{helpdesk}");
    let gate = &nodes[0];
    assert_eq!(gate["id"], "helpdesk__gate");
    assert_eq!(gate["kind"], "adk_flow.Router");
    assert_eq!(gate["workflow"], "helpdesk");
    assert!(
        gate["route"].as_str().unwrap().contains("'APPROVED'"),
        "{gate}"
    );
    assert_eq!(gate["output"], Value::Null);
    assert!(gate["state"]["temp:rewrites"].is_string(), "{gate}");
    assert_eq!(gate["file"], "helpdesk.yaml");
    assert!(
        gate["yaml"]
            .as_str()
            .unwrap()
            .starts_with("    - name: gate\n"),
        "{gate}"
    );
    assert_eq!(nodes[1]["output"], "state.draft");
    let svg = get("/adk-flow/apps/helpdesk/graph.svg")
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(svg.contains("data-node=\"helpdesk__gate\""), "{svg}");

    // The graph is the one `adk-flow graph --format svg` draws.
    let r = get("/adk-flow/apps/support/graph.svg").await.unwrap();
    assert_eq!(r.headers()["content-type"], "image/svg+xml");
    let svg = r.text().await.unwrap();
    let cli = crate::common::bin()
        .current_dir(s.dir.path())
        .args(["graph", "support.yaml", "--format", "svg"])
        .output()
        .unwrap();
    assert_eq!(svg, String::from_utf8(cli.stdout).unwrap());

    // An instruction rendered against a session's state.
    let session: Value = s
        .http
        .post(s.url("/apps/support/users/u1/sessions"))
        .bearer_auth(&token)
        .json(&json!({"state": {"feedback": "Name the setting."}}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let id = session["id"].as_str().unwrap();
    let r: Value = get(&format!(
        "/adk-flow/apps/support/agents/drafter/instruction?user=u1&session={id}"
    ))
    .await
    .unwrap()
    .json()
    .await
    .unwrap();
    assert!(
        r["rendered"]
            .as_str()
            .unwrap()
            .contains("Reviewer feedback on the previous reply, if any: Name the setting."),
        "{r}"
    );
    assert!(
        r["template"].as_str().unwrap().contains("{feedback?}"),
        "{r}"
    );
    let r = get("/adk-flow/apps/support/agents/checker/instruction?user=u1&session=nope")
        .await
        .unwrap();
    assert_eq!(r.status(), 404);
    let r: Value = get("/adk-flow/apps/support/agents/checker/instruction")
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(r["rendered"], Value::Null);
    // The checker reads {draft}, which this session has not written yet.
    let r: Value = get(&format!(
        "/adk-flow/apps/support/agents/checker/instruction?user=u1&session={id}"
    ))
    .await
    .unwrap()
    .json()
    .await
    .unwrap();
    assert_eq!(r["rendered"], Value::Null);
    assert!(r["error"].as_str().unwrap().contains("draft"), "{r}");
    let r = get("/adk-flow/apps/support/agents/nobody/instruction")
        .await
        .unwrap();
    assert_eq!(r.status(), 404);
    let r = get("/adk-flow/apps/nothing").await.unwrap();
    assert_eq!(r.status(), 404);

    // The workflow's tests, run as `adk-flow test` runs them.
    let run_tests = || async {
        let r = s
            .http
            .post(s.url("/adk-flow/apps/support/tests"))
            .bearer_auth(&token)
            .send();
        r.await.unwrap().json::<Value>().await.unwrap()
    };
    let r = run_tests().await;
    let file = &r[0];
    assert_eq!(file["file"], "support.test.yaml");
    assert_eq!(file["errors"], json!([]));
    let cases = file["cases"].as_array().unwrap();
    assert_eq!(cases.len(), 6, "{r}");
    assert!(cases.iter().all(|c| c["passed"] == true), "{r}");

    // A test that fails says so, with what failed.
    let tests = s.dir.path().join("support.test.yaml");
    let text = std::fs::read_to_string(&tests).unwrap();
    std::fs::write(&tests, text.replacen("billing_answer", "billing_reply", 1)).unwrap();
    let r = run_tests().await;
    let failed: Vec<&Value> = r[0]["cases"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["passed"] == false)
        .collect();
    assert_eq!(failed.len(), 1, "{r}");
    assert!(
        failed[0]["failures"][0]
            .as_str()
            .unwrap()
            .contains("billing_reply"),
        "{r}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_page_in_a_browser() {
    chromium_sh(&["install"]);
    let chromium = chromium_sh(&["path"]);
    let driver = npm_install("browser", "playwright-core");
    for file in ["page.mjs", "page_more.mjs"] {
        std::fs::copy(
            repo().join("tests/fixtures/browser").join(file),
            driver.join(file),
        )
        .expect("copy the driver");
    }
    let (s, token) = serve_workflows(&script());
    let link = format!("{}/?token={token}", s.base);
    let profile = tempfile::tempdir().unwrap();
    let shots = target_dir().join("browser-test");
    std::fs::create_dir_all(&shots).unwrap();
    // Only this run's screenshots are kept: steps change names and numbers.
    for entry in std::fs::read_dir(&shots).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if name.starts_with("page-") && name.ends_with(".png") {
            std::fs::remove_file(&path).unwrap();
        }
    }
    let child = tokio::process::Command::new("node")
        .current_dir(&driver)
        .arg("page.mjs")
        .arg(&chromium)
        .arg(&link)
        .arg(profile.path())
        .arg(&shots)
        .arg(s.dir.path().join("support.yaml"))
        .kill_on_drop(true)
        .output();
    let out = tokio::time::timeout(Duration::from_secs(180), child)
        .await
        .unwrap_or_else(|_| panic!("the page test took over 180 s; logs:\n{}", s.logs()))
        .expect("the browser test needs node on PATH");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "the page failed in the browser:\n{stdout}\n{}\nserver logs:\n{}\nscreenshots in {}",
        String::from_utf8_lossy(&out.stderr),
        s.logs(),
        shots.display()
    );
    let result: Value = stdout
        .lines()
        .find_map(|l| l.strip_prefix("result: "))
        .map(|j| serde_json::from_str(j).unwrap())
        .unwrap_or_else(|| panic!("no result line:\n{stdout}"));

    // What the page showed is what the server holds.
    let get = |path: String| {
        let r = s.http.get(s.url(&path)).bearer_auth(&token).send();
        async move { r.await.unwrap().json::<Value>().await.unwrap() }
    };
    let first = result["firstSession"].as_str().unwrap();
    let session = get(format!("/apps/support/users/user/sessions/{first}")).await;
    assert_eq!(
        session["events"].as_array().unwrap().len() as u64,
        result["events"].as_u64().unwrap()
    );
    assert_eq!(
        session["state"]["billing_answer"],
        "Order 42 (USB-C cable, 19.90 EUR): paid on 2026-03-03."
    );
    let ids: Vec<String> = get("/apps/support/users/user/sessions".into())
        .await
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["id"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(
        ids,
        [first],
        "the deleted session is gone, and no other was made"
    );
    assert_eq!(result["testsPassed"], 6);
    // The client's answer to the long-running call went in as a function response.
    let refunds = get(format!(
        "/apps/refunds/users/user/sessions/{}",
        result["refundsSession"].as_str().unwrap()
    ))
    .await;
    let answer = refunds["events"]
        .as_array()
        .unwrap()
        .iter()
        .find_map(|e| e["content"]["parts"][0].get("functionResponse"))
        .filter(|r| r["name"] == "ask_manager" && r["response"] == json!({"approved": true}));
    assert!(answer.is_some(), "{refunds}");
    let last = refunds["events"].as_array().unwrap().last().unwrap();
    assert_eq!(
        last["content"]["parts"][0]["text"],
        "The manager approved: your refund of 19.90 EUR is on its way."
    );
    // The helpdesk graph ran to its end: the rewritten draft is the session's.
    let helpdesk = get(format!(
        "/apps/helpdesk/users/user/sessions/{}",
        result["helpdeskSession"].as_str().unwrap()
    ))
    .await;
    assert_eq!(
        helpdesk["state"]["draft"],
        "Good news: invoice 42 was paid on 3 March 2026. Thank you!"
    );
    // The page writes `max_iterations` on the line after order_desk's output_key.
    let broken_line = std::fs::read_to_string(repo().join("workflows/support.yaml"))
        .unwrap()
        .lines()
        .position(|l| l.trim() == "output_key: billing_answer")
        .unwrap()
        + 2;
    assert!(
        result["problem"].as_str().unwrap().contains(&format!(
            "support.yaml:{broken_line}:9: error: unknown key `max_iterations`"
        )),
        "{result}"
    );
}
