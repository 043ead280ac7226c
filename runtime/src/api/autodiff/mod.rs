//! Gradients of the recorded graph: reverse-mode differentiation that is itself lazy.
//!
//! lazycl records a computation before it runs, which is what reverse mode needs: from the
//! output back to the arrays asked about, each operation's pullback ([`rules`]) records
//! the cotangents of its operands as new lazy arrays. Nothing runs when a gradient is
//! asked for; the backward pass fuses like any recording (an update `&w - &g[0] * lr`
//! computes the last backward kernel's values in its store).
//!
//! Two ways in:
//!
//! - [`Array::grad`] (and [`Array::vjp`]) on arrays whose recording is still lazy: the
//!   usual training step, which asks for the gradient before reading anything.
//! - [`value_and_grad`] (and [`grad`]) over a closure, which may read values on the host
//!   meanwhile (a loss printed, a branch on a value): while it runs, arrays it materializes
//!   keep how they were computed. As in JAX, the closure's parameters are what is
//!   differentiated; arrays it captures are constants.
//!
//! An array materialized before the gradient was asked for keeps only its values: a
//! gradient meeting one that may depend on the arrays asked about (made after them) is
//! an error naming it, never a silently partial gradient. [`Array::detach`] stops
//! gradients on purpose.

pub(crate) mod custom;
mod elementwise;
mod gather;
mod linear;
mod reduce;
mod rules;
mod shared;
mod templates;
mod views;
mod walk;

use shared::constant;

use crate::api::array::Array;
use crate::backend::context::Recording;
use crate::dtype::{Element, Float};
use crate::error::{Error, Result};
use crate::graph::{Node, NodeRef, Op, State};

impl<T: Float> Array<T> {
    /// The gradients of this 0-d array (a loss) with respect to each of `wrt`, as lazy
    /// arrays of their shapes: `∂self/∂wrt[i]`. Zeros for an array the loss does not
    /// depend on. Nothing runs: the backward pass is recorded, and computed (fused)
    /// where the gradients are read.
    ///
    /// Errors: this array is not 0-d ([`vjp`](Array::vjp) takes other shapes); an
    /// operation on the way has no derivative (`lgamma`, a `#[device_fn]`
    /// with a loop); an array on the way
    /// was materialized before this call and may depend on `wrt` (use
    /// [`value_and_grad`], or ask for the gradient before reading it).
    ///
    /// ```
    /// # use lazycl::prelude::*;
    /// # fn main() -> lazycl::Result<()> {
    /// let ctx = Context::new()?;
    /// let w = ctx.from_slice(&[1.0f32, 2.0, 3.0])?;
    /// let x = ctx.from_slice(&[0.5f32, -1.0, 2.0])?;
    /// let loss = (&w * &x).sum() + (&w * &w).sum() * 0.5;
    /// let g = loss.grad(&[&w])?;
    /// assert_eq!(g[0].to_vec()?, vec![1.5, 1.0, 5.0]); // x + w
    /// # Ok(())
    /// # }
    /// ```
    #[track_caller]
    pub fn grad(&self, wrt: &[&Array<T>]) -> Result<Vec<Array<T>>> {
        if !self.shape().is_empty() {
            return Err(Error::Gradient {
                op: "grad".into(),
                at: std::panic::Location::caller().to_string(),
                reason: format!(
                    "the differentiated array must be 0-d (a loss), not of shape {:?}; reduce it \
                     (`sum()`, `mean()`) or pass a cotangent to `vjp`",
                    self.shape()
                ),
            });
        }
        let seed = constant(self, 1.0);
        pulled(self, seed, wrt)
    }

    /// The vector-Jacobian product: the cotangents of `wrt` given `cotangent`, the
    /// cotangent of this array (of its shape): `Σ cotangent · ∂self/∂wrt[i]`. A
    /// [`grad`](Array::grad) of a non-scalar output.
    #[track_caller]
    pub fn vjp(&self, cotangent: &Array<T>, wrt: &[&Array<T>]) -> Result<Vec<Array<T>>> {
        if cotangent.shape() != self.shape() {
            return Err(Error::ShapeMismatch {
                op: "vjp".into(),
                left: self.shape().to_vec(),
                right: cotangent.shape().to_vec(),
                why: "differ: the cotangent must have the output's shape".into(),
            });
        }
        pulled(self, cotangent.clone(), wrt)
    }

