//! `test_config.json` (ADK's `EvalConfig`): criteria per metric, discovery, and the
//! metrics adk-flow refuses up front where ADK would skip them silently.

use super::types::Rubric;
use serde::Deserialize;
use serde_json::{Map, Value};
use std::path::{Path, PathBuf};

/// ADK's criteria when no config file is found.
pub const DEFAULT_CRITERIA: &[(&str, f64)] = &[
    ("tool_trajectory_avg_score", 1.0),
    ("response_match_score", 0.8),
];

/// Metrics that need Vertex AI's evaluation service.
pub const VERTEX_ONLY: &[&str] = &[
    "response_evaluation_score",
    "safety_v1",
    "multi_turn_task_success_v1",
    "multi_turn_trajectory_quality_v1",
    "multi_turn_tool_use_quality_v1",
];

/// Every metric adk-flow computes.
pub const SUPPORTED: &[&str] = &[
    "tool_trajectory_avg_score",
    "response_match_score",
    "final_response_match_v2",
    "rubric_based_final_response_quality_v1",
    "rubric_based_tool_use_quality_v1",
    "hallucinations_v1",
    "per_turn_user_simulator_quality_v1",
    "final_session_state",
];

/// The judge model ADK uses when a criterion names none.
pub const DEFAULT_JUDGE: &str = "gemini-2.5-flash";

/// A config that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// Unreadable (missing, not a regular file, too large, not UTF-8).
    #[error("{path}: cannot read the eval config")]
    Read {
        /// The file.
        path: String,
        /// Why.
        #[source]
        source: crate::config::ReadError,
    },
    /// Malformed.
    #[error("{path}:{line}:{column}: {message}")]
    Invalid {
        /// The file.
        path: String,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// What is wrong.
        message: String,
    },
    /// A metric adk-flow will not run, and why.
    #[error("{source_name}: metric `{metric}`: {reason}")]
    Refused {
        /// Where the config came from.
        source_name: String,
        /// The metric.
        metric: String,
        /// Why (Vertex-only, unknown, Python code, missing rubrics).
        reason: String,
    },
}

/// Where the criteria came from.
#[derive(Debug, Clone, PartialEq)]
pub enum ConfigSource {
    /// `--config FILE`.
    Flag(PathBuf),
    /// `test_config.json` beside the eval set.
    Beside(PathBuf),
    /// ADK's defaults.
    Default,
}

impl std::fmt::Display for ConfigSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ConfigSource::Flag(p) => write!(f, "{} (--config)", p.display()),
            ConfigSource::Beside(p) => write!(f, "{}", p.display()),
            ConfigSource::Default => write!(
                f,
                "ADK's defaults (tool_trajectory_avg_score 1.0, response_match_score 0.8)"
            ),
        }
    }
}

/// How trajectories are compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MatchType {
    /// Same calls, same order, nothing else.
    Exact,
    /// The expected calls appear in this order, others may come between.
    InOrder,
    /// The expected calls appear in any order, others may come between.
    AnyOrder,
}

/// The judge model and how often it is asked.
#[derive(Debug, Clone, PartialEq)]
pub struct JudgeOptions {
    /// Model string (`gemini-2.5-flash`, `openai/gpt-4o`, `openai:smollm2`, `scripted:`).
    pub model: String,
    /// `judge_model_config`, passed to the provider as generation config.
    pub config: Option<Value>,
    /// Samples per invocation (ADK's default 5).
    pub num_samples: usize,
}

/// What a metric computes, with its criterion's fields read.
#[derive(Debug, Clone, PartialEq)]
pub enum MetricKind {
    /// `tool_trajectory_avg_score`.
    Trajectory {
        /// EXACT, IN_ORDER or ANY_ORDER.
        match_type: MatchType,
        /// adk-flow: argument names ignored in every expected call (`name` or
        /// `tool.name`).
        ignore_args: Vec<String>,
        /// adk-flow: expected calls name only the arguments that matter.
        subset_args: bool,
    },
    /// `response_match_score` (ROUGE-1 F).
    ResponseMatch,
    /// `final_response_match_v2`.
    FinalResponseMatchV2(JudgeOptions),
    /// `rubric_based_final_response_quality_v1`.
    RubricFinalResponse(JudgeOptions, Vec<Rubric>),
    /// `rubric_based_tool_use_quality_v1`.
    RubricToolUse(JudgeOptions, Vec<Rubric>),
    /// `hallucinations_v1`.
    Hallucinations {
        /// The judge.
        judge: JudgeOptions,
        /// Also judge intermediate texts.
        evaluate_intermediate: bool,
    },
    /// `per_turn_user_simulator_quality_v1`.
    UserSimulatorQuality {
        /// The judge.
        judge: JudgeOptions,
        /// The simulator's stop signal.
        stop_signal: String,
    },
    /// adk-flow's `final_session_state`: the case's `final_session_state` keys hold in
    /// the session at the end.
    FinalSessionState,
}

