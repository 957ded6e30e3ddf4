//! What `adk-flow eval` prints: the table, `--json`, `--junit`, GitHub annotations.

use super::SetRun;
use crate::eval::engine::CaseOutcome;
use crate::eval::results::{EvalSetResult, EvalStatus};
use crate::eval::runs::{CaseSummary, summarize};
use crate::eval::types::{FunctionCall, IntermediateData, Invocation};
use serde_json::json;
use std::io::Write;

/// How much the table shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    /// Failures and the summary line.
    Quiet,
    /// Every case with its metrics.
    Normal,
    /// And the turns of failing cases.
    Detailed,
    /// And the turns of every case.
    Verbose,
}

struct SetSummary<'a> {
    run: &'a SetRun,
    cases: Vec<(CaseSummary, Vec<&'a CaseOutcome>)>,
}

/// Everything reported about one command run.
pub struct Report<'a> {
    sets: Vec<SetSummary<'a>>,
    runs: u32,
}

fn fmt_score(s: Option<f64>) -> String {
    s.map_or_else(|| "n/a".to_owned(), |s| format!("{s:.2}"))
}

fn calls(inv: &Invocation) -> String {
    let list: Vec<String> = IntermediateData::tool_calls(inv.intermediate_data.as_ref())
        .iter()
        .map(|c: &&FunctionCall| {
            format!(
                "{}({})",
                c.name.as_deref().unwrap_or(""),
                c.args
                    .as_ref()
                    .map_or("None".to_owned(), ToString::to_string)
            )
        })
        .collect();
    if list.is_empty() {
        "none".into()
    } else {
        list.join(", ")
    }
}

fn xml(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .chars()
        .filter(|c| !c.is_control() || matches!(c, '\n' | '\t'))
        .collect()
}

impl<'a> Report<'a> {
    /// Summarizes every case of every set over its runs.
    pub fn new(sets: &'a [SetRun], runs: u32) -> Self {
        let sets = sets
            .iter()
            .map(|run| {
                let count = run.loaded.set.eval_cases.len();
                let cases = (0..count)
                    .map(|i| {
                        let outcomes: Vec<&CaseOutcome> = (0..runs as usize)
                            .filter_map(|r| run.outcomes.get(r * count + i))
                            .collect();
                        let results: Vec<_> = outcomes.iter().map(|o| &o.result).collect();
                        (summarize(&run.config.metrics, &results), outcomes)
                    })
                    .collect();
                SetSummary { run, cases }
            })
            .collect();
        Report { sets, runs }
    }

    fn all_cases(&self) -> impl Iterator<Item = &CaseSummary> {
        self.sets
            .iter()
            .flat_map(|s| s.cases.iter().map(|(c, _)| c))
    }

    /// Whether every case passed.
    pub fn all_passed(&self) -> bool {
        self.all_cases().all(|c| c.status == EvalStatus::Passed)
    }

    fn counts(&self) -> (usize, usize, usize) {
        let count = |s: EvalStatus| self.all_cases().filter(|c| c.status == s).count();
        (
            count(EvalStatus::Passed),
            count(EvalStatus::Failed),
            count(EvalStatus::NotEvaluated),
        )
    }

    /// The human table, ending with `N passed, M failed`.
    ///
    /// # Errors
    /// stdout cannot be written.
    pub fn print_table(&self, level: Level) -> std::io::Result<()> {
        let stdout = std::io::stdout();
        let mut out = stdout.lock();
        for set in &self.sets {
            if level > Level::Quiet {
                writeln!(
                    out,
                    "{} (eval set {}; criteria: {})",
                    set.run.loaded.path.display(),
                    set.run.loaded.set.eval_set_id,
                    set.run.config.source
                )?;
            }
            for (case, outcomes) in &set.cases {
                let passed = case.status == EvalStatus::Passed;
                if level == Level::Quiet && passed {
                    continue;
                }
                let mark = match case.status {
                    EvalStatus::Passed => "PASS",
                    EvalStatus::Failed => "FAIL",
                    EvalStatus::NotEvaluated => "NOT EVALUATED",
                };
                let metrics: Vec<String> = case
                    .metrics
                    .iter()
                    .map(|m| {
                        let range = m
                            .range
                            .map(|(lo, hi)| format!(" ({lo:.2}-{hi:.2})"))
                            .unwrap_or_default();
                        let flag = if m.status == EvalStatus::Passed {
                            ""
                        } else {
                            " ✗"
                        };
                        format!(
                            "{} {}/{:.2}{range}{flag}",
                            m.name,
                            fmt_score(m.score),
                            m.threshold
                        )
                    })
                    .collect();
                let flaky = if case.flaky {
                    format!(
                        "  FLAKY ({} of {} runs passed)",
                        case.runs
                            .iter()
                            .filter(|s| **s == EvalStatus::Passed)
                            .count(),
                        case.runs.len()
                    )
                } else {
                    String::new()
                };
                writeln!(
                    out,
                    "  {mark:<4} {}  {}{flaky}",
                    case.eval_id,
                    metrics.join("  ")
                )?;
                for e in &case.errors {
                    writeln!(out, "       error: {e}")?;
                }
                for o in outcomes.iter() {
                    for n in &o.notes {
                        writeln!(out, "       {n}")?;
                    }
                }
                let show_turns = level == Level::Verbose || (level == Level::Detailed && !passed);
                if !passed || show_turns {
                    self.print_turns(&mut out, outcomes, show_turns)?;
                }
            }
        }
        let (passed, failed, not_evaluated) = self.counts();
        writeln!(out, "\n{passed} passed, {} failed", failed + not_evaluated)?;
        Ok(())
    }

