//! The child process of the SQL store's kill -9 test (`tests/it/sessions_sql.rs`): opens
//! the store at `URL`, creates session `killed` for app `APP` and user `u`, appends `N`
//! events (each with a state delta in session, `app:` and `user:` scope), printing
//! `appended I` after each `append_event` has returned, then waits to be killed.
//!
//! Usage: `sql_append_child URL APP N`. Not a test: a test that does nothing unless an
//! environment variable is set passes whatever the code does.

use adk_flow::event::{Content, Event, Role, StateMap};
use adk_flow::session::{SessionService, SqlSessionService};
use serde_json::json;
use std::io::Write;
use std::time::Duration;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [url, app, n] = args.as_slice() else {
        return Err("usage: sql_append_child URL APP N".into());
    };
    let n: u32 = n.parse()?;
    let rt = tokio::runtime::Runtime::new()?;
    rt.block_on(async {
        let svc = SqlSessionService::connect(url).await?;
        let session = svc
            .create_session(app, "u", Some("killed"), StateMap::new())
            .await?;
        for i in 1..=n {
            let mut event = Event::new("e-1", "agent");
            if let serde_json::Value::Object(delta) = json!({"n": i, "app:n": i, "user:n": i}) {
                event.actions.state_delta = delta.into();
            }
            event.content = Some(Content::text(Role::Model, format!("event {i}")));
            svc.append_event(&session, event).await?;
            let mut out = std::io::stdout().lock();
            writeln!(out, "appended {i}")?;
            out.flush()?;
        }
        loop {
            tokio::time::sleep(Duration::from_secs(3600)).await;
        }
    })
}
