//! The scripted model's script files (`--script`): any file loads or fails with located
//! diagnostics, and a loaded script serves each agent exactly its replies, streamed or
//! not, each ending with a final response, then `SCRIPT_EXHAUSTED`.
#![no_main]

use adk_flow::app::{ModelSetupError, load_script};
use adk_flow::model::{CallContext, LlmRequest, Model, ModelError};
use adk_flow_fuzz::{Scratch, check_diagnostics};
use futures::StreamExt;
use libfuzzer_sys::fuzz_target;
use std::sync::LazyLock;

static SCRATCH: LazyLock<Scratch> = LazyLock::new(Scratch::new);

fuzz_target!(|data: &[u8]| {
    let path = SCRATCH.write(&[("script.yaml", data)]);
    let model = match load_script(&path) {
        Ok(model) => model,
        Err(ModelSetupError::Script { diagnostics }) => {
            assert!(!diagnostics.is_empty());
            check_diagnostics(&diagnostics);
            return;
        }
        Err(e) => panic!("a script fails with diagnostics, not {e:?}"),
    };
    let request = LlmRequest::default();
    let mut remaining: Vec<(String, usize)> = model.remaining().into_iter().collect();
    remaining.sort();
    futures::executor::block_on(async {
        for (agent, count) in remaining {
            for i in 0..=count {
                let call = CallContext {
                    agent_name: &agent,
                    stream: i % 2 == 1,
                    conversation: "",
                    graph_node: false,
                };
                match model.generate(&request, call).await {
                    Ok(stream) => {
                        assert!(i < count, "{agent}: reply {i} of {count}");
                        let responses: Vec<_> = stream.collect().await;
                        let last = responses.last().expect("a reply has a response");
                        let last = last.as_ref().expect("scripted replies do not fail");
                        assert_ne!(last.partial, Some(true), "{agent}: ends partial");
                    }
                    Err(ModelError::ScriptExhausted { agent: a }) => {
                        assert_eq!((a.as_str(), i), (agent.as_str(), count));
                    }
                    Err(e) => panic!("{agent}: {e:?}"),
                }
            }
        }
    });
});