impl MetricKind {
    /// The judge options, for judge metrics.
    pub fn judge(&self) -> Option<&JudgeOptions> {
        match self {
            MetricKind::FinalResponseMatchV2(j)
            | MetricKind::RubricFinalResponse(j, _)
            | MetricKind::RubricToolUse(j, _)
            | MetricKind::Hallucinations { judge: j, .. }
            | MetricKind::UserSimulatorQuality { judge: j, .. } => Some(j),
            _ => None,
        }
    }

    /// Whether the metric compares with expected invocations (so cannot score a
    /// conversation scenario).
    pub fn needs_expected(&self) -> bool {
        matches!(
            self,
            MetricKind::Trajectory { .. }
                | MetricKind::ResponseMatch
                | MetricKind::FinalResponseMatchV2(_)
        )
    }
}

/// One configured metric.
#[derive(Debug, Clone, PartialEq)]
pub struct Metric {
    /// ADK's metric name.
    pub name: String,
    /// Pass at score >= threshold.
    pub threshold: f64,
    /// The criterion as written (`{"threshold": x}` for a bare number), echoed in results.
    pub criterion: Value,
    /// What to compute.
    pub kind: MetricKind,
}

/// A read config: its metrics in file order and the user simulator's settings.
#[derive(Debug, Clone)]
pub struct EvalConfig {
    /// Where it came from.
    pub source: ConfigSource,
    /// The metrics, in config order.
    pub metrics: Vec<Metric>,
    /// `user_simulator_config`, as written.
    pub user_simulator: Option<Map<String, Value>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawConfig {
    #[serde(default)]
    criteria: Map<String, Value>,
    #[serde(default, alias = "customMetrics")]
    custom_metrics: Option<Map<String, Value>>,
    #[serde(default, alias = "userSimulatorConfig")]
    user_simulator_config: Option<Map<String, Value>>,
}

fn field<'a>(obj: &'a Map<String, Value>, snake: &str, camel: &str) -> Option<&'a Value> {
    obj.get(snake).or_else(|| obj.get(camel))
}

fn judge_options(obj: &Map<String, Value>) -> Result<JudgeOptions, String> {
    let mut out = JudgeOptions {
        model: DEFAULT_JUDGE.to_owned(),
        config: None,
        num_samples: 5,
    };
    let Some(opts) = field(obj, "judge_model_options", "judgeModelOptions") else {
        return Ok(out);
    };
    let opts = opts
        .as_object()
        .ok_or("`judge_model_options` must be an object")?;
    for key in opts.keys() {
        if !matches!(
            key.as_str(),
            "judge_model"
                | "judgeModel"
                | "judge_model_config"
                | "judgeModelConfig"
                | "num_samples"
                | "numSamples"
        ) {
            return Err(format!("`judge_model_options` has no field `{key}`"));
        }
    }
    if let Some(m) = field(opts, "judge_model", "judgeModel") {
        out.model = m
            .as_str()
            .ok_or("`judge_model` must be a string")?
            .to_owned();
    }
    out.config = field(opts, "judge_model_config", "judgeModelConfig")
        .filter(|v| !v.is_null())
        .cloned();
    if let Some(n) = field(opts, "num_samples", "numSamples") {
        let n = n
            .as_u64()
            .filter(|n| *n >= 1)
            .ok_or("`num_samples` must be a whole number of at least 1")?;
        out.num_samples = usize::try_from(n).unwrap_or(usize::MAX);
    }
    Ok(out)
}

fn rubrics(obj: &Map<String, Value>) -> Result<Vec<Rubric>, String> {
    match obj.get("rubrics") {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(v) => serde_json::from_value(v.clone()).map_err(|e| format!("`rubrics`: {e}")),
    }
}

