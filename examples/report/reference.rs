//! Baselines measured by the reference scripts of `benches/reference/` in the same call:
//! one JSON object per line (`"name"`, then fields such as `"ms"`, `"tflops"`, `"gbps"`),
//! from the file an environment variable names; other lines (the scripts' `# device`
//! line) are skipped. Without the variable every baseline is NaN; a file that cannot be
//! read, or that holds no row, is an error (a wrong path would otherwise look like a
//! missing baseline).

use std::collections::HashMap;

use crate::raw::R;

pub struct Reference(HashMap<String, serde_json::Value>);

impl Reference {
    /// The rows of the file named by `var`.
    pub fn load(var: &str) -> R<Reference> {
        let Some(path) = std::env::var_os(var).filter(|p| !p.is_empty()) else {
            return Ok(Reference(HashMap::new()));
        };
        let text = std::fs::read_to_string(&path)
            .map_err(|e| format!("{var}: cannot read {}: {e}", path.to_string_lossy()))?;
        let rows: HashMap<_, _> = text
            .lines()
            .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
            .filter_map(|v| Some((v.get("name")?.as_str()?.to_string(), v)))
            .collect();
        if rows.is_empty() {
            return Err(format!(
                "{var}: {} holds no JSON row with a \"name\" (run the reference script with --json)",
                path.to_string_lossy()
            ));
        }
        Ok(Reference(rows))
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
