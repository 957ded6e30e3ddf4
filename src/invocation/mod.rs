//! One invocation: what every agent of it shares ([`InvocationContext`]: the session,
//! the tree, the run settings, the model-call count), the stream agents yield
//! ([`EventStream`]), and the failures that end it ([`RunError`]).

mod context;
mod error;

pub use context::{InvocationContext, NodeInput, RunConfig};
pub use error::RunError;

use crate::event::Event;
use futures::stream::BoxStream;

/// The stream of events an agent yields; an `Err` ends the invocation.
pub type EventStream = BoxStream<'static, Result<Event, RunError>>;
