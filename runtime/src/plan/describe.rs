//! A kernel plan named in one line: its kind (elementwise, reduction and its layout, row
//! kernel, scan, matrix product) and sizes, its clauses separated by `; ` (the DOT
//! picture puts each on a line of its own). Read by `explain` of an array a flush
//! computed, by the DOT picture's cluster labels, and kept per flush structure with the
//! arrays it materializes (`graph::Origin`), so it is short and never the source. Also
//! the operations a kernel computes in users' words (`op_name`, `operations`), for the
//! DOT picture and for the error of a generated kernel the compiler rejects.

use super::collect::OpCode;
use super::gemm::GemmPlan;
use std::fmt::Write;

use super::fft::FftPlan;
use super::kernel_plan::{ColumnRows, Finish, KernelKind, KernelPlan, Layout, ReducePlan, Value};
use super::row_kernel::Hold;
use super::scan::{ScanLayout, ScanPlan};
use crate::dtype::DType;
use crate::graph::{BinaryOp, IndexFn, TernaryOp, UnaryOp};

/// What kind of kernel `plan` is, with its sizes, in one line.
pub(crate) fn kernel_kind(plan: &KernelPlan) -> String {
    let kind = kind_of(plan);
    match plan.stored {
        Some(s) => format!(
            "{kind}; stored, not recomputed: its readers read each element {} times over, and it \
             takes operations of weight {} an element",
            s.reads, s.weight
        ),
        None => kind,
    }
}

/// [`kernel_kind`] without the recompute-or-store clause.
fn kind_of(plan: &KernelPlan) -> String {
    match &plan.kind {
        KernelKind::Elementwise => elementwise(plan, ""),
        KernelKind::Tiled => elementwise(plan, "; tiled"),
        KernelKind::Finishing(_) => elementwise(plan, "; finishing the split reduction it reads"),
        KernelKind::Reduction(r) => reduction(r),
        KernelKind::Scan(s) => {
            let layout = match s.layout {
                ScanLayout::Serial => "a work-item per column",
                ScanLayout::Tiles { .. } => "tiles in local memory",
            };
            let consumers = match s.epilogue {
                Some(_) => "; its consumers in its store",
                None => "",
            };
            format!("{}; {layout}{consumers}", scan_head(s))
        }
        KernelKind::Fft(f) => {
            let consumers = match f.epilogue {
                Some(_) => "; its consumers in its store",
                None => "",
            };
            format!("{}{consumers}", fft_head(f))
        }
        KernelKind::Rows(r) => {
            let ops: Vec<String> = r.reductions.iter().map(|x| format!("{:?}", x.op)).collect();
            let hold = match r.layout.hold {
                Hold::Registers { .. } => "rows held in registers",
                Hold::Reread => "rows reread by each phase",
            };
            format!(
                "row kernel: {} along {} rows of {}; then their readers; {hold}",
                ops.join(", "),
                r.rows,
                r.len
            )
        }
        KernelKind::Gemm(g) => gemm(plan, g),
    }
}

/// An elementwise kernel's line: its space, `kind` (what its kind adds), and where it
/// stores.
fn elementwise(plan: &KernelPlan, kind: &str) -> String {
    let mut s = format!("elementwise over {:?}{kind}", plan.dims);
    if plan.outputs.iter().any(|o| o.scatter.is_some()) {
        s.push_str("; adding into an array through an index");
    } else if plan.outputs.iter().any(|o| o.store.is_some()) {
        s.push_str("; storing into a region of an array");
    }
    s
}

/// A reduction kernel's line: its operation, sizes, layout, finish, and the reductions
/// joined into it.
fn reduction(r: &ReducePlan) -> String {
    let layout = match r.layout {
        Layout::Lanes { lanes, .. } => format!("{lanes} lanes per output"),
        Layout::Columns(_) => "work-groups stream whole rows".to_string(),
        Layout::Serial => "a work-item per output".to_string(),
    };
    let n = r.segments;
    let finish = match r.finish {
        Finish::Single => "one segment".to_string(),
        Finish::CombinePass => format!("{n} segments and a combine pass"),
        Finish::InKernel => format!("{n} segments finished in the kernel"),
        Finish::ByConsumer => format!("{n} segments finished by the kernel that reads it"),
    };
    let row = match &r.row {
        Some(row) => format!("; with a {:?} reduction of each row inside", row.op),
        None => String::new(),
    };
    let total = match &r.row_total {
        Some(t) => format!("; and a {:?} over the rows beside it", t.op),
        None => String::new(),
    };
    let outputs = match r.n_out {
        1 => "to one value".to_string(),
        n => format!("into each of {n} outputs"),
    };
    format!(
        "{:?} reduction of {} elements {outputs}; {layout}; {finish}{row}{total}",
        r.op, r.n_red
    )
}