fn match_type(obj: &Map<String, Value>) -> Result<MatchType, String> {
    let Some(v) = field(obj, "match_type", "matchType") else {
        return Ok(MatchType::Exact);
    };
    let normalized = match v {
        Value::String(s) => s.trim().to_uppercase().replace(['-', ' '], "_"),
        Value::Number(n) => match n.as_u64() {
            Some(0) => "EXACT".into(),
            Some(1) => "IN_ORDER".into(),
            Some(2) => "ANY_ORDER".into(),
            _ => String::new(),
        },
        _ => String::new(),
    };
    match normalized.as_str() {
        "EXACT" => Ok(MatchType::Exact),
        "IN_ORDER" => Ok(MatchType::InOrder),
        "ANY_ORDER" => Ok(MatchType::AnyOrder),
        _ => Err(format!(
            "`match_type` {v} is not one of EXACT, IN_ORDER, ANY_ORDER"
        )),
    }
}

/// Builds one metric from its name and criterion value.
///
/// # Errors
/// A reason to refuse it: unknown, Vertex-only, a malformed criterion, rubric metrics
/// without rubrics.
pub fn metric(name: &str, criterion: &Value) -> Result<Metric, String> {
    if VERTEX_ONLY.contains(&name) {
        return Err(
            "needs Vertex AI's evaluation service (Google Cloud), which adk-flow does not call; \
             use final_response_match_v2 or the rubric_based_* metrics with a judge model instead"
                .into(),
        );
    }
    if !SUPPORTED.contains(&name) {
        return Err(format!(
            "unknown metric (known: {}); ADK would skip it silently",
            SUPPORTED.join(", ")
        ));
    }
    let (threshold, obj) = match criterion {
        Value::Number(n) => (
            n.as_f64().unwrap_or_default(),
            Map::from_iter([("threshold".to_owned(), Value::from(n.as_f64()))]),
        ),
        Value::Object(obj) => {
            let t = obj
                .get("threshold")
                .and_then(Value::as_f64)
                .ok_or("the criterion needs a numeric `threshold`")?;
            let mut obj = obj.clone();
            // ADK's criterion holds the threshold as a float.
            obj.insert("threshold".to_owned(), Value::from(t));
            (t, obj)
        }
        _ => return Err("the criterion must be a number or an object with `threshold`".into()),
    };
    let kind = match name {
        "tool_trajectory_avg_score" => MetricKind::Trajectory {
            match_type: match_type(&obj)?,
            ignore_args: match field(&obj, "ignore_args", "ignoreArgs") {
                None => Vec::new(),
                Some(v) => serde_json::from_value(v.clone())
                    .map_err(|_| "`ignore_args` must be a list of argument names")?,
            },
            subset_args: match field(&obj, "args_match", "argsMatch").and_then(Value::as_str) {
                None | Some("exact") => false,
                Some("subset") => true,
                Some(other) => return Err(format!("`args_match` `{other}`: use exact or subset")),
            },
        },
        "response_match_score" => MetricKind::ResponseMatch,
        "final_response_match_v2" => MetricKind::FinalResponseMatchV2(judge_options(&obj)?),
        "rubric_based_final_response_quality_v1" | "rubric_based_tool_use_quality_v1" => {
            let rubrics = rubrics(&obj)?;
            if rubrics.is_empty() {
                return Err("needs `rubrics` in its criterion ([{rubric_id, rubric_content: {text_property}}])".into());
            }
            let judge = judge_options(&obj)?;
            if name == "rubric_based_tool_use_quality_v1" {
                MetricKind::RubricToolUse(judge, rubrics)
            } else {
                MetricKind::RubricFinalResponse(judge, rubrics)
            }
        }
        "hallucinations_v1" => MetricKind::Hallucinations {
            judge: judge_options(&obj)?,
            evaluate_intermediate: field(
                &obj,
                "evaluate_intermediate_nl_responses",
                "evaluateIntermediateNlResponses",
            )
            .and_then(Value::as_bool)
            .unwrap_or(false),
        },
        "per_turn_user_simulator_quality_v1" => MetricKind::UserSimulatorQuality {
            judge: judge_options(&obj)?,
            stop_signal: field(&obj, "stop_signal", "stopSignal")
                .and_then(Value::as_str)
                .unwrap_or("</finished>")
                .to_owned(),
        },
        _ => MetricKind::FinalSessionState,
    };
    Ok(Metric {
        name: name.to_owned(),
        threshold,
        criterion: Value::Object(obj),
        kind,
    })
}

