//! Indexing by index arrays. Gathers (`take`, `take_along_axis`) are recorded: a take is
//! an elementwise node of the result's shape, and the kernel that reads it loads the data
//! at the index's value (the data from memory of its own, materialized first where it is
//! lazy; the indices may be lazy and are computed in the same kernel). Scatters
//! (`scatter_add`, `bincount`) write into an array and run when called, one kernel that
//! computes the values and adds them atomically through the index. `one_hot` compares
//! labels with lazy positions.

use std::sync::Arc;

use crate::api::array::Array;
use crate::api::autodiff::custom::with_rule;
use crate::api::ops::{failure, CtxRef, Operand};
use crate::api::sequences::positions;
use crate::api::views::AsAxis;
use crate::backend::buffer::DeviceBuffer;
use crate::backend::context::ContextInner;
use crate::backend::queue::QueueInner;
use crate::dtype::{Arithmetic, Element, Index, Integer, Numeric};
use crate::error::{Error, Result};
use crate::exec;
use crate::graph::shape::broadcast;
use crate::graph::view::{SourceAxis, ViewMap};
use crate::graph::{BinaryOp, NodeRef, Op, Origin, State, TakeSpec, UnaryOp};
use crate::plan::{GKind, ScatterCombine};

impl<T: Element> Array<T> {
    /// The elements at `indices` along `axis`: numpy's `np.take(a, indices, axis,
    /// mode='clip')` (ndarray's `select`, with an index array on the device). The result's
    /// shape is this array's with `axis` replaced by the indices' shape. Any integer type
    /// indexes; an index outside `0..len` is clamped into it (negative ones to 0), so no
    /// index reads outside the array. Taking from an empty axis is an error.
    ///
    /// `a.take(0, &idx)` feeding elementwise work is computed in that work's kernel: no
    /// array of the picked elements is stored.
    ///
    /// ```
    /// # use lazycl::prelude::*;
    /// # fn main() -> lazycl::Result<()> {
    /// let ctx = Context::new()?;
    /// let a = ctx.from_shape_slice([3, 2], &[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0])?;
    /// let rows = ctx.from_slice(&[2u32, 0, 2])?;
    /// assert_eq!(a.take(Axis(0), &rows).to_vec()?, vec![5.0, 6.0, 1.0, 2.0, 5.0, 6.0]);
    /// let cols = ctx.from_slice(&[1i64, 7, -1])?; // clamped: 1, 1, 0
    /// assert_eq!(a.take(Axis(1), &cols).to_vec()?, vec![2.0, 2.0, 1.0, 4.0, 4.0, 3.0, 6.0, 6.0, 5.0]);
    /// # Ok(())
    /// # }
    /// ```
    #[track_caller]
    pub fn take<I: Integer>(&self, axis: impl AsAxis, indices: &Array<I>) -> Array<T> {
        let axis = match self.axis_or_failed("take", axis, false) {
            Ok(d) => d,
            Err(failed) => return failed,
        };
        let data = self.shape();
        let picked = indices.shape();
        if let Err(e) = self.check_take("take", axis, indices) {
            return Array::failed(&self.node.ctx, data.to_vec(), e);
        }
        let shape: Vec<usize> = data[..axis]
            .iter()
            .chain(picked)
            .chain(&data[axis + 1..])
            .copied()
            .collect();
        self.record_take(
            TakeSpec {
                axis,
                along: false,
                search: None,
            },
            shape,
            indices,
            "take",
        )
    }

