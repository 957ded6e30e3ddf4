//! ROUGE-1 as rouge-score 0.1.2 computes it with `use_stemmer=True`, the computation behind
//! ADK's `response_match_score`.
//!
//! Tokenizing: lower-case (Unicode), every run of characters outside `[a-z0-9]` separates
//! tokens (so letters outside ASCII vanish: identical Japanese texts score 0, as in ADK),
//! tokens longer than three characters are stemmed with NLTK's Porter stemmer
//! ([`super::porter`]). Scoring: unigram counts clipped, precision = hits / candidate
//! tokens, recall = hits / reference tokens (each denominator at least 1), F = 2PR/(P+R).

use super::porter;
use std::collections::HashMap;

/// Precision, recall and F-measure of one comparison.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rouge {
    /// Matched unigrams over the candidate's unigrams.
    pub precision: f64,
    /// Matched unigrams over the reference's unigrams.
    pub recall: f64,
    /// Harmonic mean of the two (0 when both are 0).
    pub fmeasure: f64,
}

/// rouge-score's tokens of `text`, stemmed.
pub fn tokenize(text: &str) -> Vec<String> {
    let lower = text.to_lowercase();
    lower
        .split(|c: char| !(c.is_ascii_lowercase() || c.is_ascii_digit()))
        .filter(|t| !t.is_empty())
        .map(|t| {
            if t.len() > 3 {
                porter::stem(t)
            } else {
                t.to_owned()
            }
        })
        .filter(|t| !t.is_empty())
        .collect()
}

fn counts(tokens: &[String]) -> HashMap<&str, usize> {
    let mut out = HashMap::new();
    for t in tokens {
        *out.entry(t.as_str()).or_insert(0) += 1;
    }
    out
}

/// ROUGE-1 of `candidate` against `reference`.
pub fn rouge1(reference: &str, candidate: &str) -> Rouge {
    let reference = tokenize(reference);
    let candidate = tokenize(candidate);
    let target = counts(&reference);
    let prediction = counts(&candidate);
    let hits: usize = target
        .iter()
        .map(|(t, n)| (*n).min(prediction.get(t).copied().unwrap_or(0)))
        .sum();
    let precision = hits as f64 / candidate.len().max(1) as f64;
    let recall = hits as f64 / reference.len().max(1) as f64;
    let fmeasure = if precision + recall > 0.0 {
        2.0 * precision * recall / (precision + recall)
    } else {
        0.0
    };
    Rouge {
        precision,
        recall,
        fmeasure,
    }
}

#[cfg(test)]
mod tests {
    use super::{porter, rouge1, tokenize};
    use serde_json::Value;

    fn table() -> Value {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/eval/rouge_table.json"
        );
        serde_json::from_str(&std::fs::read_to_string(path).expect("rouge table"))
            .expect("rouge table is JSON")
    }

    #[test]
    fn every_stem_matches_nltk() {
        let table = table();
        let stems = table["stems"].as_array().expect("stems");
        assert!(stems.len() > 8000);
        let wrong: Vec<String> = stems
            .iter()
            .filter_map(|pair| {
                let word = pair[0].as_str()?;
                let expected = pair[1].as_str()?;
                let got = porter::stem(word);
                (got != expected).then(|| format!("{word}: nltk {expected}, ours {got}"))
            })
            .collect();
        assert!(
            wrong.is_empty(),
            "{} differ:\n{}",
            wrong.len(),
            wrong.join("\n")
        );
    }

    #[test]
    fn every_tokenization_matches_rouge_score() {
        let table = table();
        for pair in table["tokens"].as_array().expect("tokens") {
            let text = pair[0].as_str().expect("text");
            let expected: Vec<String> = serde_json::from_value(pair[1].clone()).expect("tokens");
            assert_eq!(tokenize(text), expected, "{text:?}");
        }
    }

    #[test]
    fn every_score_matches_rouge_score_exactly() {
        let table = table();
        let rows = table["rouge1"].as_array().expect("rouge1");
        assert!(rows.len() > 300);
        for row in rows {
            let (reference, candidate) = (row[0].as_str().unwrap(), row[1].as_str().unwrap());
            let got = rouge1(reference, candidate);
            let want = [row[2].as_f64(), row[3].as_f64(), row[4].as_f64()];
            assert_eq!(
                [Some(got.precision), Some(got.recall), Some(got.fmeasure)],
                want,
                "{reference:?} vs {candidate:?}"
            );
        }
    }

    #[test]
    fn identical_japanese_scores_zero_as_in_adk() {
        let text = "東京の天気は晴れです。";
        assert_eq!(rouge1(text, text).fmeasure, 0.0);
    }
}