/// ADK's default metrics.
pub fn defaults() -> EvalConfig {
    EvalConfig {
        source: ConfigSource::Default,
        metrics: DEFAULT_CRITERIA
            .iter()
            .filter_map(|(n, t)| metric(n, &Value::from(*t)).ok())
            .collect(),
        user_simulator: None,
    }
}

/// Parses config text.
///
/// # Errors
/// Malformed JSON or fields, and every refused metric (the first one).
pub fn parse(text: &str, source: ConfigSource) -> Result<EvalConfig, ConfigError> {
    let path = match &source {
        ConfigSource::Flag(p) | ConfigSource::Beside(p) => p.display().to_string(),
        ConfigSource::Default => "defaults".into(),
    };
    let mut de = serde_json::Deserializer::from_str(text);
    let raw: RawConfig = serde_path_to_error::deserialize(&mut de).map_err(|e| {
        let at = e.path().to_string();
        let inner = e.into_inner();
        let msg = inner.to_string();
        let msg = msg
            .rfind(" at line ")
            .map_or(msg.clone(), |i| msg[..i].to_owned());
        ConfigError::Invalid {
            path: path.clone(),
            line: inner.line(),
            column: inner.column(),
            message: if at == "." {
                msg
            } else {
                format!("at `{at}`: {msg}")
            },
        }
    })?;
    if let Some((name, _)) = raw.custom_metrics.as_ref().and_then(|m| m.iter().next()) {
        return Err(ConfigError::Refused {
            source_name: path,
            metric: name.clone(),
            reason: "custom_metrics are Python functions, which adk-flow does not run".into(),
        });
    }
    let mut metrics = Vec::new();
    for (name, criterion) in &raw.criteria {
        let m = metric(name, criterion).map_err(|reason| ConfigError::Refused {
            source_name: path.clone(),
            metric: name.clone(),
            reason,
        })?;
        metrics.push(m);
    }
    Ok(EvalConfig {
        source,
        metrics,
        user_simulator: raw.user_simulator_config,
    })
}

/// The config for an eval set file: `--config`, else `test_config.json` beside it, else
/// ADK's defaults.
///
/// # Errors
/// An unreadable or invalid file, a refused metric.
pub fn discover(flag: Option<&Path>, eval_set: &Path) -> Result<EvalConfig, ConfigError> {
    let (path, source) = match flag {
        Some(p) => (p.to_owned(), ConfigSource::Flag(p.to_owned())),
        None => {
            let beside = eval_set
                .parent()
                .unwrap_or(Path::new("."))
                .join("test_config.json");
            if !beside.is_file() {
                return Ok(defaults());
            }
            (beside.clone(), ConfigSource::Beside(beside))
        }
    };
    let text = crate::config::read_text(&path).map_err(|source| ConfigError::Read {
        path: path.display().to_string(),
        source,
    })?;
    parse(&text, source)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn numbers_and_objects_and_match_type_spellings() {
        let c = parse(
            r#"{"criteria": {"tool_trajectory_avg_score": {"threshold": 1, "match_type": "in-order"},
                "response_match_score": 0.5}}"#,
            ConfigSource::Default,
        )
        .unwrap();
        assert_eq!(c.metrics.len(), 2);
        assert_eq!(c.metrics[0].name, "tool_trajectory_avg_score");
        assert!(matches!(
            c.metrics[0].kind,
            MetricKind::Trajectory {
                match_type: MatchType::InOrder,
                ..
            }
        ));
        assert_eq!(c.metrics[1].threshold, 0.5);
        assert_eq!(c.metrics[1].criterion, json!({"threshold": 0.5}));
    }

    #[test]
    fn refusals_say_why() {
        let refused = |text: &str| parse(text, ConfigSource::Default).unwrap_err().to_string();
        assert!(refused(r#"{"criteria": {"safety_v1": 0.8}}"#).contains("Vertex AI"));
        assert!(
            refused(r#"{"criteria": {"respones_match_score": 0.8}}"#).contains("unknown metric")
        );
        assert!(
            refused(r#"{"criteria": {"rubric_based_tool_use_quality_v1": {"threshold": 0.5}}}"#)
                .contains("needs `rubrics`")
        );
        assert!(
            refused(r#"{"criteria": {"m": 0.5}, "custom_metrics": {"m": {"code_config": {"name": "a.b"}}}}"#)
                .contains("Python")
        );
    }
}
