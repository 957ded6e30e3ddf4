//! The fences: loopback by default, Host and Origin guards, the token (bearer and the
//! browser's cookie), CORS only for `--allow-origin`, the body limit, per-run limits and
//! the command-tool gate.

use super::{Serve, app_files, frames, run_body, status_and_body};
use serde_json::{Value, json};
use std::time::{Duration, Instant};

fn args<'a>(extra: &[&'a str]) -> Vec<&'a str> {
    let mut a = vec!["apps", "--script", "script.yaml", "--db", "memory"];
    a.extend_from_slice(extra);
    a
}

#[tokio::test]
async fn loopback_by_default_and_rebound_hosts_and_foreign_origins_are_refused() {
    let s = Serve::start(&app_files(), &args(&[]));
    assert!(s.base.starts_with("http://127.0.0.1:"), "{}", s.base);
    let port = s.base.rsplit(':').next().unwrap().to_owned();

    let r = s
        .http
        .get(s.url("/list-apps"))
        .header("host", format!("evil.example:{port}"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 403);
    assert_eq!(r.headers()["content-type"], "text/plain");
    assert_eq!(r.text().await.unwrap(), "Forbidden: host not allowed");
    let r = s
        .http
        .get(s.url("/list-apps"))
        .header("host", format!("localhost:{port}"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);

    let post = |origin: String| {
        s.http
            .post(s.url("/apps/greeter/users/u/sessions"))
            .header("origin", origin)
            .json(&json!({}))
            .send()
    };
    let r = post("http://evil.example".into()).await.unwrap();
    assert_eq!(r.status(), 403);
    assert_eq!(r.text().await.unwrap(), "Forbidden: origin not allowed");
    // A loopback origin that is not this server is not same-origin either.
    assert_eq!(
        post("http://127.0.0.1:1".into()).await.unwrap().status(),
        403
    );
    // The page's own origin passes, as Chrome sends it on the UI's POSTs.
    let r = post(s.base.clone()).await.unwrap();
    assert_eq!(r.status(), 200);
    assert!(r.headers().get("access-control-allow-origin").is_none());
}

#[tokio::test]
async fn cors_answers_only_the_listed_origins() {
    let s = Serve::start(
        &app_files(),
        &args(&[
            "--allow-origin",
            "https://app.example",
            "--allow-origin",
            "regex:https://.*\\.corp\\.example",
        ]),
    );
    let preflight = s
        .http
        .request(reqwest::Method::OPTIONS, s.url("/run_sse"))
        .header("origin", "https://app.example")
        .header("access-control-request-method", "POST")
        .header("access-control-request-headers", "content-type")
        .send()
        .await
        .unwrap();
    assert!(preflight.status().is_success(), "{}", preflight.status());
    assert_eq!(
        preflight.headers()["access-control-allow-origin"],
        "https://app.example"
    );
    assert_eq!(
        preflight.headers()["access-control-allow-credentials"],
        "true"
    );
    for origin in ["https://app.example", "https://x.corp.example"] {
        let r = s
            .http
            .get(s.url("/list-apps"))
            .header("origin", origin)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200, "{origin}");
        assert_eq!(r.headers()["access-control-allow-origin"], origin);
    }
    let r = s
        .http
        .get(s.url("/list-apps"))
        .header("origin", "https://other.example")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 403);
    assert!(r.headers().get("access-control-allow-origin").is_none());
}

#[tokio::test]
async fn the_token_guards_every_route_and_the_browser_logs_in_with_a_cookie() {
    const TOKEN: &str = "s3cret-Token-value";
    let files = {
        let mut f = app_files();
        f.push(("ui/index.html", "<!doctype html><title>ui</title>"));
        f
    };
    let s = Serve::start(&files, &args(&["--token", TOKEN, "--ui", "ui"]));
    let (status, body) = s.get("/list-apps").await;
    assert_eq!(
        (status, body),
        (401, json!({"detail": "Not authenticated"}))
    );
    let r = s.http.get(s.url("/list-apps")).send().await.unwrap();
    assert_eq!(r.headers()["www-authenticate"], "Bearer");
    let r = s
        .http
        .get(s.url("/list-apps"))
        .bearer_auth("wrong")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 401);
    let r = s
        .http
        .get(s.url("/list-apps"))
        .bearer_auth(TOKEN)
        .send()
        .await
        .unwrap();
    assert_eq!(status_and_body(r).await, (200, json!(["greeter", "team"])));
    // The UI's files need it too; /health does not.
    assert_eq!(s.get("/dev-ui/").await.0, 401);
    assert_eq!(s.get("/health").await.0, 200);

    // The printed link logs the browser in: a cookie, and the token leaves the URL.
    let logs = s.logs();
    assert!(
        logs.contains(&format!("{}/dev-ui/?token={TOKEN}", s.base)),
        "{logs}"
    );
    let browser = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let r = browser
        .get(s.url(&format!("/dev-ui/?app=greeter&token={TOKEN}")))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 307);
    assert_eq!(r.headers()["location"], "/dev-ui/?app=greeter");
    let cookie = r.headers()["set-cookie"].to_str().unwrap().to_owned();
    assert!(
        cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"),
        "{cookie}"
    );
    assert!(
        !cookie.contains(TOKEN),
        "the cookie must not carry the token"
    );
    let pair = cookie.split(';').next().unwrap().to_owned();
    let r = browser
        .get(s.url("/dev-ui/"))
        .header("cookie", &pair)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let r = browser
        .post(s.url("/apps/greeter/users/user/sessions"))
        .header("cookie", &pair)
        .header("origin", &s.base)
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let r = browser
        .get(s.url("/dev-ui/?token=nope"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 401);
    let r = browser
        .get(s.url("/list-apps"))
        .header("cookie", "adk_flow_session=guess")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 401);
    // The token shows up once, in the link printed at start, and nowhere else.
    assert_eq!(s.logs().matches(TOKEN).count(), 1, "{}", s.logs());
}

