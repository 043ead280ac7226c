//! Transform passes ([`FftPlan`]): a work-group takes [`FftPlan::vectors`] vectors of the
//! pass's radix, loads their points through the operand's producers (turning each by its
//! twiddle) into local memory, transforms them there a stage at a time (each work-item
//! reads its butterflies' points into registers, the group waits, then each writes its
//! results in place), and stores them through the consumers that joined the pass. A
//! stage's twiddles come from a table of the pass's radix in local memory, computed once
//! per group.
//!
//! Loads and stores each walk the group's points in the order that makes neighbouring
//! work-items touch neighbouring memory: vector-fastest where neighbouring vectors are
//! neighbours in memory, else point-fastest (a row's points). A vector's points sit in
//! local memory a row each, padded by one element where the group holds several, so that
//! the vector-fastest walks fall in different banks; and every index into local memory
//! skips one element after each 128 bytes ([`PAD`]), so that a stage's writes, `q`
//! points apart, fall in different banks too.

mod butterfly;
mod real;

use super::abi::{fused_signature, narrow_dims};
use super::element_at::{store_at, value_at};
use super::values::Values;
use super::writer::Src;
use crate::graph::FftReal;
use crate::plan::fft::padded_every;
use crate::plan::{FftPlan, KernelPlan};
use butterfly::{butterfly, mul, turn_definition, twiddle_definition, TURN, TWIDDLE};

/// The name of the padding function of a program: `lzc_fft_pad(i)` is where index `i` of
/// the group's points sits in local memory.
const PAD: &str = "lzc_fft_pad";

/// The program of a transform pass.
pub(super) fn fft_source(plan: &KernelPlan, f: &FftPlan) -> String {
    let mut v = Values::new(plan);
    let mut src = Src::at(0);
    src.text(&v.prelude());
    src.text(&twiddle_definition(f.dtype, f.spec.inverse));
    src.text(&turn_definition(f.dtype, f.spec.inverse));
    src.text(&format!(
        "static inline uint {PAD}(uint i) {{ return i + i / {}u; }}\n",
        padded_every(f.dtype)
    ));
    src.open(fused_signature(plan, ""));
    narrow_dims(plan.dims.len(), v.ix, &mut src);
    body(&mut v, f, &mut src);
    src.close();
    src.into_string()
}

/// The sizes a pass's text names.
struct Sizes {
    /// Points per vector.
    radix: u32,
    /// Vectors per group.
    vectors: u32,
    /// A vector's row in local memory (its points and the padding).
    row: u32,
    /// Work-items per group.
    group: u32,
    /// Entries of the twiddle table ([`FftPlan::table`]).
    table: u32,
}

fn body(v: &mut Values, f: &FftPlan, src: &mut Src) {
    let t = f.dtype.cl_name();
    let radix = f.spec.radix;
    let s = Sizes {
        radix,
        vectors: f.vectors,
        row: f.row(),
        group: f.group_size(),
        table: f.table(),
    };
    let held = s.vectors * s.row;
    src.line(format_args!(
        "__local {t} buf[{}];",
        held + held / padded_every(f.dtype)
    ));
    src.line("const uint lid = get_local_id(0);");
    if s.table > 0 {
        src.line(format_args!("__local {t} tw[{}];", s.table));
        src.line(format_args!(
            "for (uint i = lid; i < {}u; i += {}u) tw[i] = {TWIDDLE}(i, {radix}u);",
            s.table, s.group
        ));
    }
    src.line(format_args!(
        "const ulong first = (ulong)get_group_id(0) * {}ul;",
        s.vectors
    ));
    src.line(format_args!("const ulong vectors = {}ul;", f.vector_count()));
    // The first stage reads its points from memory where neighbouring work-items read
    // neighbouring points there (one vector a row, the innermost axis), and the last
    // stage stores them where they write neighbouring points: no trip through local
    // memory at either end (a real signal's join and split work in local memory).
    let last = f.stages.len().saturating_sub(1);
    let direct_loads = !f.loads_by_vector() && f.spec.real != FftReal::Inverse;
    let direct_stores = !f.stores_by_vector() && f.spec.real != FftReal::Forward;
    if !direct_loads {
        loads(v, f, &s, src);
        src.line("barrier(CLK_LOCAL_MEM_FENCE);");
    }
    if f.spec.real == FftReal::Inverse {
        real::join(f, &s, src);
    }
    let mut done = 1;
    for (i, &q) in f.stages.iter().enumerate() {
        let ends = Ends {
            load: direct_loads && i == 0,
            store: direct_stores && i == last,
        };
        stage(v, f, &s, q, done, ends, src);
        done *= q;
    }
    if f.spec.real == FftReal::Forward {
        real::split(f, &s, src);
    }
    if !direct_stores {
        stores(v, f, &s, src);
    }
}

