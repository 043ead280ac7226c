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
//! ([`Along`]). The left tile is staged transposed (`k` outermost), so that a
//! work-item reads both its column of the left tile and its row of the right one as
//! vectors. A work-item owns `tm x tn` accumulators: rows `ty * v + l` of each run of
//! `(bm / tm) * v` rows, columns likewise, so that the vectors neighbouring work-items
//! read from local memory are neighbours (no bank conflicts) and so are the elements they
//! store. The epilogue evaluates, per accumulator, the epilogue phase at the product's
//! coordinates and stores the outputs.

use super::abi;
use super::ops::vt;
use super::values::Values;
use super::views::offset_type;
use super::writer::Src;
use crate::layout::GemmTile;
use crate::plan::tiles::Along;
use crate::plan::{GemmPlan, KernelPlan};

/// The program of a GEMM kernel with its tile chosen (`None` without one).
pub(super) fn gemm_source(plan: &KernelPlan, g: &GemmPlan) -> Option<String> {
    let t = g.tile?;
    let mut values = Values::new(plan);
    let mut src = Src::at(0);
    src.text(&values.prelude());
    let group = t.group();
    src.open(abi::fused_signature(
        plan,
        &format!(" __attribute__((reqd_work_group_size({group}, 1, 1)))"),
    ));
    let k = Kernel::new(plan, g, t);
    k.grid(&mut src);
    k.declarations(&mut src);
    k.load(&mut values, Operand::Left, "0", &mut src);
    k.load(&mut values, Operand::Right, "0", &mut src);
    k.stage(Operand::Left, "0", &mut src);
    k.stage(Operand::Right, "0", &mut src);
    src.line("barrier(CLK_LOCAL_MEM_FENCE);");
    src.open("for (int kt = 0; kt < ktiles; kt++) {");
    src.line("const int cur = kt & 1;");
    src.line("const int more = kt + 1 < ktiles;");
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
    k.epilogue(&mut values, &mut src);
    src.close();
    Some(src.into_string())
}

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
        src.line("ulong g = get_group_id(0);");
        src.line(format_args!(
            "const int bn0 = (int)(g % (ulong)tiles_n) * {};",
            t.bn
        ));
        src.line("g /= (ulong)tiles_n;");
        src.line(format_args!(
            "const int bm0 = (int)(g % (ulong)tiles_m) * {};",
            t.bm
        ));
        src.line("const ulong z = g / (ulong)tiles_m;");
        if self.nb > 0 {
            src.line("ulong zr = z;");
            for d in (1..self.nb).rev() {
                src.line(format_args!("const {ot} i{d} = ({ot})(zr % d{d}_); zr /= d{d}_;"));
            }
            src.line(format_args!("const {ot} i0 = ({ot})zr;"));
        }
        src.line(format_args!("const int ktiles = (K_ + {}) / {};", t.bk - 1, t.bk));
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

    /// `r` and `c`, an element's row and column in the operand's tile, from its number
    /// `e` among the tile's elements in the order neighbouring work-items load them.
    fn element(&self, which: Operand, src: &mut Src) {
        let (rows, cols) = self.tile_shape(which);
        let along = match which {
            Operand::Left => self.g.left.along,
            Operand::Right => self.g.right.along,
        };
        match along {
            Along::Columns => src.line(format_args!("const int r = e / {cols}, c = e % {cols};")),
            Along::Rows => src.line(format_args!("const int r = e % {rows}, c = e / {rows};")),
        }
    }

    /// Loads the operand's share of the tile at `k0` into registers (`ra`, `rb`),
    /// evaluating its phase; 0 outside the matrix.
    fn load(&self, values: &mut Values, which: Operand, k0: &str, src: &mut Src) {
        let (op, reg, rows_of, cols_of, lim_r, lim_c) = match which {
            Operand::Left => (
                &self.g.left,
                "ra",
                "bm0 + r".to_string(),
                format!("{k0} + c"),
                "M_",
                "K_",
            ),
            Operand::Right => (
                &self.g.right,
                "rb",
                format!("{k0} + r"),
                "bn0 + c".to_string(),
                "K_",
                "N_",
            ),
        };
        let group = self.t.group();
        src.line("#pragma unroll");
        src.open(format_args!(
            "for (int l = 0; l < {}; l++) {{",
            self.per_item(which)
        ));
        src.line(format_args!("const int e = tid + l * {group};"));
        self.element(which, src);
        src.line(format_args!("const int gr = {rows_of}, gc = {cols_of};"));
        src.line(format_args!("{} x = 0;", self.et));
        src.open(format_args!("if (gr < {lim_r} && gc < {lim_c}) {{"));
        self.coordinates("gr", "gc", src);
        self.values(values, op.values.clone(), src);
        src.line(format_args!("x = v{};", op.value));
        src.close();
        src.line(format_args!("{reg}[l] = x;"));
        src.close();
    }

    /// Stores the registers loaded for an operand into local buffer `buf`.
    fn stage(&self, which: Operand, buf: &str, src: &mut Src) {
        let t = &self.t;
        let v = t.vector as usize;
        let (name, reg, row) = match which {
            Operand::Left => ("las", "ra", t.bm as usize + v),
            Operand::Right => ("lbs", "rb", t.bn as usize + v),
        };
        let bk = t.bk;
        src.line("#pragma unroll");
        src.open(format_args!(
            "for (int l = 0; l < {}; l++) {{",
            self.per_item(which)
        ));
        src.line(format_args!("const int e = tid + l * {};", t.group()));
        self.element(which, src);
        // The left tile is staged transposed: `k` (its column) outermost.
        let (outer, inner) = match which {
            Operand::Left => ("c", "r"),
            Operand::Right => ("r", "c"),
        };
        src.line(format_args!(
            "{name}[(({buf}) * {bk} + {outer}) * {row} + {inner}] = {reg}[l];"
        ));
        src.close();
    }

    /// One step's arithmetic over the staged tiles in buffer `cur`.
    fn multiply(&self, src: &mut Src) {
        let t = &self.t;
        let v = t.vector as usize;
        let (wm, wn) = ((t.bm / t.tm) as usize, t.across());
        let (row_a, row_b) = ((t.bm as usize + v) / v, (t.bn as usize + v) / v);
        src.line("#pragma unroll");
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

    /// Per accumulator, the epilogue at the product's coordinates, and the stores.
    fn epilogue(&self, values: &mut Values, src: &mut Src) {
        let t = &self.t;
        let v = t.vector as usize;
        let (wm, wn) = ((t.bm / t.tm) as usize, t.across());
        src.line("const ulong zbase = z * (ulong)M_ * (ulong)N_;");
        let epilogue = self.g.epilogue()..self.plan.values.len();
        for i in 0..t.tm as usize {
            for j in 0..t.tn as usize {
                let row = (i / v) * wm * v + i % v;
                let col = (j / v) * wn * v + j % v;
                src.open("{");
                src.line(format_args!("const int row = bm0 + ty * {v} + {row};"));
                src.line(format_args!("const int col = bn0 + tx * {v} + {col};"));
                src.open("if (row < M_ && col < N_) {");
                self.coordinates("row", "col", src);
                src.line(format_args!("const {} prod = c{i}_{j};", self.et));
                self.values(values, epilogue.clone(), src);
                for (k, o) in self.plan.outputs.iter().enumerate() {
                    let target = match &o.store {
                        Some(a) => super::views::store_target(self.plan, k, a, None),
                        None => format!("out{k}[zbase + (ulong)row * (ulong)N_ + (ulong)col]"),
                    };
                    src.line(format_args!("{target} = v{};", o.value));
                }
                src.close();
                src.close();
            }
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