    /// This array's values, through which gradients do not pass (JAX's `stop_gradient`,
    /// torch's `detach`): a constant to [`grad`](Array::grad). Lazy, and free: it reads
    /// this array where it is read.
    #[track_caller]
    pub fn detach(&self) -> Array<T> {
        Array::from_node(Node::detached(&self.node))
    }
}

/// `f(params)` and its gradients with respect to `params`: `f` receives arrays with the
/// values of `params` and returns a 0-d array (a loss). While `f` runs, arrays it
/// materializes (a value read on the host, a branch on it) keep how they were computed,
/// so the gradient reaches through them. Arrays `f` captures instead of receiving are
/// constants (JAX's rule). The value and the gradients are lazy.
///
/// ```
/// # use lazycl::prelude::*;
/// # fn main() -> lazycl::Result<()> {
/// let ctx = Context::new()?;
/// let w = ctx.from_slice(&[3.0f64, -1.0])?;
/// let (loss, g) = lazycl::value_and_grad(&[&w], |p| {
///     let y = (&p[0] * &p[0]).sum();
///     assert!(y.item().unwrap() > 0.0); // read inside: still differentiable
///     y
/// })?;
/// assert_eq!(loss.item()?, 10.0);
/// assert_eq!(g[0].to_vec()?, vec![6.0, -2.0]);
/// # Ok(())
/// # }
/// ```
#[track_caller]
pub fn value_and_grad<T: Float>(
    params: &[&Array<T>],
    f: impl FnOnce(&[Array<T>]) -> Array<T>,
) -> Result<(Array<T>, Vec<Array<T>>)> {
    let Some(first) = params.first() else {
        return Err(Error::Gradient {
            op: "value_and_grad".into(),
            at: std::panic::Location::caller().to_string(),
            reason: "no parameters to differentiate against".into(),
        });
    };
    let recording = Recording::start(&first.node.ctx);
    // The parameters as new arrays of the same values: the closure's graph starts at
    // them, so what it captures is older than they are (a constant).
    let inner: Vec<Array<T>> = params.iter().map(|p| alias(p)).collect();
    let value = f(&inner);
    let refs: Vec<&Array<T>> = inner.iter().collect();
    let grads = value.grad(&refs)?;
    drop(recording);
    Ok((value, grads))
}

/// The gradients of `f` at `params` ([`value_and_grad`] without the value).
#[track_caller]
pub fn grad<T: Float>(
    params: &[&Array<T>],
    f: impl FnOnce(&[Array<T>]) -> Array<T>,
) -> Result<Vec<Array<T>>> {
    value_and_grad(params, f).map(|(_, g)| g)
}

/// A new array with `p`'s values: a reshape to its own shape (planning reads `p`).
#[track_caller]
fn alias<T: Element>(p: &Array<T>) -> Array<T> {
    Array::from_node(Node::new(
        p.node.ctx.clone(),
        p.node.dtype,
        p.node.shape.clone(),
        State::Lazy(Op::Reshape(p.node.clone())),
    ))
}

/// The cotangents of `wrt` given `seed`, the cotangent of `out`; zeros where `out` does
/// not depend on one.
fn pulled<T: Float>(out: &Array<T>, seed: Array<T>, wrt: &[&Array<T>]) -> Result<Vec<Array<T>>> {
    let targets: Vec<NodeRef> = wrt.iter().map(|w| w.node.clone()).collect();
    let found = walk::pull_back(&out.node, seed.node, &targets)?;
    Ok(found
        .into_iter()
        .zip(wrt)
        .map(|(g, w)| match g {
            Some(g) => Array::from_node(g),
            None => constant(w, 0.0).broadcast_to(w.shape()),
        })
        .collect())
}