/// A matrix product's line: its sizes, batch, tile, and what it computes beside.
fn gemm(plan: &KernelPlan, g: &GemmPlan) -> String {
    let matrices = match g.matrices() {
        1 => String::new(),
        n => format!("; {n} matrices"),
    };
    let tile = match g.tile {
        Some(t) => format!("; blocks of {} x {}", t.bm, t.bn),
        None => String::new(),
    };
    let row = match &g.row {
        Some(r) => format!("; with a {:?} reduction of each row", r.op),
        None => String::new(),
    };
    // (The epilogue's first value is the product itself.)
    let consumers = if plan.values.len() > g.epilogue() + 1 {
        "; its consumers in its epilogue"
    } else {
        ""
    };
    format!(
        "matrix product {} x {} times {} x {}{matrices}{tile}{row}{consumers}",
        g.m, g.k, g.k, g.n
    )
}

/// An operation's name as users write it.
pub(crate) fn op_name(code: OpCode, dtype: DType) -> String {
    let lower = |d: &dyn std::fmt::Debug| format!("{d:?}").to_lowercase();
    match code {
        OpCode::Unary(UnaryOp::Cast) => format!("as {dtype}"),
        OpCode::Unary(u) => lower(&u),
        OpCode::Binary(b) => match b {
            BinaryOp::Add => "+".into(),
            BinaryOp::Sub => "-".into(),
            BinaryOp::Mul => "*".into(),
            BinaryOp::Div => "/".into(),
            BinaryOp::Rem => "%".into(),
            BinaryOp::BitAnd => "&".into(),
            BinaryOp::BitOr => "|".into(),
            BinaryOp::BitXor => "^".into(),
            BinaryOp::Lt => "<".into(),
            BinaryOp::Le => "<=".into(),
            BinaryOp::Gt => ">".into(),
            BinaryOp::Ge => ">=".into(),
            BinaryOp::Eq => "==".into(),
            BinaryOp::Ne => "!=".into(),
            other => lower(&other),
        },
        OpCode::Ternary(TernaryOp::MulAdd) => "mul_add".into(),
        OpCode::Ternary(t) => lower(&t),
        OpCode::Reduce(spec) => {
            let axes: Vec<String> = (0..64)
                .filter(|d| spec.axes >> d & 1 == 1)
                .map(|d| d.to_string())
                .collect();
            format!("{} over axes {}", lower(&spec.op), axes.join(", "))
        }
        OpCode::Scan(spec) => format!(
            "{}cum{} along axis {}",
            if spec.exclusive { "exclusive " } else { "" },
            lower(&spec.op),
            spec.axis
        ),
        OpCode::Fft(spec) => format!(
            "{} pass of radix {} along axis {}",
            if spec.inverse {
                "inverse Fourier"
            } else {
                "Fourier"
            },
            spec.radix,
            spec.axis
        ),
        OpCode::Expr(_) => "expr!".into(),
        OpCode::View => "view".into(),
        OpCode::Reshape => "reshape".into(),
        OpCode::Region => "region (concatenate, stack, pad or tile)".into(),
        OpCode::Take(spec) if spec.search.is_some() => format!("searchsorted along axis {}", spec.axis),
        OpCode::Take(spec) => format!("take along axis {}", spec.axis),
        OpCode::MatMul => "matmul".into(),
        OpCode::FromIndex(of) => index_fn_name(of),
    }
}

/// A value computed from its index in users' words (`random uniform`, `position`).
fn index_fn_name(of: IndexFn) -> String {
    match of {
        IndexFn::Random(draw) => format!("random {}", format!("{draw:?}").to_lowercase()),
        IndexFn::Position => "position (arange, linspace, eye, one_hot)".into(),
    }
}

