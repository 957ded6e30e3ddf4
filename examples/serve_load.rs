//! Load for `adk-flow serve`, from a second process on loopback: `scripts/serve-bench.sh`
//! runs it against a release server answering from a script. Not a test: it prints figures.
//!
//! ```text
//! serve_load turns    URL APP ROUTE REQUESTS CONCURRENCY   # ROUTE: run | run_sse
//! serve_load sessions URL APP SESSIONS CONCURRENCY PID     # memory held by open sessions
//! ```
//!
//! `turns` creates REQUESTS sessions first (not timed), then runs one turn on each, with
//! CONCURRENCY requests in flight, and prints one JSON line: requests/s, p50/p99/max
//! latency in µs, events per turn, errors. `sessions` reads the server's resident memory
//! (`/proc/PID/status`), creates SESSIONS sessions and runs one turn on each, reads it
//! again and prints the difference per session.

use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

type Error = Box<dyn std::error::Error + Send + Sync>;

#[tokio::main]
async fn main() -> Result<(), Error> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let arg = |i: usize| -> Result<&str, Error> {
        args.get(i)
            .map(String::as_str)
            .ok_or_else(|| format!("missing argument {i}; see the header of serve_load.rs").into())
    };
    let http = reqwest::Client::builder()
        .pool_max_idle_per_host(1024)
        .build()?;
    let target = Target {
        http,
        url: arg(1)?.to_owned(),
        app: arg(2)?.to_owned(),
    };
    match arg(0)? {
        "turns" => {
            let route = arg(3)?.to_owned();
            let requests: usize = arg(4)?.parse()?;
            let concurrency: usize = arg(5)?.parse()?;
            turns(Arc::new(target), &route, requests, concurrency).await
        }
        "sessions" => {
            let sessions: usize = arg(3)?.parse()?;
            let concurrency: usize = arg(4)?.parse()?;
            let pid: u32 = arg(5)?.parse()?;
            memory(Arc::new(target), sessions, concurrency, pid).await
        }
        other => Err(format!("unknown mode `{other}`: turns or sessions").into()),
    }
}

/// One server and app.
struct Target {
    http: reqwest::Client,
    url: String,
    app: String,
}

impl Target {
    async fn create_session(&self) -> Result<String, Error> {
        let url = format!("{}/apps/{}/users/u/sessions", self.url, self.app);
        let body: Value = self
            .http
            .post(url)
            .json(&json!({}))
            .send()
            .await?
            .error_for_status()?
            .json()
            .await?;
        Ok(body["id"].as_str().ok_or("no session id")?.to_owned())
    }

    /// One turn; the number of events it answered.
    async fn turn(&self, route: &str, session: &str) -> Result<usize, Error> {
        let body = json!({
            "appName": self.app, "userId": "u", "sessionId": session,
            "newMessage": {"role": "user", "parts": [{"text": "what is 40 + 2?"}]},
        });
        let response = self
            .http
            .post(format!("{}/{route}", self.url))
            .json(&body)
            .send()
            .await?
            .error_for_status()?;
        if route == "run" {
            let events: Vec<Value> = response.json().await?;
            check(events.iter())?;
            Ok(events.len())
        } else {
            let text = response.text().await?;
            let events: Vec<Value> = text
                .split("\n\n")
                .filter_map(|frame| frame.strip_prefix("data: "))
                .map(serde_json::from_str)
                .collect::<Result<_, _>>()?;
            check(events.iter())?;
            Ok(events.len())
        }
    }
}

/// A turn that failed inside the server still answers 200; count it as an error.
fn check<'a>(mut events: impl Iterator<Item = &'a Value>) -> Result<(), Error> {
    match events.find(|e| e.get("errorCode").is_some() || e.get("error").is_some()) {
        Some(e) => Err(format!("the turn failed: {e}").into()),
        None => Ok(()),
    }
}

