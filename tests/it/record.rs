//! `--record`: what a recorder writes is a script that replays the same replies.

use adk_flow::event::{Content, FunctionCall, Part, Role};
use adk_flow::model::record::Recorder;
use adk_flow::model::scripted::{Script, ScriptedModel};
use adk_flow::model::{
    CallContext, LlmRequest, LlmResponse, Model, ModelError, ProviderCode, ResponseStream,
};
use async_trait::async_trait;
use futures::StreamExt;
use serde_json::{Value, json};
use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};

type Served = Result<Vec<LlmResponse>, ModelError>;
/// What a test compares: the parts without thoughts, and the error code.
type Outcome = Result<(Option<Vec<Part>>, Option<String>), String>;

/// Serves fixed response streams per agent.
struct Canned(Mutex<HashMap<String, VecDeque<Served>>>);

#[async_trait]
impl Model for Canned {
    async fn generate(
        &self,
        _request: &LlmRequest,
        call: CallContext<'_>,
    ) -> Result<ResponseStream, ModelError> {
        let next = self
            .0
            .lock()
            .unwrap()
            .get_mut(call.agent_name)
            .unwrap()
            .pop_front();
        let responses = next.unwrap()?;
        Ok(futures::stream::iter(responses.into_iter().map(Ok)).boxed())
    }
}

fn done(parts: Vec<Part>) -> LlmResponse {
    LlmResponse {
        content: Some(Content::new(Role::Model, parts)),
        finish_reason: Some("STOP".into()),
        ..LlmResponse::default()
    }
}

fn chunk(text: &str) -> LlmResponse {
    LlmResponse {
        content: Some(Content::text(Role::Model, text)),
        partial: Some(true),
        ..LlmResponse::default()
    }
}

fn fc(name: &str, args: Value, id: Option<&str>) -> Part {
    Part::function_call(FunctionCall {
        id: id.map(str::to_owned),
        args,
        name: name.into(),
    })
}

async fn finals(model: &dyn Model, agent: &str, stream: bool) -> Vec<Result<LlmResponse, String>> {
    let call = CallContext {
        agent_name: agent,
        stream,
        conversation: "",
        graph_node: false,
    };
    match model.generate(&LlmRequest::default(), call).await {
        Err(e) => vec![Err(e.code().into_owned())],
        Ok(s) => {
            s.filter(|r| futures::future::ready(!matches!(r, Ok(r) if r.partial == Some(true))))
                .map(|r| r.map_err(|e| e.code().into_owned()))
                .collect()
                .await
        }
    }
}

#[tokio::test]
async fn recordings_replay_as_scripts() {
    let weird = "quotes \" and \\ back\nslash: {x} # not a comment \u{2028} é \u{feff}";
    let thought = Part {
        thought: Some(true),
        ..Part::text("hmm")
    };
    let mut streamed = done(vec![Part::text("Hello world")]);
    streamed.partial = Some(false);
    let canned: Vec<(&str, Served)> = vec![
        ("a", Ok(vec![done(vec![thought, Part::text(weird)])])),
        ("a", Ok(vec![chunk("Hello"), chunk(" world"), streamed])),
        (
            "b",
            Ok(vec![done(vec![fc(
                "f",
                json!({"k": [1, "two", null]}),
                Some("call_9"),
            )])]),
        ),
        (
            "b",
            Ok(vec![done(vec![
                fc("g", json!({}), None),
                fc("h", json!({"x": 1.5}), None),
            ])]),
        ),
        (
            "b",
            Ok(vec![done(vec![
                Part::text("see"),
                fc("g", json!({}), None),
            ])]),
        ),
        (
            "b",
            Ok(vec![LlmResponse {
                error_code: Some("SAFETY".into()),
                error_message: Some("blocked".into()),
                ..LlmResponse::default()
            }]),
        ),
        (
            "weird: name",
            Err(ModelError::Provider {
                code: ProviderCode::Http(500),
                message: "down".into(),
            }),
        ),
    ];
    let mut map: HashMap<String, VecDeque<_>> = HashMap::new();
    for (agent, r) in canned {
        map.entry(agent.to_owned()).or_default().push_back(r);
    }
    let recorder = Recorder::new(Arc::new(Canned(Mutex::new(map))));
    let calls = [
        ("a", false),
        ("a", true),
        ("b", false),
        ("b", false),
        ("b", false),
        ("b", false),
        ("weird: name", false),
    ];
    let mut live = Vec::new();
    for (agent, stream) in calls {
        live.push(finals(&recorder, agent, stream).await);
    }
    assert_eq!(recorder.len(), 7);

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("recorded.yaml");
    recorder.write(&path).unwrap();
    let script: Script = adk_flow::config::load_typed(&path)
        .unwrap_or_else(|e| panic!("{e:?}\n{}", recorder.script()));
    assert!(
        script.replies["a"][1].chunks.is_some(),
        "{}",
        recorder.script()
    );
    let replay = ScriptedModel::new(script).unwrap();
    for ((agent, stream), live) in calls.into_iter().zip(live) {
        let replayed = finals(&replay, agent, stream).await;
        let project = |rs: Vec<Result<LlmResponse, String>>| -> Vec<Outcome> {
            rs.into_iter()
                .map(|r| {
                    r.map(|r| {
                        let parts = r.content.map(|c| {
                            c.parts
                                .into_iter()
                                .filter(|p| p.thought != Some(true))
                                .collect()
                        });
                        (parts, r.error_code)
                    })
                })
                .collect()
        };
        let live = project(live);
        let replayed = project(replayed);
        // A failed call replays as an error reply.
        if let [Err(code)] = live.as_slice() {
            assert_eq!(replayed, vec![Ok((None, Some(code.clone())))]);
        } else {
            assert_eq!(replayed, live, "{agent}");
        }
    }
}