    fn print_turns(
        &self,
        out: &mut impl Write,
        outcomes: &[&CaseOutcome],
        every_turn: bool,
    ) -> std::io::Result<()> {
        for o in outcomes {
            let prefix = if self.runs > 1 {
                format!("run {}, ", o.result.run.unwrap_or(1))
            } else {
                String::new()
            };
            for (t, inv) in o
                .result
                .eval_metric_result_per_invocation
                .iter()
                .enumerate()
            {
                let failing: Vec<String> = inv
                    .eval_metric_results
                    .iter()
                    .filter(|m| m.eval_status == EvalStatus::Failed)
                    .map(|m| format!("{} {}", m.metric_name, fmt_score(m.score)))
                    .collect();
                if failing.is_empty() && !every_turn {
                    continue;
                }
                writeln!(
                    out,
                    "       {prefix}turn {}: {}",
                    t + 1,
                    if failing.is_empty() {
                        "ok".to_owned()
                    } else {
                        failing.join(", ")
                    }
                )?;
                if !every_turn && outcomes.len() > 1 && self.runs > 1 {
                    continue;
                }
                if every_turn {
                    let actual = &inv.actual_invocation;
                    if let Some(e) = &inv.expected_invocation {
                        writeln!(out, "         expected calls: {}", calls(e))?;
                    }
                    writeln!(out, "         actual calls:   {}", calls(actual))?;
                    if let Some(e) = &inv.expected_invocation {
                        writeln!(
                            out,
                            "         expected text:  {:?}",
                            crate::eval::engine::final_text(e)
                        )?;
                    }
                    writeln!(
                        out,
                        "         actual text:    {:?}",
                        crate::eval::engine::final_text(actual)
                    )?;
                }
            }
        }
        Ok(())
    }

    /// `--json`: one document, ADK's result shape plus a summary.
    ///
    /// # Errors
    /// stdout cannot be written.
    pub fn print_json(&self, results: &[EvalSetResult]) -> std::io::Result<()> {
        let (passed, failed, not_evaluated) = self.counts();
        let doc = json!({
            "eval_set_results": results,
            "summary": {"passed": passed, "failed": failed, "not_evaluated": not_evaluated},
        });
        let mut out = std::io::stdout().lock();
        serde_json::to_writer_pretty(&mut out, &doc)?;
        writeln!(out)
    }

    /// The JUnit XML report: a testsuite per eval set, a testcase per eval case.
    pub fn junit(&self) -> String {
        let mut x = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n");
        for set in &self.sets {
            let id = &set.run.loaded.set.eval_set_id;
            let failures = set
                .cases
                .iter()
                .filter(|(c, _)| c.status != EvalStatus::Passed)
                .count();
            x.push_str(&format!(
                "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{failures}\" errors=\"0\" skipped=\"0\">\n",
                xml(id),
                set.cases.len()
            ));
            for (case, outcomes) in &set.cases {
                x.push_str(&format!(
                    "    <testcase classname=\"{}\" name=\"{}\"",
                    xml(id),
                    xml(&case.eval_id)
                ));
                if case.status == EvalStatus::Passed {
                    x.push_str("/>\n");
                    continue;
                }
                let mut lines: Vec<String> = case.errors.clone();
                for (i, m) in case.metrics.iter().enumerate() {
                    if m.status == EvalStatus::Passed {
                        continue;
                    }
                    let turns: Vec<String> = outcomes
                        .iter()
                        .flat_map(|o| o.result.eval_metric_result_per_invocation.iter())
                        .map(|p| fmt_score(p.eval_metric_results.get(i).and_then(|r| r.score)))
                        .collect();
                    lines.push(format!(
                        "{}: score {} below threshold {} (per turn: {})",
                        m.name,
                        fmt_score(m.score),
                        m.threshold,
                        turns.join(", ")
                    ));
                }
                let message = lines
                    .first()
                    .cloned()
                    .unwrap_or_else(|| "not evaluated".into());
                x.push_str(&format!(
                    ">\n      <failure message=\"{}\">{}</failure>\n    </testcase>\n",
                    xml(&message),
                    xml(&lines.join("\n"))
                ));
            }
            x.push_str("  </testsuite>\n");
        }
        x.push_str("</testsuites>\n");
        x
    }

    /// `::error` workflow commands for failing cases (GitHub Actions), on stdout unless
    /// stdout carries the JSON document.
    ///
    /// # Errors
    /// The stream cannot be written.
    pub fn github_annotations(&self, json: bool) -> std::io::Result<()> {
        let mut lines = Vec::new();
        for set in &self.sets {
            let path = set.run.loaded.path.display().to_string();
            let text = crate::config::read_text(&set.run.loaded.path).unwrap_or_default();
            for (case, _) in &set.cases {
                if case.status == EvalStatus::Passed {
                    continue;
                }
                let line = text
                    .find(&format!("\"{}\"", case.eval_id))
                    .map_or(1, |i| text[..i].matches('\n').count() + 1);
                let mut why: Vec<String> = case.errors.clone();
                why.extend(
                    case.metrics
                        .iter()
                        .filter(|m| m.status != EvalStatus::Passed)
                        .map(|m| format!("{} {} < {}", m.name, fmt_score(m.score), m.threshold)),
                );
                let message = why
                    .join("; ")
                    .replace('%', "%25")
                    .replace('\r', "%0D")
                    .replace('\n', "%0A");
                lines.push(format!(
                    "::error file={path},line={line},title=eval case {}::{message}",
                    case.eval_id.replace(',', "%2C").replace(':', "%3A")
                ));
            }
        }
        if json {
            let mut err = std::io::stderr().lock();
            for l in lines {
                writeln!(err, "{l}")?;
            }
        } else {
            let mut out = std::io::stdout().lock();
            for l in lines {
                writeln!(out, "{l}")?;
            }
        }
        Ok(())
    }
}
