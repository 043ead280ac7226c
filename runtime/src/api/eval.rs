//! Materializing from the user's side: [`eval`] of several arrays, [`Queue::eval`],
//! `explain`, and `assign` (in place where nothing else can observe the target).

use std::fmt::Write;
use std::sync::Arc;

use crate::api::array::Array;
use crate::api::queue::Queue;
use crate::backend::queue::QueueInner;
use crate::codegen::fused_source;
use crate::dtype::Element;
use crate::error::{Error, Result};
use crate::exec;
use crate::graph::shape::broadcasts_to;
use crate::graph::NodeRef;
use crate::plan::{ColumnRows, Finish, GKind, Layout, ScanLayout};

/// Describes the kernels that materializing `roots` would launch, with their sources.
fn explain(roots: &[NodeRef]) -> Result<String> {
    let mut s = String::new();
    let Some(flush) = exec::plan(roots)? else {
        return Ok(s);
    };
    if flush.kernels().is_empty() {
        s.push_str("nothing to compute: every array is already materialized\n");
    }
    for (k, p) in flush.kernels().iter().enumerate() {
        let cached = flush
            .ctx
            .fused_kernels
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .contains_key(&p.key);
        let _ = writeln!(
            s,
            "kernel {k}: {} elements over dims {:?}; {} inputs, {} scalar args, {} outputs, {} ops{}",
            p.numel,
            p.dims,
            p.inputs.len(),
            p.scalars.len(),
            p.outputs.len(),
            p.values.len(),
            if cached { " (cached)" } else { "" }
        );
        if let Some(r) = &p.reduce {
            let layout = match r.layout {
                Layout::Columns(c) => format!(
                    "work-groups stream whole rows, {} neighbouring outputs per work-item{}",
                    c.width,
                    if c.width > 1 { ", vector loads" } else { "" }
                ),
                Layout::Serial => "one work-item per output and segment".to_string(),
                Layout::Lanes { lanes, vector } => format!(
                    "{lanes} lanes per output{}",
                    if vector.is_some() { ", vector loads" } else { "" }
                ),
            };
            let n = r.segments;
            let split = match r.finish {
                Finish::Single => "one segment".to_string(),
                Finish::InKernel => {
                    format!("{n} segments finished by the last work-group (no combine pass)")
                }
                Finish::ByConsumer => {
                    format!("{n} segments combined by the kernel that reads the result (no combine pass)")
                }
                Finish::CombinePass => format!("{n} segments plus a combine pass"),
            };
            let _ = writeln!(
                s,
                "  {:?} reduction: {} outputs of {} elements each, {layout}; {split}",
                r.op, r.n_out, r.n_red
            );
            if let Some(row) = &p.row {
                let _ = writeln!(
                    s,
                    "  with a {:?} reduction of each of the {} rows computed inside (one read of the rows for both){}",
                    row.op,
                    r.n_red,
                    match r.columns().map(|c| c.rows) {
                        Some(ColumnRows::RowsPerItem { .. }) => "; each work-item reads whole rows".to_string(),
                        Some(ColumnRows::GroupRows { vectors_per_item }) => format!(
                            "; a work-group of {} shares each row, {vectors_per_item} vectors per work-item",
                            p.group_size
                        ),
                        _ => String::new(),
                    }
                );
            }
        }
        if let Some(t) = &p.row_total {
            let _ = writeln!(
                s,
                "  and beside it a {:?} reduction of one value per row over the rows to one element (each work-group adds its rows; the last to finish combines the groups' parts)",
                t.op
            );
        }
        if let Some(sc) = &p.scan {
            let how = match sc.layout {
                ScanLayout::Serial => "one work-item per column, in order".to_string(),
                ScanLayout::Tiles { items, per_row } => format!(
                    "tiles of {} elements, {per_row} work-items per row{}",
                    items * p.group_size,
                    if per_row == p.group_size {
                        ", rows longer than a tile joined by a look-back"
                    } else {
                        ""
                    }
                ),
            };
            let _ = writeln!(
                s,
                "  {}{:?} scan of {} rows of {} (x {} inner): {how}{}",
                if sc.exclusive { "exclusive " } else { "" },
                sc.op,
                sc.outer,
                sc.len,
                sc.inner,
                if sc.epilogue.is_some() {
                    "; its consumers computed in its store"
                } else {
                    ""
                }
            );
        }
        if let Some(f) = &p.finishes {
            let _ = writeln!(
                s,
                "  finishes the split reduction it reads as input {}: combines its partials, {} lanes per output, then computes its elements there",
                f.slot, f.lanes
            );
        }
        if let Some(g) = &p.gemm {
            let mut p = p.clone();
            let tile = exec::tune::choose(&flush.ctx, None, &p)?;
            crate::plan::gemm::set_tile(&mut p, tile, &flush.ctx.profile);
            let _ = writeln!(
                s,
                "  matrix product of {:?} matrices, {} x {} times {} x {}: blocks of {} x {}, {} x {} per work-item, steps of {} along k{}",
                g.batch, g.m, g.k, g.k, g.n, tile.bm, tile.bn, tile.tm, tile.tn, tile.bk,
                match p.gemm.as_ref().map_or(1, |g| g.split) {
                    1 => String::new(),
                    s => format!("; k split into {s} segments, added up by a second kernel"),
                }
            );
            s.push_str(&fused_source(&p).unwrap_or_default());
            continue;
        }
        s.push_str(&fused_source(p).unwrap_or_default());
    }
    Ok(s)
}

