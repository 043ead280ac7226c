//! Transform passes ([`FftPlan`]): a work-group takes [`FftPlan::vectors`] vectors of the
//! pass's radix, loads their points through the operand's producers (turning each by its
//! twiddle), transforms them in local memory a stage at a time (two buffers, each stage
//! reading one and writing the other), and stores them through the consumers that
//! joined the pass.
//!
//! Loads and stores each walk the group's points in the order that makes neighbouring
//! work-items touch neighbouring memory: vector-fastest where neighbouring vectors are
//! neighbours in memory, else point-fastest (a row's points). A vector's points sit in
//! local memory a row each, padded by one element, so that the vector-fastest walks fall
//! in different banks.

mod butterfly;

use super::abi::{fused_signature, narrow_dims};
use super::element_at::{store_at, value_at};
use super::values::Values;
use super::writer::Src;
use crate::plan::{FftPlan, KernelPlan};
use butterfly::{butterfly, mul, twiddle_definition, TWIDDLE};

/// The program of a transform pass.
pub(super) fn fft_source(plan: &KernelPlan, f: &FftPlan) -> String {
    let mut v = Values::new(plan);
    let mut src = Src::at(0);
    src.text(&v.prelude());
    src.text(&twiddle_definition(f.dtype, f.spec.inverse));
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
    /// Points per group.
    points: u32,
    /// Work-items per group.
    group: u32,
}

fn body(v: &mut Values, f: &FftPlan, src: &mut Src) {
    let t = f.dtype.cl_name();
    let radix = f.spec.radix;
    let s = Sizes {
        radix,
        vectors: f.vectors,
        row: if f.vectors > 1 { radix + 1 } else { radix },
        points: f.vectors * radix,
        group: f.group_size(),
    };
    src.line(format_args!(
        "__local {t} buf0[{}], buf1[{}];",
        s.vectors * s.row,
        s.vectors * s.row
    ));
    src.line("const uint lid = get_local_id(0);");
    src.line(format_args!(
        "const ulong first = (ulong)get_group_id(0) * {}ul;",
        s.vectors
    ));
    src.line(format_args!("const ulong vectors = {}ul;", f.vector_count()));
    loads(v, f, &s, src);
    src.line("barrier(CLK_LOCAL_MEM_FENCE);");
    let mut done = 1;
    let mut from = 0;
    for &q in &f.stages {
        stage(f, &s, q, done, from, src);
        src.line("barrier(CLK_LOCAL_MEM_FENCE);");
        done *= q;
        from = 1 - from;
    }
    stores(v, f, &s, from, src);
}

/// The point `e` of the group's walk as its vector `vv` and point `r`: vector-fastest or
/// point-fastest.
fn walk(by_vector: bool, s: &Sizes, src: &mut Src) {
    if by_vector {
        src.line(format_args!(
            "const uint vv = e % {}u, r = e / {}u;",
            s.vectors, s.vectors
        ));
    } else {
        src.line(format_args!(
            "const uint vv = e / {}u, r = e % {}u;",
            s.radix, s.radix
        ));
    }
}

/// Vector `w`'s coordinates: `o`, `j` and `c` (see [`FftPlan`]).
fn coordinates(f: &FftPlan, src: &mut Src) {
    let per_row = f.len / f.spec.radix as usize;
    src.line(format_args!(
        "const ulong c = w % {inner}ul, oj = w / {inner}ul, j = oj % {per_row}ul, o = oj / {per_row}ul;",
        inner = f.inner
    ));
}

fn loads(v: &mut Values, f: &FftPlan, s: &Sizes, src: &mut Src) {
    let t = f.dtype.cl_name();
    let (len, inner, done) = (f.len, f.inner, f.spec.done);
    let stride = f.len / f.spec.radix as usize;
    src.open(format_args!(
        "for (uint e = lid; e < {}u; e += {}u) {{",
        s.points, s.group
    ));
    walk(f.loads_by_vector(), s, src);
    src.line("const ulong w = first + vv;");
    src.line(format_args!("{t} x = ({t})(0);"));
    src.open("if (w < vectors) {");
    coordinates(f, src);
    src.line(format_args!(
        "const ulong at = (o * {len}ul + j + (ulong)r * {stride}ul) * {inner}ul + c;"
    ));
    value_at(v, f.value, f.epilogue, "at", "x", src);
    if done > 1 {
        src.line(format_args!(
            "const {t} tw = {TWIDDLE}((j % {done}ul) * r, {}ul);",
            u64::from(done) * u64::from(f.spec.radix)
        ));
        src.line(format_args!("x = {};", mul(t, "x", "tw")));
    }
    src.close();
    src.line(format_args!("buf0[vv * {}u + r] = x;", s.row));
    src.close();
}

/// One stage of radix `q` after stages whose radices multiply to `done`: from buffer
/// `from` into the other.
fn stage(f: &FftPlan, s: &Sizes, q: u32, done: u32, from: usize, src: &mut Src) {
    let t = f.dtype.cl_name();
    let span = s.radix / q;
    let (input, output) = (format!("buf{from}"), format!("buf{}", 1 - from));
    src.open(format_args!(
        "for (uint b = lid; b < {}u; b += {}u) {{",
        s.vectors * span,
        s.group
    ));
    src.line(format_args!("const uint vv = b / {span}u, jj = b % {span}u;"));
    src.line(format_args!("__local const {t}* in = {input} + vv * {}u;", s.row));
    src.line(format_args!("__local {t}* out = {output} + vv * {}u;", s.row));
    for k in 0..q {
        src.line(format_args!("{t} x{k} = in[jj + {}u];", k * span));
    }
    if done > 1 {
        src.line(format_args!("const uint m = jj % {done}u;"));
        for k in 1..q {
            src.line(format_args!(
                "const {t} w{k} = {TWIDDLE}(m * {k}u, {}u);",
                done * q
            ));
            src.line(format_args!(
                "x{k} = {};",
                mul(t, &format!("x{k}"), &format!("w{k}"))
            ));
        }
    }
    src.open("{");
    for line in butterfly(q, f.spec.inverse, t, f.dtype.real()) {
        src.line(line);
    }
    if done > 1 {
        src.line(format_args!(
            "const uint dst = (jj / {done}u) * {}u + m;",
            done * q
        ));
    } else {
        src.line(format_args!("const uint dst = jj * {q}u;"));
    }
    for k in 0..q {
        src.line(format_args!("out[dst + {}u] = y{k};", k * done));
    }
    src.close();
    src.close();
}

fn stores(v: &mut Values, f: &FftPlan, s: &Sizes, from: usize, src: &mut Src) {
    let t = f.dtype.cl_name();
    let (len, inner, done) = (f.len, f.inner, u64::from(f.spec.done));
    let radix = u64::from(f.spec.radix);
    src.open(format_args!(
        "for (uint e = lid; e < {}u; e += {}u) {{",
        s.points, s.group
    ));
    walk(f.stores_by_vector(), s, src);
    src.line("const ulong w = first + vv;");
    src.open("if (w < vectors) {");
    coordinates(f, src);
    src.line(format_args!(
        "const ulong pos = (j / {done}ul) * {}ul + j % {done}ul + (ulong)r * {done}ul;",
        done * radix
    ));
    src.line(format_args!(
        "const ulong at = (o * {len}ul + pos) * {inner}ul + c;"
    ));
    src.line(format_args!("const {t} x = buf{from}[vv * {}u + r];", s.row));
    store_at(v, f.dtype, f.epilogue, "at", "x", src);
    src.close();
    src.close();
}