/// Whether a stage reads its points from memory (the first, through the operand's
/// producers) and stores its results there (the last, through the consumers), not in
/// local memory.
#[derive(Clone, Copy)]
struct Ends {
    load: bool,
    store: bool,
}

/// The point `e` of the group's walk over `per` points of each vector, as its vector `vv`
/// and point `r`: vector-fastest or point-fastest.
fn walk(by_vector: bool, per: u32, s: &Sizes, src: &mut Src) {
    if by_vector {
        src.line(format_args!(
            "const uint vv = e % {}u, r = e / {}u;",
            s.vectors, s.vectors
        ));
    } else {
        src.line(format_args!("const uint vv = e / {per}u, r = e % {per}u;"));
    }
}

/// Vector `w`'s coordinates: `o`, `j` and `c` (see [`FftPlan`]).
fn coordinates(f: &FftPlan, src: &mut Src) {
    let per_row = f.per_row();
    src.line(format_args!(
        "const ulong c = w % {inner}ul, oj = w / {inner}ul, j = oj % {per_row}ul, o = oj / {per_row}ul;",
        inner = f.inner
    ));
}

fn loads(v: &mut Values, f: &FftPlan, s: &Sizes, src: &mut Src) {
    let t = f.dtype.cl_name();
    let per = f.loaded();
    src.open(format_args!(
        "for (uint e = lid; e < {}u; e += {}u) {{",
        s.vectors * per,
        s.group
    ));
    walk(f.loads_by_vector(), per, s, src);
    src.line(format_args!("{t} x;"));
    load_point(v, f, "x", src);
    src.line(format_args!("buf[{PAD}(vv * {}u + r)] = x;", s.row));
    src.close();
}

/// `dest = ` point `r` of vector `first + vv`, through the operand's producers and turned
/// by the pass's twiddle (0 past the last vector).
fn load_point(v: &mut Values, f: &FftPlan, dest: &str, src: &mut Src) {
    let t = f.dtype.cl_name();
    let (len, inner, done) = (f.len, f.inner, f.spec.done);
    let stride = f.per_row();
    src.line("const ulong w = first + vv;");
    src.line(format_args!("{dest} = ({t})(0);"));
    src.open("if (w < vectors) {");
    coordinates(f, src);
    src.line(format_args!(
        "const ulong at = (o * {len}ul + j + (ulong)r * {stride}ul) * {inner}ul + c;"
    ));
    value_at(v, f.value, f.epilogue, "at", dest, src);
    if done > 1 {
        src.line(format_args!(
            "const {t} tw = {TWIDDLE}((j % {done}ul) * r, {}ul);",
            u64::from(done) * u64::from(f.spec.radix)
        ));
        src.line(format_args!("{dest} = {};", mul(t, dest, "tw")));
    }
    src.close();
}

/// Stores `x`, point `r` of vector `first + vv` after the pass, through the consumers
/// that joined it (a real signal's inverse: as the samples `2r` and `2r + 1`); nothing
/// past the last vector.
fn store_point(v: &mut Values, f: &FftPlan, x: &str, src: &mut Src) {
    let (len, inner, done) = (f.len, f.inner, u64::from(f.spec.done));
    let radix = u64::from(f.spec.radix);
    src.line("const ulong w = first + vv;");
    src.open("if (w < vectors) {");
    coordinates(f, src);
    if f.spec.real == FftReal::Inverse {
        src.line(format_args!(
            "const ulong at = (o * {len}ul + 2 * (ulong)r) * {inner}ul + c;"
        ));
        src.line(format_args!("const ulong next = at + {inner}ul;"));
        store_at(v, f.dtype.real(), f.epilogue, "at", &format!("{x}.x"), src);
        store_at(v, f.dtype.real(), f.epilogue, "next", &format!("{x}.y"), src);
    } else {
        src.line(format_args!(
            "const ulong pos = (j / {done}ul) * {}ul + j % {done}ul + (ulong)r * {done}ul;",
            done * radix
        ));
        src.line(format_args!(
            "const ulong at = (o * {len}ul + pos) * {inner}ul + c;"
        ));
        store_at(v, f.dtype, f.epilogue, "at", x, src);
    }
    src.close();
}

