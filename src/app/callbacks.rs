//! Compiling declared callbacks (`define.callbacks`) into runnable [`Callback`]s.

use super::build::BuildError;
use crate::callback::Callback;
use crate::config::agent_config::CallbackDef;

/// Compiles a declared callback.
///
/// # Errors
/// A redaction pattern that is not a valid regular expression.
pub fn compile_callback(name: &str, def: &CallbackDef) -> Result<Callback, BuildError> {
    let redact = def
        .redact
        .iter()
        .flatten()
        .map(|r| {
            regex::Regex::new(&r.pattern)
                .map(|re| (re, r.replacement.clone()))
                .map_err(|source| BuildError::RedactPattern {
                    callback: name.to_owned(),
                    pattern: r.pattern.clone(),
                    source,
                })
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Callback {
        name: name.to_owned(),
        when: def.when.clone(),
        set_state: def
            .set_state
            .iter()
            .flatten()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect(),
        reply: def.reply.clone(),
        block: def.block.clone(),
        result: def.result.clone(),
        rewrite_args: def.rewrite_args.clone(),
        redact,
    })
}
