//! The GEMM kernel (`plan::gemm`): a work-group computes a `bm x bn` block of one matrix
//! of the product, stepping through `k` by `bk`.
//!
//! Each step, every work-item loads its share of both operands' next tiles into
//! registers — evaluating the operand's phase (its producers, at the tile element's
//! coordinates) — while the group multiplies the tiles staged in local memory at the
//! previous step; then it stores what it loaded into the other half of the local
//! buffers, and one barrier ends the step (double buffering: one barrier per step, and
//! the loads' latency hides behind the arithmetic). Neighbouring work-items load
//! neighbouring elements along the axis where the operand is contiguous
//! (`plan::gemm::tiles::Along`). The left tile is staged transposed (`k` outermost), so that a
//! work-item reads both its column of the left tile and its row of the right one as
//! vectors. A work-item owns `tm x tn` accumulators: rows `ty * v + l` of each run of
//! `(bm / tm) * v` rows, columns likewise, so that the vectors neighbouring work-items
//! read from local memory are neighbours (no bank conflicts) and so are the elements they
//! store. The epilogue evaluates, per accumulator, the epilogue phase at the product's
//! coordinates and stores the outputs; a row reduction of the epilogue combines over the
//! block's rows there too; a product split along `k` stores partial products instead,
//! which its second kernel ([`combine_source`]) adds up before the epilogue.
//!
//! Here: the kernels' skeletons, the work-item's place and the arithmetic; `loads`: the
//! tile loads and staging; `epilogue`: everything after the last step.

mod epilogue;
mod loads;

use super::abi;
use super::ops::vt;
use super::values::Values;
use super::views::offset_type;
use super::writer::Src;
use crate::layout::GemmTile;
use crate::plan::{GemmPlan, KernelPlan};

/// The program of a GEMM kernel with its tile chosen (`None` without one).
pub(super) fn gemm_source(plan: &KernelPlan, g: &GemmPlan) -> Option<String> {
    let t = g.tile?;
    let mut values = Values::new(plan);
    let mut src = Src::at(0);
    src.text(&values.prelude());
    if g.row.is_some() {
        src.line("#define NONE UINT_MAX");
    }
    let group = t.group();
    src.open(abi::fused_signature(
        plan,
        &format!(" __attribute__((reqd_work_group_size({group}, 1, 1)))"),
    ));
    let k = Kernel::new(plan, g, t);
    k.grid(&mut src);
    k.declarations(&mut src);
    let first = format!("kt0 * {}", t.bk);
    k.load(&mut values, Operand::Left, &first, &mut src);
    k.load(&mut values, Operand::Right, &first, &mut src);
    k.stage(Operand::Left, "0", &mut src);
    k.stage(Operand::Right, "0", &mut src);
    src.line("barrier(CLK_LOCAL_MEM_FENCE);");
    src.open("for (int kt = kt0; kt < kt1; kt++) {");
    src.line("const int cur = (kt - kt0) & 1;");
    src.line("const int more = kt + 1 < kt1;");
    src.open("if (more) {");
    let next = format!("(kt + 1) * {}", t.bk);
    k.load(&mut values, Operand::Left, &next, &mut src);
    k.load(&mut values, Operand::Right, &next, &mut src);
    src.close();
    k.multiply(&mut src);
    src.open("if (more) {");
    k.stage(Operand::Left, "cur ^ 1", &mut src);
    k.stage(Operand::Right, "cur ^ 1", &mut src);
    src.close();
    src.line("barrier(CLK_LOCAL_MEM_FENCE);");
    src.close();
    if g.split > 1 {
        k.partials(&mut src);
    } else {
        k.epilogue(&mut values, &mut src);
    }
    src.close();
    Some(src.into_string())
}