    /// One element along `axis` per position of `indices`, an array of this array's rank:
    /// numpy's `np.take_along_axis(a, indices, axis)` with indices clamped into the axis
    /// (`mode='clip'`). The other axes broadcast against each other; the result has
    /// `indices`' length along `axis`. The partner of `argmax_axis`/`argsort`-style
    /// indices: `a.take_along_axis(Axis(1), &i)` picks, in each row, the columns `i` names.
    ///
    /// ```
    /// # use lazycl::prelude::*;
    /// # fn main() -> lazycl::Result<()> {
    /// let ctx = Context::new()?;
    /// let a = ctx.from_shape_slice([2, 3], &[10, 11, 12, 20, 21, 22])?;
    /// let i = ctx.from_shape_slice([2, 2], &[2u32, 0, 1, 1])?;
    /// assert_eq!(a.take_along_axis(Axis(1), &i).to_vec()?, vec![12, 10, 21, 21]);
    /// # Ok(())
    /// # }
    /// ```
    #[track_caller]
    pub fn take_along_axis<I: Integer>(&self, axis: impl AsAxis, indices: &Array<I>) -> Array<T> {
        let axis = match self.axis_or_failed("take_along_axis", axis, false) {
            Ok(d) => d,
            Err(failed) => return failed,
        };
        let data = self.shape();
        let picked = indices.shape();
        let name = "take_along_axis";
        if let Err(e) = self.check_take(name, axis, indices) {
            return Array::failed(&self.node.ctx, data.to_vec(), e);
        }
        let mismatch = || Error::ShapeMismatch {
            op: format!("{name} along axis {axis}"),
            left: data.to_vec(),
            right: picked.to_vec(),
            why: format!("do not fit: the indices need the array's rank, and its lengths off axis {axis}"),
        };
        if picked.len() != data.len() {
            return Array::failed(&self.node.ctx, data.to_vec(), mismatch());
        }
        let mut along = data.to_vec();
        along[axis] = picked[axis];
        let Some(shape) = broadcast(&along, picked) else {
            return Array::failed(&self.node.ctx, data.to_vec(), mismatch());
        };
        self.record_take(
            TakeSpec {
                axis,
                along: true,
                search: None,
            },
            shape.to_vec(),
            indices,
            name,
        )
    }

    /// The errors both takes share: recording errors, another context, a bad axis.
    #[track_caller]
    fn check_take<I: Integer>(&self, name: &str, axis: usize, indices: &Array<I>) -> Result<()> {
        for n in [&self.node, &indices.node] {
            if let Some(e) = failure(n) {
                return Err(e);
            }
        }
        self.node.ctx.tag.check(
            &indices.node.ctx.tag,
            || name.into(),
            || format!("the indices (shape {:?})", indices.shape()),
        )?;
        if axis >= self.shape().len() {
            return Err(Error::InvalidShape(format!(
                "{name}: axis {axis} is out of range for an array of shape {:?}",
                self.shape()
            )));
        }
        Ok(())
    }

    /// Records a take of result shape `shape` (an error if it picks from an empty axis).
    #[track_caller]
    fn record_take<I: Integer>(
        &self,
        spec: TakeSpec,
        shape: Vec<usize>,
        indices: &Array<I>,
        name: &str,
    ) -> Array<T> {
        let data = self.shape();
        if data[spec.axis] == 0 && shape.iter().all(|&d| d > 0) {
            let e = Error::InvalidShape(format!(
                "{name}: axis {} of an array of shape {data:?} is empty, so indices of shape {:?} pick nothing",
                spec.axis,
                indices.shape()
            ));
            return Array::failed(&self.node.ctx, data.to_vec(), e);
        }
        Array::lazy(
            &self.node.ctx,
            shape,
            Op::Take {
                spec,
                data: self.node.clone(),
                indices: indices.node.clone(),
            },
        )
    }
}