/// The twiddle `e^(∓2πi e / radix)` of `e < radix`, from the table, as text.
fn table_entry(s: &Sizes, e: &str) -> String {
    let h = s.table;
    if h == s.radix {
        format!("tw[{e}]")
    } else if 2 * h == s.radix {
        format!("({e} < {h}u ? tw[{e}] : -tw[{e} - {h}u])")
    } else {
        format!("{TURN}(tw[({e}) % {h}u], ({e}) / {h}u)")
    }
}

/// One stage of radix `q` after stages whose radices multiply to `done`, in place: each
/// work-item reads its butterflies' points, the group waits, then each writes (from and
/// to memory at the `ends`, where nothing waits).
fn stage(v: &mut Values, f: &FftPlan, s: &Sizes, q: u32, done: u32, ends: Ends, src: &mut Src) {
    let t = f.dtype.cl_name();
    let span = s.radix / q;
    let butterflies = s.vectors * span;
    let per = butterflies.div_ceil(s.group);
    // The table's step between the twiddles of this stage's denominator.
    let step = s.radix / (done * q);
    src.open("{");
    src.line(format_args!("{t} xs[{}];", per * q));
    src.open(format_args!("for (uint p = 0; p < {per}u; p++) {{"));
    src.line(format_args!("const uint b = lid + p * {}u;", s.group));
    src.open(format_args!("if (b < {butterflies}u) {{"));
    src.line(format_args!("const uint vv = b / {span}u, jj = b % {span}u;"));
    for k in 0..q {
        if ends.load {
            src.open("{");
            src.line(format_args!("const uint r = jj + {}u;", k * span));
            src.line(format_args!("{t} x;"));
            load_point(v, f, "x", src);
            src.line(format_args!("xs[p * {q}u + {k}u] = x;"));
            src.close();
        } else {
            src.line(format_args!(
                "xs[p * {q}u + {k}u] = buf[{PAD}(vv * {} + jj + {}u)];",
                s.row,
                k * span
            ));
        }
    }
    src.close();
    src.close();
    if !ends.load {
        src.line("barrier(CLK_LOCAL_MEM_FENCE);");
    }
    src.open(format_args!("for (uint p = 0; p < {per}u; p++) {{"));
    src.line(format_args!("const uint b = lid + p * {}u;", s.group));
    src.open(format_args!("if (b < {butterflies}u) {{"));
    src.line(format_args!("const uint vv = b / {span}u, jj = b % {span}u;"));
    for k in 0..q {
        src.line(format_args!("{t} x{k} = xs[p * {q}u + {k}u];"));
    }
    if done > 1 {
        src.line(format_args!("const uint m = jj % {done}u;"));
        for k in 1..q {
            let entry = table_entry(s, &format!("m * {}u", k * step));
            src.line(format_args!("const {t} w{k} = {entry};"));
            src.line(format_args!(
                "x{k} = {};",
                mul(t, &format!("x{k}"), &format!("w{k}"))
            ));
        }
    }
    for line in butterfly(q, f.spec.inverse, t, f.dtype.real()) {
        src.line(line);
    }
    if ends.store {
        // The last stage: `jj < done`, output `k` is point `jj + k done`.
        for k in 0..q {
            src.open("{");
            src.line(format_args!("const uint r = jj + {}u;", k * done));
            store_point(v, f, &format!("y{k}"), src);
            src.close();
        }
    } else {
        if done > 1 {
            src.line(format_args!(
                "const uint dst = vv * {} + (jj / {done}u) * {}u + m;",
                s.row,
                done * q
            ));
        } else {
            src.line(format_args!("const uint dst = vv * {} + jj * {q}u;", s.row));
        }
        for k in 0..q {
            src.line(format_args!("buf[{PAD}(dst + {}u)] = y{k};", k * done));
        }
    }
    src.close();
    src.close();
    if !ends.store {
        src.line("barrier(CLK_LOCAL_MEM_FENCE);");
    }
    src.close();
}

fn stores(v: &mut Values, f: &FftPlan, s: &Sizes, src: &mut Src) {
    let t = f.dtype.cl_name();
    let per = f.stored();
    src.open(format_args!(
        "for (uint e = lid; e < {}u; e += {}u) {{",
        s.vectors * per,
        s.group
    ));
    walk(f.stores_by_vector(), per, s, src);
    src.line(format_args!("const {t} x = buf[{PAD}(vv * {}u + r)];", s.row));
    store_point(v, f, "x", src);
    src.close();
}