/// The second kernel of a GEMM split along `k` ([`GemmPlan::split`]): per element of the
/// product, the sum of the segments' partial products, then the epilogue and the stores.
pub(super) fn combine_source(plan: &KernelPlan, g: &GemmPlan) -> Option<String> {
    let t = g.tile?;
    let mut values = Values::new(plan);
    let mut src = Src::at(0);
    src.text(&values.prelude());
    src.open(abi::signature(plan, abi::GEMM_COMBINE_KERNEL_NAME, ""));
    let k = Kernel::new(plan, g, t);
    let (nb, ot, et) = (k.nb, k.ot, k.et);
    src.line("const ulong total = (ulong)M_ * (ulong)N_ * (ulong)batch_;");
    src.open("for (ulong gid = get_global_id(0); gid < total; gid += get_global_size(0)) {");
    src.line("const int col = (int)(gid % (ulong)N_);");
    src.line("const int row = (int)((gid / (ulong)N_) % (ulong)M_);");
    src.line("const ulong z = gid / ((ulong)M_ * (ulong)N_);");
    if nb > 0 {
        src.line("ulong zr = z;");
        for d in (1..nb).rev() {
            src.line(format_args!("const {ot} i{d} = ({ot})(zr % d{d}_); zr /= d{d}_;"));
        }
        src.line(format_args!("const {ot} i0 = ({ot})zr;"));
    }
    src.line("const ulong zbase = z * (ulong)M_ * (ulong)N_;");
    src.line(format_args!("{et} prod = 0;"));
    src.open("for (int s = 0; s < S_; s++) {");
    // (Integers wrap, like the whole sum.)
    let add = if g.dtype.is_float() {
        "prod + part[(ulong)s * total + gid]".to_string()
    } else {
        k.multiply_add("part[(ulong)s * total + gid]", "1", "prod")
    };
    src.line(format_args!("prod = {add};"));
    src.close();
    k.coordinates("row", "col", &mut src);
    k.values(&mut values, g.epilogue()..plan.values.len(), &mut src);
    k.stores(&mut src);
    src.close();
    src.close();
    Some(src.into_string())
}

/// Rows of blocks per band of the launch order (see `Kernel::grid`).
const BAND: usize = 8;

/// Which operand.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Operand {
    Left,
    Right,
}

/// What printing one GEMM kernel needs.
struct Kernel<'a> {
    plan: &'a KernelPlan,
    g: &'a GemmPlan,
    t: GemmTile,
    /// The element type and its vector of `t.vector`.
    et: &'static str,
    vt: String,
    /// The type of coordinates and offsets.
    ot: &'static str,
    /// Batch axes.
    nb: usize,
}

impl<'a> Kernel<'a> {
    fn new(plan: &'a KernelPlan, g: &'a GemmPlan, t: GemmTile) -> Self {
        let et = vt(g.dtype);
        Kernel {
            plan,
            g,
            t,
            et,
            vt: if t.vector > 1 {
                format!("{et}{}", t.vector)
            } else {
                et.to_string()
            },
            ot: offset_type(plan),
            nb: g.batch.len(),
        }
    }

    /// The work-item's place: its block of the product, its batch coordinates, its
    /// accumulators' rows and columns within the block.
    fn grid(&self, src: &mut Src) {
        let t = &self.t;
        let ot = self.ot;
        src.line("const int tid = get_local_id(0);");
        src.line(format_args!(
            "const int tx = tid % {across}, ty = tid / {across};",
            across = t.across()
        ));
        src.line(format_args!(
            "const int tiles_n = (N_ + {}) / {};",
            t.bn - 1,
            t.bn
        ));
        src.line(format_args!(
            "const int tiles_m = (M_ + {}) / {};",
            t.bm - 1,
            t.bm
        ));
        // Blocks in bands of BAND rows of blocks, column by column within a band: the
        // groups running at once share the band's rows of the left operand and a few
        // columns of the right one, so both stay in the cache.
        src.line("const ulong per_matrix = (ulong)tiles_m * (ulong)tiles_n;");
        src.line("const ulong blocks = per_matrix * (ulong)batch_;");
        // A split product's segment of `k` (the outermost part of the group's number).
        src.line("const int s = (int)(get_group_id(0) / blocks);");
        src.line("const ulong g = get_group_id(0) % blocks;");
        src.line("const ulong z = g / per_matrix;");
        src.line("const int q = (int)(g % per_matrix);");
        src.line(format_args!("const int band = q / ({BAND} * tiles_n);"));
        src.line(format_args!(
            "const int height = min({BAND}, tiles_m - band * {BAND});"
        ));
        src.line(format_args!("const int in_band = q - band * {BAND} * tiles_n;"));
        src.line(format_args!(
            "const int bm0 = (band * {BAND} + in_band % height) * {};",
            t.bm
        ));
        src.line(format_args!("const int bn0 = (in_band / height) * {};", t.bn));
        if self.nb > 0 {
            src.line("ulong zr = z;");
            for d in (1..self.nb).rev() {
                src.line(format_args!("const {ot} i{d} = ({ot})(zr % d{d}_); zr /= d{d}_;"));
            }
            src.line(format_args!("const {ot} i0 = ({ot})zr;"));
        }
        src.line(format_args!("const int ktiles = (K_ + {}) / {};", t.bk - 1, t.bk));
        src.line("const int per_segment = (ktiles + S_ - 1) / S_;");
        src.line("const int kt0 = s * per_segment;");
        src.line("const int kt1 = min(kt0 + per_segment, ktiles);");
    }