/// Adds each element of `src` into `dst` at the position `indices` gives along `axis`:
/// `dst[.., indices[j], ..] += src[.., j, ..]` (numpy's `np.add.at`, torch's
/// `index_add_`). `indices` is one-dimensional, of any integer type, and may repeat: every
/// element is added (atomically, so the order of the additions, and a float sum's last
/// bits, may vary from run to run). An index outside the axis drops its elements (JAX's
/// default for scatters). `src` broadcasts to `dst`'s shape with `axis` as long as
/// `indices`; it may be a lazy expression, computed in the adding kernel. Complex
/// elements add each part on its own (two adding kernels, one per part).
///
/// ```
/// # use lazycl::prelude::*;
/// # fn main() -> lazycl::Result<()> {
/// let ctx = Context::new()?;
/// let mut sums = ctx.zeros::<f32>([3, 2])?;
/// let rows = ctx.from_slice(&[2u32, 0, 2, 9])?; // 9 is outside: dropped
/// let x = ctx.from_shape_slice([4, 2], &[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0])?;
/// scatter_add(&mut sums, Axis(0), &rows, &x)?;
/// assert_eq!(sums.to_vec()?, vec![3.0, 4.0, 0.0, 0.0, 6.0, 8.0]);
/// # Ok(())
/// # }
/// ```
#[track_caller]
pub fn scatter_add<T: Arithmetic, I: Integer>(
    dst: &mut Array<T>,
    axis: impl AsAxis,
    indices: &Array<I>,
    src: impl Operand<T>,
) -> Result<()> {
    let axis = crate::api::views::resolve_axis("scatter_add", axis.axis_value(), dst.shape(), false)?;
    let src = src.into_array(CtxRef(&dst.node.ctx));
    if T::DTYPE.is_complex() {
        let (mut re, mut im): (Array<T::Real>, Array<T::Real>) =
            (dst.unary(UnaryOp::Re), dst.unary(UnaryOp::Im));
        scatter_add_real(&mut re, axis, indices, src.unary::<T::Real>(UnaryOp::Re))?;
        scatter_add_real(&mut im, axis, indices, src.unary::<T::Real>(UnaryOp::Im))?;
        *dst = re.binary(BinaryOp::Complex, im);
        return Ok(());
    }
    // A real type is its own real part: the same elements, typed as such.
    let mut real = Array::<T::Real>::from_node(dst.node.clone());
    scatter_add_real(&mut real, axis, indices, Array::<T::Real>::from_node(src.node))?;
    *dst = Array::from_node(real.node);
    Ok(())
}

/// [`scatter_add`] of a real type.
#[track_caller]
fn scatter_add_real<T: Numeric, I: Integer>(
    dst: &mut Array<T>,
    axis: usize,
    indices: &Array<I>,
    src: Array<T>,
) -> Result<()> {
    let ctx = dst.node.ctx.clone();
    if T::Compute::DTYPE != T::DTYPE {
        // Types narrower than 32 bits add in their compute type (OpenCL's atomics are 32
        // and 64 bits wide; a 16-bit float sum rounds once, at the end).
        let src = src.cast::<T::Compute>();
        let mut wide = dst.cast::<T::Compute>();
        scatter_add_real(&mut wide, axis, indices, src)?;
        *dst = wide.cast::<T>();
        return Ok(());
    }
    for n in [&dst.node, &indices.node] {
        if let Some(e) = failure(n) {
            return Err(e);
        }
    }
    ctx.tag.check(
        &indices.node.ctx.tag,
        || "scatter_add".into(),
        || format!("the indices (shape {:?})", indices.shape()),
    )?;
    let shape = dst.shape().to_vec();
    if axis >= shape.len() {
        return Err(Error::InvalidShape(format!(
            "scatter_add: axis {axis} is out of range for an array of shape {shape:?}"
        )));
    }
    let [m] = indices.shape()[..] else {
        return Err(Error::InvalidShape(format!(
            "scatter_add: the indices must be one-dimensional, not of shape {:?}",
            indices.shape()
        )));
    };
    let mut src_shape = shape.clone();
    src_shape[axis] = m;
    let v = added_values(&ctx, src, axis, &shape, &src_shape)?;
    if src_shape.contains(&0) {
        return Ok(());
    }
    // (For gradients: the values as given, and what `dst` held unless a constant, kept
    // apart from the memory written.)
    let given = v.clone();
    let prior = gradient_prior(dst);
    // (A lazy destination is computed now; it keeps how, for gradients.)
    let recipe = prior.as_ref().and_then(|p| match &*p.node.state() {
        State::Lazy(op) => Some(op.clone()),
        _ => None,
    });
    let q = ctx.queue().clone();
    let buffer = dst.private_buffer(None, "scatter_add")?;
    if let (Some(p), Some(op)) = (&prior, recipe) {
        p.node.keep_recipe(op);
    }
    // What the adding kernel computes: elementwise work over memory other than `dst`'s.
    // Values or indices that read `dst` itself, or hold a product, reduction or scan
    // (kernels of their own), are computed first, into memory of their own.
    let v = computed_apart(&q, v, &buffer)?;
    let indices = computed_apart(&q, indices.clone(), &buffer)?;
    // The indices in the values' shape: `m` along `axis`, broadcast along the others.
    let mut along = vec![1; shape.len()];
    along[axis] = m;
    let ix = indices.reshape(along).broadcast_to(&src_shape);
    exec::materialize_scatter(
        &q,
        &v.node,
        &ix.node,
        axis,
        ScatterCombine::Add,
        buffer,
        &Arc::new(scatter_map(shape.len(), axis)),
        &shape,
    )?;
    if differentiated::<T>(&ctx) {
        let at = std::panic::Location::caller();
        *dst = differentiable_scatter(dst, axis, &indices, given, prior, at);
    }
    Ok(())
}

