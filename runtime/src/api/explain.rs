//! `explain` and `explain_dot`: what materializing arrays would run — in words, each
//! kernel's layout and generated OpenCL C, or as a Graphviz picture (`exec::dot`) — and,
//! for an array with nothing left to compute, what computed it (`graph::Origin`).

use std::fmt::Write;

use crate::api::array::Array;
use crate::codegen::fused_source;
use crate::dtype::Element;
use crate::error::Result;
use crate::exec;
use crate::exec::dot::{render, Picture};
use crate::graph::{NodeRef, Origin};
use crate::plan::describe::{kernel_kind, layout};
use crate::plan::KernelPlan;

impl<T: Element> Array<T> {
    /// The fused plan and generated OpenCL C that materializing this array would run;
    /// for an array already materialized, what made it: the kernel and flush that
    /// computed it, an upload, a fill, ...
    ///
    /// ```
    /// # use lazycl::prelude::*;
    /// # fn main() -> lazycl::Result<()> {
    /// let ctx = Context::new()?;
    /// let x = ctx.from_slice(&[1.0f32, 4.0, 9.0])?;
    /// let y = x.sqrt() * 2.0 + 1.0;
    /// let plan = y.explain()?;
    /// assert!(plan.contains("__kernel")); // the OpenCL C of the one fused kernel
    /// y.eval()?;
    /// assert!(y.explain()?.starts_with("already materialized: computed by kernel 0"));
    /// assert!(x.explain()?.contains("upload"));
    /// # Ok(())
    /// # }
    /// ```
    pub fn explain(&self) -> Result<String> {
        crate::api::array::one_device(&self.node.ctx, "Array::explain")?;
        explain(std::slice::from_ref(&self.node))
    }

    /// What materializing this array would run, as a Graphviz DOT picture: a cluster per
    /// kernel (its kind; new or cached), the operations it computes, the arrays in
    /// memory it reads (uploads, earlier results), the arrays it writes (this one, and
    /// those later kernels read, such as a sum kept on the device), and edges along the
    /// data. `dot -Tsvg` renders it. Each flush that builds a kernel can also write its
    /// picture by itself: `LAZYCL_DUMP_DOT=dir` ([`ContextBuilder::dump_dot`]).
    ///
    /// [`ContextBuilder::dump_dot`]: crate::api::builder::ContextBuilder::dump_dot
    pub fn explain_dot(&self) -> Result<String> {
        crate::api::array::one_device(&self.node.ctx, "Array::explain_dot")?;
        explain_dot(std::slice::from_ref(&self.node))
    }
}

/// Describes the kernels that materializing `roots` would launch, with their sources.
fn explain(roots: &[NodeRef]) -> Result<String> {
    let mut s = String::new();
    let Some(flush) = exec::plan(roots)? else {
        return Ok(s);
    };
    if flush.kernels().is_empty() {
        for root in roots {
            s.push_str(&materialized(root));
        }
        return Ok(s);
    }
    for root in roots {
        let _ = writeln!(
            s,
            "{} {:?} recorded at {}",
            root.dtype,
            root.shape.as_slice(),
            root.at
        );
    }
    for (k, p) in launch_plans(&flush)?.iter().enumerate() {
        let _ = writeln!(
            s,
            "kernel {k}: {} elements over dims {:?}; {} inputs, {} scalar args, {} outputs, {} ops{}",
            p.numel,
            p.dims,
            p.inputs.len(),
            p.scalars.len(),
            p.outputs.len(),
            p.values.len(),
            if exec::is_cached(&flush.ctx, p) {
                " (cached)"
            } else {
                ""
            }
        );
        layout(&mut s, p);
        s.push_str(&fused_source(p).unwrap_or_default());
    }
    Ok(s)
}

/// The picture of what materializing `roots` would launch (`exec::dot`).
fn explain_dot(roots: &[NodeRef]) -> Result<String> {
    let Some(flush) = exec::plan(roots)? else {
        return Ok("digraph flush {\n}\n".into());
    };
    let plans = launch_plans(&flush)?;
    let cached: Vec<bool> = plans.iter().map(|p| exec::is_cached(&flush.ctx, p)).collect();
    let kinds: Vec<String> = plans.iter().map(kernel_kind).collect();
    let picture = Picture {
        graph: &flush.graph,
        roots: &flush.roots,
        kernels: &plans,
        cached: &cached,
        kinds: &kinds,
    };
    let title = format!("what materializing it would run on {}", flush.ctx.device.name);
    Ok(render(&picture, &title))
}

/// A flush's plans as they would launch: each matrix product's tile chosen (the one a
/// search chose before, or the default; `explain` never starts a search).
fn launch_plans(flush: &exec::Flush) -> Result<Vec<KernelPlan>> {
    let mut plans = flush.kernels().to_vec();
    for p in &mut plans {
        if matches!(&p.kind, crate::plan::KernelKind::Gemm(g) if g.tile.is_none()) {
            let tile = exec::tune::choose(&flush.ctx, None, p)?;
            crate::plan::gemm::set_tile(p, tile, &flush.ctx.profile);
        }
    }
    Ok(plans)
}

/// What `explain` says of an array with nothing left to compute: what wrote it.
fn materialized(node: &NodeRef) -> String {
    let done = "nothing to compute";
    match node.origin() {
        None => format!("{done}: the array is already materialized\n"),
        Some(Origin::Upload) => format!(
            "already materialized: an upload from the host (Context::array, from_slice, from_vec or from_shape_slice); {done}\n"
        ),
        Some(Origin::Fill) => {
            format!("already materialized: a fill on the device (Context::zeros or full); {done}\n")
        }
        Some(Origin::Algorithm(what)) => format!(
            "already materialized: the result of {what} (device kernels outside the lazy graph); {done}\n"
        ),
        Some(Origin::WrittenBy(by)) => {
            format!("already materialized: last written in place by {by}; {done}\n")
        }
        Some(Origin::Flush(f)) => {
            let mut s = format!(
                "already materialized: computed by kernel {} ({}) of flush {}, which launched {} kernel{}; {done}\n",
                f.kernel,
                f.kernels.get(f.kernel as usize).map_or("", String::as_str),
                f.flush,
                f.kernels.len(),
                if f.kernels.len() == 1 { "" } else { "s" }
            );
            for (k, kind) in f.kernels.iter().enumerate() {
                let _ = writeln!(s, "  kernel {k}: {kind}");
            }
            s
        }
    }
}
