//! Hostile input, refused cleanly: secrets in URLs, ids that would be paths, hosts and
//! ports off the allowlist, model values that would rewrite a URL, programs that outlive
//! their tool, files that are not files.

use crate::common;

/// A port nothing listens on (bound, then released).
fn closed_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

#[test]
fn secrets_in_a_provider_url_never_reach_events_logs_or_messages() {
    let dir = common::write_files(&[(
        "root_agent.yaml",
        "name: solo\nmodel: m\ninstruction: Be brief.\ndefine:\n  models:\n    m:\n      provider: openai\n      model: x\n      base_url: ${BASE}\n      retries: {max_attempts: 2, initial_backoff_ms: 10}\n",
    )]);
    let base = format!(
        "http://bob:pw-s3cret@127.0.0.1:{}/v1?key=q-s3cret",
        closed_port()
    );
    let out = common::bin()
        .current_dir(dir.path())
        .env("BASE", &base)
        .env("OPENAI_API_KEY", "sk-not-used-here")
        .env("RUST_LOG", "debug")
        .args([
            "run",
            "root_agent.yaml",
            "-m",
            "hi",
            "--json",
            "--db",
            "memory",
        ])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stdout.contains("\"errorCode\":\"CONNECT\""), "{stdout}");
    for text in [&stdout, &stderr] {
        assert!(!text.contains("s3cret"), "a secret leaked: {text}");
        // Still useful: where it failed.
        assert!(text.contains("127.0.0.1"), "{text}");
    }
    // The retry was logged, redacted too.
    assert!(stderr.contains("retrying"), "{stderr}");
}