/// Whether a scatter of `T` on `ctx` keeps its gradient rule: floats, while the context
/// records for gradients (inside `value_and_grad`). Elsewhere a scatter keeps nothing, as
/// any operation run when called: a loop of scatters into one array must not keep every
/// earlier version of it, and a gradient meeting the result is the error that says so.
fn differentiated<T: Element>(ctx: &ContextInner) -> bool {
    T::DTYPE.is_float() && ctx.keeps_recipes()
}

/// What `dst` held before a float scatter adds into it, when a gradient may pass through
/// it (kept: the scatter then writes a copy): not for an upload or a fill, which are
/// constants, nor outside `value_and_grad` (see [`differentiated`]).
fn gradient_prior<T: Element>(dst: &Array<T>) -> Option<Array<T>> {
    if !differentiated::<T>(&dst.node.ctx) {
        return None;
    }
    let constant = dst.node.rule().is_none()
        && matches!(&*dst.node.state(), State::Ready(_, Origin::Upload | Origin::Fill));
    (!constant).then(|| dst.clone())
}

/// `dst` after `scatter_add` added `values` at `indices` along `axis`, with its gradient
/// rule: the values' cotangent is the cotangent's elements at the indices (0 where an
/// index was outside the axis and dropped its elements), `prior`'s is the cotangent.
fn differentiable_scatter<T: Numeric, I: Integer>(
    dst: &Array<T>,
    axis: usize,
    indices: &Array<I>,
    values: Array<T>,
    prior: Option<Array<T>>,
    at: &'static std::panic::Location<'static>,
) -> Array<T> {
    let len = dst.shape()[axis] as i64;
    let mut along = vec![1; dst.ndim()];
    along[axis] = indices.len();
    let mut inputs = vec![values.node.clone()];
    inputs.extend(prior.as_ref().map(|p| p.node.clone()));
    let (indices, has_prior) = (indices.clone(), prior.is_some());
    let pullback = move |g: &NodeRef| {
        let g = Array::<T>::from_node(g.clone());
        let wide = indices.cast::<i64>();
        let inside = (wide.ge(0i64) & wide.lt(len)).cast::<T>().reshape(along.clone());
        let mut out = vec![(g.take(axis, &indices) * inside).node];
        if has_prior {
            out.push(g.node.clone());
        }
        Ok(out)
    };
    Array::from_node(with_rule(&dst.node, inputs, Box::new(pullback), at))
}

/// `src` as the values `scatter_add` adds along `axis` into an array of shape `shape`:
/// broadcast to `space`, that shape with the indices' length along `axis`.
#[track_caller]
fn added_values<T: Numeric>(
    ctx: &Arc<ContextInner>,
    src: impl Operand<T>,
    axis: usize,
    shape: &[usize],
    space: &[usize],
) -> Result<Array<T>> {
    let v = src.into_array(CtxRef(ctx));
    ctx.tag.check(
        &v.node.ctx.tag,
        || "scatter_add".into(),
        || format!("the values (shape {:?})", v.shape()),
    )?;
    let v_shape = v.shape().to_vec();
    let v = v.broadcast_to(space);
    if v.recording_error().is_some() {
        return Err(Error::ShapeMismatch {
            op: format!(
                "scatter_add along axis {axis} into an array of shape {shape:?} (values and positions)"
            ),
            left: v_shape,
            right: space.to_vec(),
            why: "do not fit: the values cannot be broadcast to the indices' positions".into(),
        });
    }
    Ok(v)
}

/// The map of a scatter into an array of rank `rank` along `axis`: the array's own
/// coordinates, but `axis` fixed at 0 (the index's value adds the position along it).
pub(super) fn scatter_map(rank: usize, axis: usize) -> ViewMap {
    ViewMap {
        axes: (0..rank)
            .map(|d| SourceAxis {
                from: (d != axis).then_some(d),
                start: 0,
                step: 1,
            })
            .collect(),
    }
}

