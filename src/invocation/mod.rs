//! One invocation: what every agent of it shares ([`InvocationContext`]: the session,
//! the tree, the run settings, the model-call count), the stream agents yield
//! ([`EventStream`]), and the failures that end it ([`RunError`]).

mod context;
mod error;

pub use context::{InvocationContext, NodeInput, RunConfig, StateAtStart};
pub use error::{RunError, error_event_note};

use crate::event::Event;
use futures::stream::BoxStream;
use std::sync::Arc;

/// The stream of events an agent yields; an `Err` ends the invocation.
///
/// Each event is put in its `Arc` once, where it is made: every stream it passes through
/// (agent, flow, runner) moves a pointer, and the in-memory session store keeps that same
/// `Arc` (see [`crate::session::SessionService::append_shared`]).
pub type EventStream = BoxStream<'static, Result<Arc<Event>, RunError>>;
