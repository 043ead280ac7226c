//! A gradient rule of the user's ([`Array::with_vjp`], JAX's `custom_vjp`): for what
//! lazycl does not differentiate (a `#[kernel]` launch, whose body is OpenCL C) or
//! differentiates worse than the user can (a stable formula). The rule is kept on a node
//! that reads the array, and the walk uses it instead of the node's operation.

use std::panic::Location;

use crate::api::array::Array;
use crate::dtype::Float;
use crate::error::Result;
use crate::graph::{CustomRule, Node, NodeRef, Op, State};

impl<T: Float> Array<T> {
    /// This array's values with a gradient rule of your own (JAX's `custom_vjp`): a
    /// gradient reaching the result gives `pullback` the cotangent `g` (of this array's
    /// shape) and takes from it the cotangents of `inputs`, one each, of their shapes,
    /// instead of differentiating how the values were computed. For a `#[kernel]`
    /// launch, which lazycl does not differentiate, or a derivative you know better.
    /// Lazy: the result reads this array, and the rule's arrays are recorded when a
    /// gradient asks for them. The rule keeps what it captures as long as the result
    /// lives.
    ///
    /// A gradient through it errs when the rule gives another number of cotangents, or
    /// one of another shape.
    ///
    /// ```
    /// # use lazycl::prelude::*;
    /// # fn main() -> lazycl::Result<()> {
    /// let ctx = Context::new()?;
    /// let x = ctx.from_slice(&[0.5f32, 2.0])?;
    /// // softplus, with its derivative written as the sigmoid
    /// let s = (x.exp() + 1.0f32).ln();
    /// let x2 = x.clone();
    /// let s = s.with_vjp(&[&x], move |g| vec![g / ((&x2 * -1.0f32).exp() + 1.0f32)]);
    /// let d = s.sum().grad(&[&x])?[0].to_vec()?;
    /// assert!((d[0] - 1.0 / (1.0 + (-0.5f32).exp())).abs() < 1e-6);
    /// # Ok(())
    /// # }
    /// ```
    #[track_caller]
    pub fn with_vjp(
        &self,
        inputs: &[&Array<T>],
        pullback: impl Fn(&Array<T>) -> Vec<Array<T>> + Send + Sync + 'static,
    ) -> Array<T> {
        if self.node.failed {
            return self.clone();
        }
        let nodes: Vec<NodeRef> = inputs.iter().map(|a| a.node.clone()).collect();
        let pullback = move |g: &NodeRef| {
            let g = Array::<T>::from_node(g.clone());
            Ok(pullback(&g).into_iter().map(|a| a.node).collect())
        };
        Array::from_node(with_rule(
            &self.node,
            nodes,
            Box::new(pullback),
            Location::caller(),
        ))
    }
}

/// The cotangents of a rule's inputs given the node's.
pub(crate) type Pullback = Box<dyn Fn(&NodeRef) -> Result<Vec<NodeRef>> + Send + Sync>;

/// A node reading `value`, whose gradient is `pullback`'s over `inputs` (what
/// [`Array::with_vjp`] and `scatter_add` make), given at `at`.
pub(crate) fn with_rule(
    value: &NodeRef,
    inputs: Vec<NodeRef>,
    pullback: Pullback,
    at: &'static Location<'static>,
) -> NodeRef {
    let refs: Vec<&NodeRef> = inputs.iter().collect();
    let node = Node::made_from(
        value.ctx.clone(),
        value.dtype,
        value.shape.clone(),
        State::Lazy(Op::Reshape(value.clone())),
        &refs,
    );
    node.set_rule(CustomRule { inputs, pullback, at });
    node
}