/// `a` as an operand of a scatter into `target`: itself where it is elementwise work over
/// other memory (computed inside the adding kernel), else computed first on `queue`
/// into memory of its own (contiguous, which the adding kernel reads plainly).
#[track_caller]
pub(super) fn computed_apart<X: Element>(
    queue: &Arc<QueueInner>,
    a: Array<X>,
    target: &Arc<DeviceBuffer>,
) -> Result<Array<X>> {
    let whole_kernels = crate::plan::collect::collect(std::slice::from_ref(&a.node))?
        .graph
        .iter()
        .any(|g| matches!(g.kind, GKind::Op(code, _) if !code.is_elementwise()));
    let a = if whole_kernels || a.reads_buffer(target)? {
        let copy = a.to_contiguous();
        exec::materialize_on(queue, std::slice::from_ref(&copy.node))?;
        copy
    } else {
        a
    };
    // Memory is read by a load the scatter's kernel computes: a ready value alone would
    // leave it nothing to compute, and it would store nothing.
    Ok(if a.is_materialized() { a.to_contiguous() } else { a })
}

impl<I: Integer> Array<I> {
    /// How many times each value `0..len` occurs in this one-dimensional index array, as
    /// [`Index`] counts (numpy's `np.bincount(x, minlength=len)`, with values outside
    /// `0..len` not counted: the length is the caller's, never read back from the
    /// device). A `scatter_add` of ones. An array longer than `u32::MAX`, whose counts
    /// could pass an `Index`, is an error.
    ///
    /// ```
    /// # use lazycl::prelude::*;
    /// # fn main() -> lazycl::Result<()> {
    /// let ctx = Context::new()?;
    /// let labels = ctx.from_slice(&[2u32, 0, 2, 3, 2, 9])?;
    /// let counts: Array<Index> = labels.bincount(4)?;
    /// assert_eq!(counts.to_vec()?, [1, 0, 3, 1]); // 9 is outside: dropped
    /// # Ok(())
    /// # }
    /// ```
    #[track_caller]
    pub fn bincount(&self, len: usize) -> Result<Array<Index>> {
        if self.shape().len() != 1 {
            return Err(Error::InvalidShape(format!(
                "bincount: the values must be one-dimensional, not of shape {:?}",
                self.shape()
            )));
        }
        if self.len() > Index::MAX as usize {
            return Err(Error::InvalidShape(format!(
                "bincount: {} values could count past u32::MAX, the largest count an Index holds",
                self.len()
            )));
        }
        let mut counts = self.context().zeros::<Index>([len])?;
        scatter_add(&mut counts, 0, self, 1 as Index)?;
        Ok(counts)
    }

    /// Each label as a row of `k` elements, 1 at the label's position and 0 elsewhere,
    /// along a new last axis (JAX's `jax.nn.one_hot(labels, k)`, the element type `U`
    /// chosen: `labels.one_hot::<f32>(k)`). A label outside `0..k` (negative ones
    /// included) gives a row of zeros, as in JAX. Lazy, with no memory of its own: a
    /// comparison of the labels with positions (`Context::iota`), computed where it is
    /// read. An integer type of labels too narrow for `k` positions is an error.
    ///
    /// ```
    /// # use lazycl::prelude::*;
    /// # fn main() -> lazycl::Result<()> {
    /// let ctx = Context::new()?;
    /// let labels = ctx.from_slice(&[2i32, 0, -1, 5])?;
    /// let hot = labels.one_hot::<f32>(3)?;
    /// assert_eq!(hot.shape(), [4, 3]);
    /// assert_eq!(
    ///     hot.to_vec()?,
    ///     [0.0, 0.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]
    /// );
    /// # Ok(())
    /// # }
    /// ```
    #[track_caller]
    pub fn one_hot<U: Element>(&self, k: usize) -> Result<Array<U>> {
        let classes = positions::<I>(&self.context(), "one_hot", k)?;
        Ok(self.insert_axis(self.ndim()).eq(&classes).cast::<U>())
    }
}