/// Several arrays that can be materialized together (they share kernels where possible).
pub trait EvalList {
    /// The graph nodes of the arrays.
    #[doc(hidden)]
    fn nodes(&self) -> Vec<NodeHandle>;
}

/// An array of any element type, as seen by [`eval`]. Opaque.
#[doc(hidden)]
pub struct NodeHandle(pub(crate) NodeRef);

impl<T: Element> EvalList for &Array<T> {
    fn nodes(&self) -> Vec<NodeHandle> {
        vec![NodeHandle(self.node.clone())]
    }
}
impl<T: Element> EvalList for [&Array<T>] {
    fn nodes(&self) -> Vec<NodeHandle> {
        self.iter().map(|a| NodeHandle(a.node.clone())).collect()
    }
}
impl<T: Element, const N: usize> EvalList for [&Array<T>; N] {
    fn nodes(&self) -> Vec<NodeHandle> {
        self.iter().map(|a| NodeHandle(a.node.clone())).collect()
    }
}
impl<T: Element> EvalList for Vec<&Array<T>> {
    fn nodes(&self) -> Vec<NodeHandle> {
        self.iter().map(|a| NodeHandle(a.node.clone())).collect()
    }
}
impl<T: Element> EvalList for Vec<Array<T>> {
    fn nodes(&self) -> Vec<NodeHandle> {
        self.iter().map(|a| NodeHandle(a.node.clone())).collect()
    }
}

macro_rules! eval_tuple {
    ($($t:ident $i:tt),*) => {
        impl<'a, $($t: Element),*> EvalList for ($(&'a Array<$t>,)*) {
            fn nodes(&self) -> Vec<NodeHandle> {
                vec![$(NodeHandle(self.$i.node.clone())),*]
            }
        }
    };
}
eval_tuple!(A 0);
eval_tuple!(A 0, B 1);
eval_tuple!(A 0, B 1, C 2);
eval_tuple!(A 0, B 1, C 2, D 3);
eval_tuple!(A 0, B 1, C 2, D 3, E 4);
eval_tuple!(A 0, B 1, C 2, D 3, E 4, F 5);
eval_tuple!(A 0, B 1, C 2, D 3, E 4, F 5, G 6);
eval_tuple!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7);

/// Materializes several arrays in one flush on the default queue: arrays of one shape
/// computed from a common graph share one kernel. Returns without waiting.
/// [`Queue::eval`] does the same on a chosen queue.
///
/// `arrays` is a tuple of references (`&(&a, &b)`, element types may differ), a slice
/// (`&[&a, &b][..]`) or a `Vec` of arrays of one type.
///
/// ```
/// # use lazycl::prelude::*;
/// # fn main() -> lazycl::Result<()> {
/// let ctx = Context::new()?;
/// let x = ctx.from_slice(&[1.0f32, -2.0, 3.0])?;
/// let y = &x * 2.0;
/// let positive = y.gt(0.0);
/// let before = ctx.stats();
/// lazycl::eval(&(&y, &positive))?; // an f32 and a bool result of one graph
/// assert_eq!((ctx.stats() - before).kernels_launched, 1); // computed by one kernel
/// assert_eq!(y.to_vec()?, [2.0, -4.0, 6.0]);
/// assert_eq!(positive.to_vec()?, [true, false, true]);
/// # Ok(())
/// # }
/// ```
pub fn eval<L: EvalList + ?Sized>(arrays: &L) -> Result<()> {
    let nodes: Vec<NodeRef> = arrays.nodes().into_iter().map(|h| h.0).collect();
    exec::materialize(&nodes)
}