#[tokio::test]
async fn bodies_over_the_limit_are_refused() {
    let s = Serve::start(&app_files(), &args(&["--max-body", "2000"]));
    let id = s.session("greeter", None).await;
    let (status, body) = s
        .send(
            "POST",
            "/run",
            run_body("greeter", &id, &"x".repeat(3000), false),
        )
        .await;
    assert_eq!(status, 413, "{body}");
    assert!(
        body["detail"].as_str().unwrap().contains("too large"),
        "{body}"
    );
    // Nothing was committed.
    let (_, session) = s.get(&format!("/apps/greeter/users/u/sessions/{id}")).await;
    assert_eq!(session["events"], json!([]));
}

#[tokio::test]
async fn a_run_over_its_time_is_stopped_and_keeps_what_it_committed() {
    let s = Serve::sleeper("30", "memory", &["--run-timeout", "1"]);
    let id = s.session("sleeper", None).await;
    let started = Instant::now();
    let (status, body) = s
        .send("POST", "/run", run_body("sleeper", &id, "rest", false))
        .await;
    assert_eq!(status, 504, "{body}");
    assert!(started.elapsed() < Duration::from_secs(10));
    assert!(
        body["detail"].as_str().unwrap().contains("longer than 1 s"),
        "{body}"
    );
    assert_eq!(
        s.stored_lines("sleeper", &id).await,
        ["user: rest", r#"sleeper: call nap {"seconds":"30"}"#]
    );

    // On the stream: the events, then an error frame; and the session is free again.
    let id = s.session("sleeper", None).await;
    let events = s.run_sse("sleeper", &id, "rest", false).await;
    assert_eq!(events.len(), 2);
    assert!(
        events[1]["error"]
            .as_str()
            .unwrap()
            .contains("longer than 1 s")
    );
    let (status, _) = s
        .send(
            "PATCH",
            &format!("/apps/sleeper/users/u/sessions/{id}"),
            json!({"stateDelta": {"a": 1}}),
        )
        .await;
    assert_eq!(status, 200);
}

#[tokio::test]
async fn model_calls_per_run_are_bounded() {
    let s = Serve::start(&app_files(), &args(&["--max-llm-calls", "1"]));
    let id = s.session("team", None).await;
    let raw = s.run_sse_raw("team", &id, "what is 40 + 2?", false).await;
    let events = frames(&raw);
    let error = &events[events.len() - 2];
    assert_eq!(
        error["errorCode"], "LLM_CALLS_LIMIT_EXCEEDED",
        "{events:#?}"
    );
    assert!(
        events.last().unwrap()["error"]
            .as_str()
            .unwrap()
            .contains("limit of 1 model calls")
    );
}

#[tokio::test]
async fn command_tools_stay_off_without_allow_commands() {
    let mut files = app_files();
    files.push(("apps/sleeper.yaml", super::SLEEPER));
    let s = Serve::start(&files, &args(&[]));
    let (_, status) = s.get("/status").await;
    let sleeper = status["apps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["name"] == "sleeper")
        .unwrap()
        .clone();
    assert_eq!(sleeper["status"], "invalid");
    assert_eq!(sleeper["version"], Value::Null);
    let message = sleeper["problems"][0]["message"].as_str().unwrap();
    assert!(message.contains("--allow-commands"), "{message}");
    let (code, body) = s
        .send("POST", "/apps/sleeper/users/u/sessions", json!({}))
        .await;
    assert_eq!(code, 200, "{body}");
    let (code, body) = s
        .send(
            "POST",
            "/run",
            run_body("sleeper", body["id"].as_str().unwrap(), "x", false),
        )
        .await;
    assert_eq!(code, 503, "{body}");
    assert!(
        body["detail"]
            .as_str()
            .unwrap()
            .contains("--allow-commands"),
        "{body}"
    );
}
