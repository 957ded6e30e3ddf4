//! Where the eval routes read eval sets and results from. An eval engine plugs in by
//! implementing [`EvalSource`]; until then [`NoEvals`] answers empty lists, which is what
//! the dev UI needs to show its Evals tab (a 404 would hide it).

/// Eval sets and results of an app.
pub trait EvalSource: Send + Sync {
    /// Ids of the app's eval sets (`GET /apps/{app}/eval_sets`).
    fn eval_set_ids(&self, app: &str) -> Vec<String>;
    /// Ids of the app's eval results (`GET /apps/{app}/eval_results`).
    fn eval_result_ids(&self, app: &str) -> Vec<String>;
}

/// No evals.
pub struct NoEvals;

impl EvalSource for NoEvals {
    fn eval_set_ids(&self, _app: &str) -> Vec<String> {
        Vec::new()
    }

    fn eval_result_ids(&self, _app: &str) -> Vec<String> {
        Vec::new()
    }
}
