//! `expr!` templates: the OpenCL C expression text the macro writes at compile time, as
//! plain data the graph stores, with the process-wide registry that gives each template a
//! small id for cache keys, and the substitution of its placeholders.

use std::sync::Mutex;

use crate::error::Error;

/// What `expr!` generates at compile time for one expression.
///
/// In `text`, `$0`, `$1`, ... stand for the operands' values (in the order of the operand
/// list), `$T0`, `$T1`, ... for their OpenCL C element types, and `$R` for the result's.
/// Code generation substitutes them (only when a kernel is built); the template's address
/// identifies it in the kernel cache, so the same `expr!` site always hits the same kernel.
#[derive(Debug)]
pub struct ExprTemplate {
    /// The OpenCL C expression with placeholders.
    pub text: &'static str,
    /// OpenCL C definitions the expression calls (device functions), each guarded by an
    /// `#ifndef` so that a program can include it more than once.
    pub helpers: &'static str,
    /// The Rust source of the expression, for error messages and `explain()`.
    pub rust: &'static str,
    /// The expression's derivative with respect to each operand, in the operands' order,
    /// which the macro wrote at compile time; empty where none was written (a derivative's
    /// own template).
    pub derivatives: &'static [Derivative],
}

/// The derivative of an `expr!` with respect to one operand: what its gradient rule
/// records.
#[derive(Debug)]
pub enum Derivative {
    /// `g · ∂e/∂operand`: a template over the expression's operands and, after them, the
    /// cotangent `g` (of the result type), whose value has the result type.
    Template(&'static ExprTemplate),
    /// Zero: an operand that is an integer or a bool, or that the value does not depend
    /// on continuously.
    Zero,
    /// None, and why (a call of `lgamma`, a device function with a loop).
    Missing(&'static str),
}

/// Templates seen so far; the index is the template's id in cache keys.
static TEMPLATES: Mutex<Vec<&'static ExprTemplate>> = Mutex::new(Vec::new());

/// The small id of a template (stable for the process).
pub(crate) fn template_id(t: &'static ExprTemplate) -> u32 {
    let mut all = TEMPLATES.lock().unwrap_or_else(|e| e.into_inner());
    match all.iter().position(|x| std::ptr::eq(*x, t)) {
        Some(i) => i as u32,
        None => {
            all.push(t);
            (all.len() - 1) as u32
        }
    }
}

/// The template with this id.
pub(crate) fn template(id: u32) -> Option<&'static ExprTemplate> {
    TEMPLATES
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get(id as usize)
        .copied()
}

/// Substitutes the placeholders of a template: operand values, operand types, result type.
pub(crate) fn instantiate(
    text: &str,
    values: &[String],
    types: &[&str],
    result: &str,
) -> Result<String, Error> {
    let mut out = String::with_capacity(text.len() + 16);
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] != b'$' {
            let next = text[i..].find('$').map_or(text.len(), |p| i + p);
            out.push_str(&text[i..next]);
            i = next;
            continue;
        }
        i += 1;
        let is_type = bytes.get(i) == Some(&b'T');
        if bytes.get(i) == Some(&b'R') {
            out.push_str(result);
            i += 1;
            continue;
        }
        if is_type {
            i += 1;
        }
        let start = i;
        while i < bytes.len() && bytes[i].is_ascii_digit() {
            i += 1;
        }
        let n: usize = text[start..i]
            .parse()
            .map_err(|_| Error::InvalidShape(format!("malformed expr! template {text:?}")))?;
        let list: &[&str] = if is_type { types } else { &[] };
        let piece = if is_type {
            list.get(n).copied()
        } else {
            values.get(n).map(String::as_str)
        };
        out.push_str(
            piece.ok_or_else(|| Error::InvalidShape(format!("expr! template {text:?} uses operand {n}")))?,
        );
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::instantiate;

    #[test]
    fn placeholders_are_substituted() {
        let v = vec!["v3".to_string(), "s0".to_string()];
        let got = instantiate("fma($0, ($T1)2.0, $1) + ($R)$10x", &v, &["float", "int"], "float");
        assert!(got.is_err(), "operand 10 does not exist");
        let got = instantiate("fma($0, ($T1)2.0, $1) + ($R)1", &v, &["float", "int"], "float").unwrap();
        assert_eq!(got, "fma(v3, (int)2.0, s0) + (float)1");
    }
}
