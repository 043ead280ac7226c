//! Recording scans: `cumsum`, `cumprod` (ndarray's and numpy's names) and their
//! exclusive forms, along any axis. A scan is a kernel of its own whose loads evaluate
//! its operand's producers (`(&x * 2.0).cumsum(0)` reads `x` once); it stays on the
//! device as a lazy array of its operand's shape.

use crate::api::array::Array;
use crate::api::ops::cast_node;
use crate::api::views::AsAxis;
use crate::dtype::{Element, Numeric};
use crate::error::Error;
use crate::graph::Node;
use crate::graph::{Op, ReduceOp, ScanSpec, State};

impl<T: Numeric> Array<T> {
    #[track_caller]
    fn record_scan(&self, op: ReduceOp, axis: usize, exclusive: bool, name: &str) -> Array<T::Sum> {
        let ctx = &self.node.ctx;
        let shape = self.shape().to_vec();
        if let State::Failed(e) = &*self.node.state() {
            return Array::failed(ctx, shape, (**e).clone());
        }
        if axis >= shape.len() {
            let e = Error::InvalidShape(format!(
                "{name}: axis {axis} is out of range for an array of shape {shape:?}"
            ));
            return Array::failed(ctx, shape, e);
        }
        let spec = ScanSpec { op, axis, exclusive };
        // (Types narrower than 32 bits scan in their compute type: see `Numeric::Sum`.)
        let compute = T::Sum::DTYPE.compute();
        let input = cast_node(&self.node, T::DTYPE.compute());
        let scanned = Node::new(
            ctx.clone(),
            compute,
            shape.into(),
            State::Lazy(Op::Scan(spec, input)),
        );
        Array::from_node(cast_node(&scanned, T::Sum::DTYPE))
    }

    /// The cumulative sum along `axis`: element `i` along it is the sum of the elements
    /// `0..=i` (numpy's `cumsum`; integer sums wrap, as `sum` does). The shape is
    /// unchanged.
    ///
    /// ```
    /// # use lazycl::prelude::*;
    /// # fn main() -> lazycl::Result<()> {
    /// let ctx = Context::new()?;
    /// let a = ctx.from_shape_slice([2, 3], &[1, 2, 3, 4, 5, 6])?;
    /// assert_eq!(a.cumsum(Axis(1)).to_vec()?, vec![1, 3, 6, 4, 9, 15]);
    /// assert_eq!(a.cumsum(Axis(0)).to_vec()?, vec![1, 2, 3, 5, 7, 9]);
    /// # Ok(())
    /// # }
    /// ```
    #[track_caller]
    pub fn cumsum(&self, axis: impl AsAxis) -> Array<T::Sum> {
        match self.axis_or_failed("cumsum", axis, false) {
            Ok(d) => self.record_scan(ReduceOp::Sum, d, false, "cumsum"),
            Err(failed) => failed,
        }
    }

    /// The cumulative product along `axis` (numpy's `cumprod`; integer products wrap).
    ///
    /// ```
    /// # use lazycl::prelude::*;
    /// # fn main() -> lazycl::Result<()> {
    /// let ctx = Context::new()?;
    /// let growth = ctx.from_slice(&[1.5f64, 2.0, 0.5, 4.0])?;
    /// // The scan reads its operand's producers in its loads: one kernel here.
    /// assert_eq!((&growth * 2.0).cumprod(0).to_vec()?, [3.0, 12.0, 12.0, 96.0]);
    /// # Ok(())
    /// # }
    /// ```
    #[track_caller]
    pub fn cumprod(&self, axis: impl AsAxis) -> Array<T::Sum> {
        match self.axis_or_failed("cumprod", axis, false) {
            Ok(d) => self.record_scan(ReduceOp::Prod, d, false, "cumprod"),
            Err(failed) => failed,
        }
    }

    /// The exclusive cumulative sum along `axis`: element `i` is the sum of the elements
    /// `0..i`, so the first is 0 (an offsets array from counts: `counts.cumsum_exclusive(0)`).
    ///
    /// ```
    /// # use lazycl::prelude::*;
    /// # fn main() -> lazycl::Result<()> {
    /// let ctx = Context::new()?;
    /// let counts = ctx.from_slice(&[3u32, 0, 2, 5])?;
    /// assert_eq!(counts.cumsum_exclusive(0).to_vec()?, vec![0, 3, 3, 5]);
    /// # Ok(())
    /// # }
    /// ```
    #[track_caller]
    pub fn cumsum_exclusive(&self, axis: impl AsAxis) -> Array<T::Sum> {
        match self.axis_or_failed("cumsum_exclusive", axis, false) {
            Ok(d) => self.record_scan(ReduceOp::Sum, d, true, "cumsum_exclusive"),
            Err(failed) => failed,
        }
    }

    /// The exclusive cumulative product along `axis`: element `i` is the product of the
    /// elements `0..i`, so the first is 1.
    #[track_caller]
    pub fn cumprod_exclusive(&self, axis: impl AsAxis) -> Array<T::Sum> {
        match self.axis_or_failed("cumprod_exclusive", axis, false) {
            Ok(d) => self.record_scan(ReduceOp::Prod, d, true, "cumprod_exclusive"),
            Err(failed) => failed,
        }
    }
}