/// The operations `plan`'s kernel computes, in users' words, each once, in the order
/// they are first computed (`"+, exp, concatenate, stack, pad or tile"`); its kind and
/// sizes first.
pub(crate) fn operations(plan: &KernelPlan) -> String {
    let mut names: Vec<String> = Vec::new();
    for v in &plan.values {
        let name = match &v.value {
            Value::Op { code, .. } => op_name(*code, v.dtype),
            Value::Inside { .. } => op_name(OpCode::Region, v.dtype),
            Value::Gather { search: Some(_), .. } => "searchsorted".into(),
            Value::Gather { .. } => "take".into(),
            Value::FromIndex { of, .. } => index_fn_name(*of),
            Value::Load { .. } | Value::Scalar { .. } => continue,
        };
        if !names.contains(&name) {
            names.push(name);
        }
    }
    match names.is_empty() {
        true => format!("{} (copying its input)", kernel_kind(plan)),
        false => format!("{} computing {}", kernel_kind(plan), names.join(", ")),
    }
}

/// A scan's operation and sizes: `"exclusive Sum scan of 4 rows of 100 (x 1 inner)"`.
pub(crate) fn scan_head(s: &ScanPlan) -> String {
    format!(
        "{}{:?} scan of {} rows of {} (x {} inner)",
        if s.exclusive { "exclusive " } else { "" },
        s.op,
        s.outer,
        s.len,
        s.inner
    )
}

/// A transform pass's direction and sizes: `"Fourier pass of radix 64 (after 1) of 4
/// rows of 4096 (x 1 inner)"`.
pub(crate) fn fft_head(f: &FftPlan) -> String {
    format!(
        "{} pass of radix {} (after {}) of {} rows of {} (x {} inner)",
        if f.spec.inverse {
            "inverse Fourier"
        } else {
            "Fourier"
        },
        f.spec.radix,
        f.spec.done,
        f.outer,
        f.len,
        f.inner
    )
}

/// The layout of kernel `p` in words (reductions, scans, products), a line each, for
/// `explain` after its header.
pub(crate) fn layout(s: &mut String, p: &KernelPlan) {
    if let Some(st) = p.stored {
        let _ = writeln!(
            s,
            "  stored, not recomputed: its readers read each element {} times over, and recomputing \
             its operations (weight {} an element) there would cost more than storing it",
            st.reads, st.weight
        );
    }
    match &p.kind {
        KernelKind::Reduction(r) => reduction_layout(s, p, r),
        KernelKind::Scan(sc) => scan_layout(s, p, sc),
        KernelKind::Finishing(f) => {
            let _ = writeln!(
                s,
                "  finishes the split reduction it reads as input {}: combines its partials, {} lanes per output, then computes its elements there",
                f.slot, f.lanes
            );
        }
        KernelKind::Gemm(g) => gemm_layout(s, g),
        KernelKind::Fft(f) => {
            let stages: Vec<String> = f.stages.iter().map(u32::to_string).collect();
            let _ = writeln!(
                s,
                "  {} vectors of {} points per work-group of {}, transformed in local memory in stages of radix {}",
                f.vectors,
                f.spec.radix,
                f.group_size(),
                stages.join(", ")
            );
        }
        KernelKind::Elementwise | KernelKind::Tiled | KernelKind::Rows(_) => {}
    }
}

/// A reduction's layout in words, and the reductions joined into it.
fn reduction_layout(s: &mut String, p: &KernelPlan, r: &ReducePlan) {
    {
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
        if let Some(row) = &r.row {
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
    if let Some(t) = &r.row_total {
        let _ = writeln!(
            s,
            "  and beside it a {:?} reduction of one value per row over the rows to one element (each work-group adds its rows; the last to finish combines the groups' parts)",
            t.op
        );
    }
}

/// A scan's layout in words.
fn scan_layout(s: &mut String, p: &KernelPlan, sc: &ScanPlan) {
    {
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
            "  {}: {how}{}",
            crate::plan::describe::scan_head(sc),
            if sc.epilogue.is_some() {
                "; its consumers computed in its store"
            } else {
                ""
            }
        );
    }
}

/// A matrix product's tile and split in words (nothing before its tile is chosen).
fn gemm_layout(s: &mut String, g: &GemmPlan) {
    {
        let Some(tile) = g.tile else {
            return;
        };
        let _ = writeln!(
            s,
            "  matrix product of {:?} matrices, {} x {} times {} x {}: blocks of {} x {}, {} x {} per work-item, steps of {} along k{}",
            g.batch, g.m, g.k, g.k, g.n, tile.bm, tile.bn, tile.tm, tile.tn, tile.bk,
            match g.split {
                1 => String::new(),
                s => format!("; k split into {s} segments, added up by a second kernel"),
            }
        );
    }
}
