//! Which values of a row kernel repeat an earlier one ([`Reuse`]). Each phase of a row
//! kernel is planned on its own, so softmax's epilogue computes `exp(x - max)` again, as
//! its sum did, and every phase loads the row again. Where the work-items hold their
//! rows in registers, a value equal to one an earlier phase computed (the same operation
//! and type of equal operands) and varying along the row is kept per element (`k{i}[e]`)
//! and read back instead of computed or loaded again; a value equal to an earlier one of
//! its own phase is that value; a value nothing reads is left out.

use crate::plan::row_kernel::{Hold, RowsPlan};
use crate::plan::{KernelPlan, Value};

/// How a row kernel's phase prints a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum How {
    /// Computed (or loaded) from its operands.
    Compute,
    /// Equal to value `f` of the same phase: that value.
    Alias(usize),
    /// Equal to value `f` of an earlier phase, which keeps it in `k{f}`.
    Held(usize),
    /// Read by nothing: not printed.
    Unused,
}

pub(super) struct Reuse {
    pub(super) how: Vec<How>,
    /// Per value, whether it is kept in `k{i}` for a later phase.
    pub(super) kept: Vec<bool>,
}

impl Reuse {
    /// `reduced[slot]`: the reduction whose result input `slot` reads, if any; `unheld`:
    /// values no phase keeps (a later equal value computes them again).
    pub(super) fn of(plan: &KernelPlan, r: &RowsPlan, reduced: &[Option<usize>], unheld: &[usize]) -> Reuse {
        let n = plan.values.len();
        // (A value at or past a phase's end belongs to a later phase.)
        let ends = r.phase_ends();
        let phase: Vec<usize> = (0..n).map(|i| ends.iter().filter(|&&e| e <= i).count()).collect();
        let first = first_equal(plan);
        // Worth keeping: values that vary along the row (a scalar, a row's reduction and
        // what is computed from them alone are cheaper to compute again).
        let mut varies = vec![false; n];
        for (i, pv) in plan.values.iter().enumerate() {
            varies[i] = match &pv.value {
                Value::Scalar { .. } => false,
                Value::Load { slot } => reduced[*slot].is_none(),
                Value::Op { args, .. } => args.iter().any(|&a| varies[a]),
                Value::Inside { .. } | Value::Gather { .. } | Value::FromIndex { .. } => true,
            };
        }
        let registers = matches!(r.layout.hold, Hold::Registers { .. });
        let mut how = vec![How::Unused; n];
        let mut kept = vec![false; n];
        let mut used = vec![false; n];
        // What each phase must produce: each reduction's operand, and the stores.
        for red in &r.reductions {
            used[red.value] = true;
        }
        for (o, output) in plan.outputs.iter().enumerate() {
            if !r.reductions.iter().any(|red| red.output == o) {
                used[output.value] = true;
            }
        }
        // Later values first: whatever a used value reads is used.
        for i in (0..n).rev() {
            if !used[i] {
                continue;
            }
            let f = first[i];
            how[i] = if f == i {
                How::Compute
            } else if phase[f] == phase[i] {
                How::Alias(f)
            } else if registers && varies[f] && !unheld.contains(&f) {
                kept[f] = true;
                How::Held(f)
            } else {
                How::Compute
            };
            match how[i] {
                How::Alias(f) | How::Held(f) => used[f] = true,
                _ => operands(&plan.values[i].value, |a| used[a] = true),
            }
        }
        Reuse { how, kept }
    }
}

/// Per value, the first value of the kernel equal to it: the same operation and type of
/// operands that are themselves equal (itself where no earlier one is). Each phase takes
/// its scalar arguments again, so equal scalar arguments count as one.
pub(super) fn first_equal(plan: &KernelPlan) -> Vec<usize> {
    let scalars: Vec<usize> = (0..plan.scalars.len())
        .map(|k| (0..k).find(|&j| plan.scalars[j] == plan.scalars[k]).unwrap_or(k))
        .collect();
    let mut first: Vec<usize> = Vec::with_capacity(plan.values.len());
    let mut renamed: Vec<Option<Value>> = Vec::with_capacity(plan.values.len());
    for (i, pv) in plan.values.iter().enumerate() {
        // A load in a branch is printed inside it: never shared.
        let value = (!pv.in_branch).then(|| rename(&pv.value, &first, &scalars));
        let equal = value.as_ref().and_then(|value| {
            (0..i).find(|&j| plan.values[j].dtype == pv.dtype && renamed[j].as_ref() == Some(value))
        });
        first.push(equal.unwrap_or(i));
        renamed.push(value);
    }
    first
}

/// `value` with its operands renamed to their first equal values, and its scalar
/// argument to the first equal one.
fn rename(value: &Value, first: &[usize], scalars: &[usize]) -> Value {
    let mut value = value.clone();
    match &mut value {
        Value::Scalar { slot } => *slot = scalars[*slot],
        Value::Op { args, .. } | Value::FromIndex { args, .. } => {
            for a in args.iter_mut() {
                *a = first[*a];
            }
        }
        Value::Gather { index, .. } => *index = first[*index],
        Value::Load { .. } | Value::Inside { .. } => {}
    }
    value
}

/// Calls `f` on each value `value` reads.
fn operands(value: &Value, mut f: impl FnMut(usize)) {
    match value {
        Value::Op { args, .. } | Value::FromIndex { args, .. } => args.iter().for_each(|&a| f(a)),
        Value::Gather { index, .. } => f(*index),
        Value::Load { .. } | Value::Scalar { .. } | Value::Inside { .. } => {}
    }
}
