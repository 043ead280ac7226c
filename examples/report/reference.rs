//! Baselines measured by the reference scripts of `benches/reference/` in the same call:
//! one JSON object per line (`"name"`, then fields such as `"ms"`, `"tflops"`, `"gbps"`),
//! from the file an environment variable names. Without it every baseline is NaN.

use std::collections::HashMap;

pub struct Reference(HashMap<String, serde_json::Value>);

impl Reference {
    /// The rows of the file named by `var`.
    pub fn load(var: &str) -> Reference {
        let text = std::env::var(var)
            .ok()
            .and_then(|path| std::fs::read_to_string(path).ok())
            .unwrap_or_default();
        Reference(
            text.lines()
                .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
                .filter_map(|v| Some((v.get("name")?.as_str()?.to_string(), v)))
                .collect(),
        )
    }

    /// Field `field` of row `name` (NaN when absent).
    pub fn get(&self, name: &str, field: &str) -> f64 {
        self.0
            .get(name)
            .and_then(|v| v.get(field))
            .and_then(|f| f.as_f64())
            .unwrap_or(f64::NAN)
    }
}