    /// Local buffers (two per operand, of vectors), staging registers and accumulators.
    fn declarations(&self, src: &mut Src) {
        let (t, et, vt) = (&self.t, self.et, &self.vt);
        let v = t.vector as usize;
        for (name, width) in [("la", t.bm), ("lb", t.bn)] {
            let row = width as usize + v;
            src.line(format_args!(
                "__local {vt} {name}[{}];",
                2 * t.bk as usize * row / v
            ));
            src.line(format_args!("__local {et}* {name}s = (__local {et}*){name};"));
        }
        src.line(format_args!(
            "{et} ra[{}], rb[{}];",
            self.per_item(Operand::Left),
            self.per_item(Operand::Right)
        ));
        for i in 0..t.tm {
            let accs: Vec<String> = (0..t.tn).map(|j| format!("c{i}_{j} = 0")).collect();
            src.line(format_args!("{et} {};", accs.join(", ")));
        }
    }

    /// Elements of an operand's tile each work-item loads per step.
    fn per_item(&self, which: Operand) -> usize {
        let t = &self.t;
        let width = if which == Operand::Left { t.bm } else { t.bn };
        width as usize * t.bk as usize / t.group()
    }

    /// The tile's (rows, columns) of an operand: the left one's is `bm x bk`, the right
    /// one's `bk x bn`.
    fn tile_shape(&self, which: Operand) -> (u16, u16) {
        match which {
            Operand::Left => (self.t.bm, self.t.bk),
            Operand::Right => (self.t.bk, self.t.bn),
        }
    }

    /// One step's arithmetic over the staged tiles in buffer `cur`.
    fn multiply(&self, src: &mut Src) {
        let t = &self.t;
        let v = t.vector as usize;
        let (wm, wn) = ((t.bm / t.tm) as usize, t.across());
        let (row_a, row_b) = ((t.bm as usize + v) / v, (t.bn as usize + v) / v);
        match t.unroll {
            0 => src.line("#pragma unroll"),
            u => src.line(format_args!("#pragma unroll {u}")),
        }
        src.open(format_args!("for (int kk = 0; kk < {}; kk++) {{", t.bk));
        src.line(format_args!("const int ka = (cur * {} + kk) * {row_a};", t.bk));
        src.line(format_args!("const int kb = (cur * {} + kk) * {row_b};", t.bk));
        for iv in 0..t.tm as usize / v {
            src.line(format_args!(
                "const {} a{iv} = la[ka + {} + ty];",
                self.vt,
                iv * wm
            ));
        }
        for jv in 0..t.tn as usize / v {
            src.line(format_args!(
                "const {} b{jv} = lb[kb + {} + tx];",
                self.vt,
                jv * wn
            ));
        }
        for i in 0..t.tm as usize {
            for j in 0..t.tn as usize {
                let a = lane(&format!("a{}", i / v), i % v, v);
                let b = lane(&format!("b{}", j / v), j % v, v);
                src.line(format_args!(
                    "c{i}_{j} = {};",
                    self.multiply_add(&a, &b, &format!("c{i}_{j}"))
                ));
            }
        }
        src.close();
    }

    /// `acc + a * b` in the element type: one rounding for floats, wrapping for integers.
    fn multiply_add(&self, a: &str, b: &str, acc: &str) -> String {
        let d = self.g.dtype;
        if d.is_float() {
            format!("mad({a}, {b}, {acc})")
        } else {
            let u = d.cl_unsigned();
            format!("({})(({u}){acc} + ({u}){a} * ({u}){b})", self.et)
        }
    }

    /// The phase coordinates of a tile's element: `row` and `col` along the last two
    /// axes (the batch coordinates are the group's).
    fn coordinates(&self, row: &str, col: &str, src: &mut Src) {
        let (nb, ot) = (self.nb, self.ot);
        src.line(format_args!("const {ot} i{nb} = ({ot}){row};"));
        src.line(format_args!("const {ot} i{} = ({ot}){col};", nb + 1));
    }

    /// The values of `range` as `v{i}` (loads read only in a branch print there).
    fn values(&self, values: &mut Values, range: std::ops::Range<usize>, src: &mut Src) {
        for i in range.filter(|&i| !self.plan.values[i].in_branch) {
            let e = values.expr(i, "", None);
            src.line(format_args!(
                "const {} v{i} = {e};",
                vt(self.plan.values[i].dtype)
            ));
        }
    }
}

/// Component `l` of a vector `name` of `v` lanes (the name itself for one lane).
fn lane(name: &str, l: usize, v: usize) -> String {
    if v == 1 {
        name.to_string()
    } else {
        format!("{name}.s{l:x}")
    }
}