/// Runs `f(i)` for `i` in `0..n` with `concurrency` in flight; the results in order of `i`.
async fn fan_out<T, F, Fut>(n: usize, concurrency: usize, f: F) -> Vec<T>
where
    T: Send + 'static,
    F: Fn(usize) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = T> + Send,
{
    let f = Arc::new(f);
    let next = Arc::new(AtomicUsize::new(0));
    let mut workers = Vec::new();
    for _ in 0..concurrency.max(1) {
        let (f, next) = (Arc::clone(&f), Arc::clone(&next));
        workers.push(tokio::spawn(async move {
            let mut done = Vec::new();
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= n {
                    return done;
                }
                done.push((i, f(i).await));
            }
        }));
    }
    let mut all = Vec::with_capacity(n);
    for worker in workers {
        all.extend(worker.await.expect("a worker panicked"));
    }
    all.sort_by_key(|(i, _)| *i);
    all.into_iter().map(|(_, r)| r).collect()
}

async fn create_sessions(
    t: &Arc<Target>,
    n: usize,
    concurrency: usize,
) -> Result<Vec<String>, Error> {
    let t = Arc::clone(t);
    fan_out(n, concurrency, move |_| {
        let t = Arc::clone(&t);
        async move { t.create_session().await }
    })
    .await
    .into_iter()
    .collect()
}

async fn turns(
    t: Arc<Target>,
    route: &str,
    requests: usize,
    concurrency: usize,
) -> Result<(), Error> {
    let sessions = Arc::new(create_sessions(&t, requests, concurrency).await?);
    let route: Arc<str> = route.into();
    let started = Instant::now();
    let results = {
        let (t, route, sessions) = (Arc::clone(&t), Arc::clone(&route), Arc::clone(&sessions));
        fan_out(requests, concurrency, move |i| {
            let (t, route, sessions) = (Arc::clone(&t), Arc::clone(&route), Arc::clone(&sessions));
            async move {
                let began = Instant::now();
                let events = t.turn(&route, &sessions[i]).await;
                (began.elapsed(), events)
            }
        })
        .await
    };
    let elapsed = started.elapsed();
    let mut latencies: Vec<Duration> = Vec::with_capacity(requests);
    let (mut errors, mut events) = (0usize, 0usize);
    let mut first_error = None;
    for (latency, outcome) in results {
        match outcome {
            Ok(n) => {
                latencies.push(latency);
                events += n;
            }
            Err(e) => {
                errors += 1;
                first_error.get_or_insert_with(|| e.to_string());
            }
        }
    }
    latencies.sort_unstable();
    let pct = |p: f64| -> u128 {
        if latencies.is_empty() {
            return 0;
        }
        let i = ((latencies.len() as f64 - 1.0) * p).round() as usize;
        latencies[i].as_micros()
    };
    let ok = latencies.len().max(1);
    println!(
        "{}",
        json!({
            "route": &*route, "requests": requests, "concurrency": concurrency,
            "req_per_s": (latencies.len() as f64 / elapsed.as_secs_f64()).round(),
            "p50_us": pct(0.50), "p99_us": pct(0.99), "max_us": pct(1.0),
            "events_per_turn": events as f64 / ok as f64,
            "errors": errors, "first_error": first_error,
        })
    );
    Ok(())
}

/// Resident memory of a process, in KiB.
fn rss_kib(pid: u32) -> Result<u64, Error> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))?;
    let line = status
        .lines()
        .find(|l| l.starts_with("VmRSS:"))
        .ok_or("no VmRSS line")?;
    Ok(line
        .split_whitespace()
        .nth(1)
        .ok_or("no VmRSS value")?
        .parse()?)
}

async fn memory(t: Arc<Target>, n: usize, concurrency: usize, pid: u32) -> Result<(), Error> {
    let before = rss_kib(pid)?;
    let sessions = Arc::new(create_sessions(&t, n, concurrency).await?);
    let failed = {
        let (t, sessions) = (Arc::clone(&t), Arc::clone(&sessions));
        fan_out(n, concurrency, move |i| {
            let (t, sessions) = (Arc::clone(&t), Arc::clone(&sessions));
            async move { t.turn("run", &sessions[i]).await.is_err() }
        })
        .await
        .into_iter()
        .filter(|failed| *failed)
        .count()
    };
    let after = rss_kib(pid)?;
    println!(
        "{}",
        json!({
            "sessions": n, "failed_turns": failed, "rss_before_kib": before,
            "rss_after_kib": after,
            "kib_per_session": (after.saturating_sub(before)) as f64 / n as f64,
        })
    );
    Ok(())
}