impl<T: Element> Array<T> {
    /// The fused plan and generated OpenCL C that materializing this array would run.
    /// Runs nothing.
    ///
    /// ```
    /// # use lazycl::prelude::*;
    /// # fn main() -> lazycl::Result<()> {
    /// let ctx = Context::new()?;
    /// let x = ctx.from_slice(&[1.0f32, 4.0, 9.0])?;
    /// let y = x.sqrt() * 2.0 + 1.0;
    /// let plan = y.explain()?;
    /// assert!(plan.contains("__kernel")); // the OpenCL C of the one fused kernel
    /// println!("{plan}");
    /// # Ok(())
    /// # }
    /// ```
    pub fn explain(&self) -> Result<String> {
        explain(std::slice::from_ref(&self.node))
    }

    /// Sets this array to `value` (broadcast to this array's shape), evaluated now on the
    /// default queue (enqueued, not waited for). Writes into this array's own device
    /// memory when no other handle can observe it and `value` does not read it; otherwise
    /// into a pooled buffer. Either way a loop of `assign`s allocates nothing after its
    /// first steps.
    ///
    /// ```
    /// # use lazycl::prelude::*;
    /// # fn main() -> lazycl::Result<()> {
    /// let ctx = Context::new()?;
    /// let target = ctx.from_slice(&[1.0f32, -3.0])?;
    /// let mut w = ctx.zeros::<f32>(2)?;
    /// for _ in 0..3 {
    ///     // One gradient step of (w - target)² per iteration, written into `w`.
    ///     let grad = 2.0 * (&w - &target);
    ///     w.assign(&w - 0.25 * grad)?;
    /// }
    /// assert_eq!(w.to_vec()?, [0.875, -2.625]);
    /// w.assign(0.0)?; // a scalar broadcasts
    /// assert_eq!(w.to_vec()?, [0.0, 0.0]);
    /// # Ok(())
    /// # }
    /// ```
    pub fn assign(&mut self, value: impl crate::api::ops::Operand<T>) -> Result<()> {
        let queue = self.node.ctx.queue().clone();
        self.assign_impl(&queue, value)
    }

    /// Like [`assign`](Array::assign), evaluated on `queue`.
    pub fn assign_on(&mut self, queue: &Queue, value: impl crate::api::ops::Operand<T>) -> Result<()> {
        queue.check_context(&self.node.ctx, || "Array::assign_on".into())?;
        self.assign_impl(&queue.inner, value)
    }

    fn assign_impl(
        &mut self,
        queue: &Arc<QueueInner>,
        value: impl crate::api::ops::Operand<T>,
    ) -> Result<()> {
        let ctx = self.node.ctx.clone();
        let v = value.into_array(crate::api::ops::CtxRef(&ctx));
        ctx.tag.check(
            &v.node.ctx.tag,
            || "Array::assign".into(),
            || format!("the value (shape {:?})", v.shape()),
        )?;
        self.assign_on_queue(queue, v)
    }

    /// `assign` of a value of this array's context.
    pub(crate) fn assign_on_queue(&mut self, queue: &Arc<QueueInner>, v: Array<T>) -> Result<()> {
        if let Some(e) = v.recording_error() {
            return Err(e);
        }
        let target_shape = self.shape().to_vec();
        let v = if v.shape() == target_shape.as_slice() {
            v
        } else if broadcasts_to(v.shape(), &target_shape) {
            v.broadcast_to(&target_shape)
        } else {
            return Err(Error::ShapeMismatch {
                op: "assign".into(),
                left: v.shape().to_vec(),
                right: target_shape,
                why: "do not fit: the value's shape cannot be broadcast to the array's (trailing axes must be equal, or 1 in the value)".into(),
            });
        };
        let unique = Arc::strong_count(&self.node) == 1;
        if unique {
            if let Some(buffer) = self.node.buffer() {
                let reads_self = crate::plan::collect::collect(std::slice::from_ref(&v.node))?
                    .iter()
                    .any(|g| {
                        Arc::ptr_eq(&g.node, &self.node)
                            || matches!(&g.kind, GKind::Ready(b) if Arc::ptr_eq(b, &buffer))
                    });
                if !reads_self && Arc::strong_count(&buffer) == 2 {
                    exec::materialize_into(queue, &v.node, buffer)?;
                    *self = Array::from_node(v.node);
                    return Ok(());
                }
            }
        }
        exec::materialize_on(queue, std::slice::from_ref(&v.node))?;
        *self = v;
        Ok(())
    }
}

impl Queue {
    /// Materializes several arrays on this queue (like [`eval`]); returns at once.
    pub fn eval<L: EvalList + ?Sized>(&self, arrays: &L) -> Result<()> {
        let nodes: Vec<_> = arrays.nodes().into_iter().map(|h| h.0).collect();
        exec::materialize_on(&self.inner, &nodes)
    }
}
