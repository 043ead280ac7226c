//! Property test: random elementwise DAGs (depth up to 8, fan-out, shared subexpressions,
//! broadcasting, scalars, every dtype, odd sizes, size 0 and 1) with reductions (full,
//! along an axis, and column sums weighted by a function of the row sums, which the engine
//! fuses into one kernel), several outputs evaluated in one flush, compared with the same
//! expressions evaluated on the host with ndarray.
//!
//! Cases per run: `LAZYCL_PROPTEST_CASES` (default 240; each case checks several outputs).
//! The DAGs are proptest inputs with a fixed seed: a failing DAG shrinks to a minimal one
//! (fewer and simpler nodes, a smaller shape), which the failure shows.
//! Floats are compared with a tolerance derived from a bound on each value's magnitude
//! (`tol = 512 · ε · (bound + 1)`); integers exactly (wrapping arithmetic, x/0 = 0).

use crate::common::{cases, check_property, ctx, rng, Random};
use crate::views_property::extent;
use lazycl::{Array, Context, DType, Element};
use ndarray::{ArrayD, IxDyn, Zip};
use proptest::prelude::*;
use rand::rngs::StdRng;
use rand::Rng;

/// Host semantics of each operation, mirroring the documented device semantics.
pub(crate) trait HostNum: Element + Random + lazycl::Numeric {
    const FLOAT: bool;
    fn eps() -> f64;
    fn to_f64(self) -> f64;
    fn from_small(v: i8) -> Self;
    fn h_add(a: Self, b: Self) -> Self;
    fn h_sub(a: Self, b: Self) -> Self;
    fn h_mul(a: Self, b: Self) -> Self;
    fn h_div(a: Self, b: Self) -> Self;
    fn h_rem(a: Self, b: Self) -> Self;
    fn h_min(a: Self, b: Self) -> Self;
    fn h_max(a: Self, b: Self) -> Self;
    fn h_abs(a: Self) -> Self;
    fn h_neg(a: Self) -> Self;
    fn h_bounded(a: Self) -> Self; // floats: sin; ints: bitwise xor with a constant
    fn h_squash(a: Self) -> Self; // floats: tanh; ints: signum
    fn h_mul_add(a: Self, b: Self, c: Self) -> Self;
    fn d_neg(a: &Array<Self>) -> Array<Self>;
    fn d_bounded(a: &Array<Self>) -> Array<Self>;
    fn d_squash(a: &Array<Self>) -> Array<Self>;
    fn d_mul_add(a: &Array<Self>, b: &Array<Self>, c: &Array<Self>) -> Array<Self>;
    /// A divisor bounded away from zero: `sqrt(|b| + 1)` (floats only).
    fn h_den(b: Self) -> Self;
    fn d_den(b: &Array<Self>) -> Array<Self>;
}

macro_rules! float_host {
    ($t:ty) => {
        impl HostNum for $t {
            const FLOAT: bool = true;
            fn eps() -> f64 {
                <$t>::EPSILON as f64
            }
            fn to_f64(self) -> f64 {
                self as f64
            }
            fn from_small(v: i8) -> Self {
                v as $t
            }
            fn h_add(a: Self, b: Self) -> Self {
                a + b
            }
            fn h_sub(a: Self, b: Self) -> Self {
                a - b
            }
            fn h_mul(a: Self, b: Self) -> Self {
                a * b
            }
            fn h_div(a: Self, b: Self) -> Self {
                a / b
            }
            fn h_rem(a: Self, b: Self) -> Self {
                a % b
            }
            fn h_min(a: Self, b: Self) -> Self {
                a.min(b)
            }
            fn h_max(a: Self, b: Self) -> Self {
                a.max(b)
            }
            fn h_abs(a: Self) -> Self {
                a.abs()
            }
            fn h_neg(a: Self) -> Self {
                -a
            }
            fn h_bounded(a: Self) -> Self {
                a.sin()
            }
            fn h_squash(a: Self) -> Self {
                a.tanh()
            }
            fn h_mul_add(a: Self, b: Self, c: Self) -> Self {
                a.mul_add(b, c)
            }
            fn d_neg(a: &Array<Self>) -> Array<Self> {
                -a
            }
            fn d_bounded(a: &Array<Self>) -> Array<Self> {
                a.sin()
            }
            fn d_squash(a: &Array<Self>) -> Array<Self> {
                a.tanh()
            }
            fn d_mul_add(a: &Array<Self>, b: &Array<Self>, c: &Array<Self>) -> Array<Self> {
                a.mul_add(b, c)
            }
            fn h_den(b: Self) -> Self {
                (b.abs() + 1.0).sqrt()
            }
            fn d_den(b: &Array<Self>) -> Array<Self> {
                (b.abs() + 1.0).sqrt()
            }
        }
    };
}
float_host!(f32);
float_host!(f64);

macro_rules! int_host {
    ($t:ty, $signed:expr) => {
        impl HostNum for $t {
            const FLOAT: bool = false;
            fn eps() -> f64 {
                0.0
            }
            fn to_f64(self) -> f64 {
                self as f64
            }
            fn from_small(v: i8) -> Self {
                v as $t
            }
            fn h_add(a: Self, b: Self) -> Self {
                a.wrapping_add(b)
            }
            fn h_sub(a: Self, b: Self) -> Self {
                a.wrapping_sub(b)
            }
            fn h_mul(a: Self, b: Self) -> Self {
                a.wrapping_mul(b)
            }
            fn h_div(a: Self, b: Self) -> Self {
                if b == 0 {
                    0
                } else {
                    a.wrapping_div(b)
                }
            }
            fn h_rem(a: Self, b: Self) -> Self {
                if b == 0 {
                    0
                } else {
                    a.wrapping_rem(b)
                }
            }
            fn h_min(a: Self, b: Self) -> Self {
                a.min(b)
            }
            fn h_max(a: Self, b: Self) -> Self {
                a.max(b)
            }
            #[allow(unused_comparisons)]
            fn h_abs(a: Self) -> Self {
                if a < 0 {
                    (0 as $t).wrapping_sub(a)
                } else {
                    a
                }
            }
            fn h_neg(a: Self) -> Self {
                (0 as $t).wrapping_sub(a)
            }
            fn h_bounded(a: Self) -> Self {
                a ^ (0x5a as $t)
            }
            #[allow(unused_comparisons)]
            fn h_squash(a: Self) -> Self {
                if a > 0 {
                    1
                } else if a < 0 {
                    (0 as $t).wrapping_sub(1)
                } else {
                    0
                }
            }
            fn h_mul_add(a: Self, b: Self, c: Self) -> Self {
                a.wrapping_mul(b).wrapping_add(c)
            }
            fn d_neg(a: &Array<Self>) -> Array<Self> {
                0 as $t - a
            }
            fn d_bounded(a: &Array<Self>) -> Array<Self> {
                a ^ (0x5a as $t)
            }
            fn d_squash(a: &Array<Self>) -> Array<Self> {
                a.signum()
            }
            fn d_mul_add(a: &Array<Self>, b: &Array<Self>, c: &Array<Self>) -> Array<Self> {
                a * b + c
            }
            fn h_den(b: Self) -> Self {
                b
            }
            fn d_den(b: &Array<Self>) -> Array<Self> {
                b.clone()
            }
        }
    };
}
int_host!(i32, true);
int_host!(u32, false);
int_host!(i64, true);
int_host!(u64, false);

/// One expression of the DAG, on the device and on the host, with a magnitude bound.
struct Val<T: Element> {
    dev: Array<T>,
    host: ArrayD<T>,
    bound: f64,
    depth: usize,
    /// A leaf uploaded from the host (its values are exact on both sides).
    leaf: bool,
}

fn bshape(a: &[usize], b: &[usize]) -> Option<Vec<usize>> {
    let r = a.len().max(b.len());
    (0..r)
        .map(|i| {
            let da = if i < r - a.len() { 1 } else { a[i - (r - a.len())] };
            let db = if i < r - b.len() { 1 } else { b[i - (r - b.len())] };
            if da == db || db == 1 {
                Some(da)
            } else if da == 1 {
                Some(db)
            } else {
                None
            }
        })
        .collect()
}

fn zip2<T: Element>(a: &ArrayD<T>, b: &ArrayD<T>, f: impl Fn(T, T) -> T) -> ArrayD<T> {
    let s = bshape(a.shape(), b.shape()).unwrap();
    let (a, b) = (a.broadcast(IxDyn(&s)).unwrap(), b.broadcast(IxDyn(&s)).unwrap());
    Zip::from(&a).and(&b).map_collect(|&x, &y| f(x, y))
}

fn zip3<T: Element>(a: &ArrayD<T>, b: &ArrayD<T>, c: &ArrayD<T>, f: impl Fn(T, T, T) -> T) -> ArrayD<T> {
    let s = bshape(&bshape(a.shape(), b.shape()).unwrap(), c.shape()).unwrap();
    let (a, b, c) = (
        a.broadcast(IxDyn(&s)).unwrap(),
        b.broadcast(IxDyn(&s)).unwrap(),
        c.broadcast(IxDyn(&s)).unwrap(),
    );
    Zip::from(&a).and(&b).and(&c).map_collect(|&x, &y, &z| f(x, y, z))
}

/// A random shape that broadcasts to `out`.
fn sub_shape(r: &mut StdRng, out: &[usize]) -> Vec<usize> {
    let drop = r.gen_range(0..=out.len());
    out[drop..]
        .iter()
        .map(|&d| if r.gen_bool(0.3) { 1 } else { d })
        .collect()
}

fn leaf<T: HostNum>(ctx: &Context, r: &mut StdRng, shape: Vec<usize>) -> Val<T> {
    let n: usize = shape.iter().product();
    let mut data = T::random_vec(r, n);
    if T::FLOAT {
        // Keep magnitudes moderate so that bounds stay meaningful.
        for v in &mut data {
            *v = T::h_div(*v, T::from_small(50));
        }
    }
    let host = ArrayD::from_shape_vec(IxDyn(&shape), data).unwrap();
    let bound = host.iter().map(|v| v.to_f64().abs()).fold(0.0, f64::max);
    Val {
        dev: ctx.array(&host).unwrap(),
        host,
        bound,
        depth: 0,
        leaf: true,
    }
}

/// A scalar operand: `v` (over 4 for floats).
fn scalar<T: HostNum>(ctx: &Context, v: i8) -> Val<T> {
    let v = T::from_small(v);
    let v = if T::FLOAT {
        T::h_div(v, T::from_small(4))
    } else {
        v
    };
    Val {
        dev: ctx.scalar(v).unwrap(),
        host: ArrayD::from_elem(IxDyn(&[]), v),
        bound: v.to_f64().abs(),
        depth: 0,
        leaf: true,
    }
}

/// A reduction node (full, or along one random axis), consumed downstream like any other.
fn reduction<T: HostNum>(r: &mut StdRng, a: &Val<T>, op: u32, depth: usize) -> Option<Val<T>> {
    let nd = a.host.ndim();
    let count = |axis: Option<usize>| match axis {
        Some(ax) => a.host.shape()[ax],
        None => a.host.len(),
    } as f64;
    match op {
        13 if nd > 0 => {
            let ax = r.gen_range(0..nd);
            let host = a
                .host
                .fold_axis(ndarray::Axis(ax), T::from_small(0), |s, x| T::h_add(*s, *x));
            Some(Val {
                dev: a.dev.sum_axis(ax).cast::<T>(),
                host,
                bound: a.bound * count(Some(ax)),
                depth,
                leaf: false,
            })
        }
        14 => {
            let total = a.host.iter().fold(T::from_small(0), |s, x| T::h_add(s, *x));
            let host = ArrayD::from_elem(IxDyn(&[]), total);
            Some(Val {
                dev: a.dev.sum().cast::<T>(),
                host,
                bound: a.bound * count(None),
                depth,
                leaf: false,
            })
        }
        15 if nd > 0 && a.host.shape().iter().all(|&d| d > 0) => {
            let ax = r.gen_range(0..nd);
            let first = a.host.index_axis(ndarray::Axis(ax), 0).to_owned();
            let host = a
                .host
                .fold_axis(ndarray::Axis(ax), T::from_small(0), |_, _| T::from_small(0));
            let mut out = first.clone();
            for lane in a.host.axis_iter(ndarray::Axis(ax)) {
                ndarray::Zip::from(&mut out)
                    .and(&lane)
                    .for_each(|o, &x| *o = T::h_max(*o, x));
            }
            let _ = host;
            Some(Val {
                dev: a.dev.amax_axis(ax),
                host: out,
                bound: a.bound,
                depth,
                leaf: false,
            })
        }
        // A column reduction of `a` weighted by a function of its row sums,
        // `(a * squash(a.sum_axes([last], keep))).sum_axis(0)`: for a matrix the engine
        // computes the row sums inside the column reduction (one kernel).
        16 if nd >= 2 => {
            let last = nd - 1;
            let rows = a
                .host
                .fold_axis(ndarray::Axis(last), T::from_small(0), |s, x| T::h_add(*s, *x))
                .insert_axis(ndarray::Axis(last));
            let weight = rows.mapv(T::h_squash);
            let weighted = zip2(&a.host, &weight, T::h_mul);
            let host = weighted.fold_axis(ndarray::Axis(0), T::from_small(0), |s, x| T::h_add(*s, *x));
            let dev = (&a.dev * &T::d_squash(&a.dev.sum_axes(&[last], true).cast::<T>()))
                .sum_axis(0)
                .cast::<T>();
            // The weight's rounding (the row sum's, up to `bound * row length * eps`)
            // is multiplied by `a` again.
            let row_len = a.host.shape()[last] as f64;
            Some(Val {
                dev,
                host,
                bound: a.bound * count(Some(0)) * (1.0 + a.bound * row_len),
                depth,
                leaf: false,
            })
        }
        _ => None,
    }
}

/// One node to grow: its operation (an arm of [`grow`] or [`reduction`]), its operands
/// (indices into the nodes made so far, among those that fit, modulo their count) and the
/// seed of its other choices (a reduction's axis).
#[derive(Clone, Debug)]
pub(crate) struct Node {
    op: u32,
    operands: [u32; 3],
    seed: u64,
}

/// A random DAG: the output shape, its leaves (the seeds of their shapes, which broadcast
/// to the output's, and of their values; one more leaf has the output's shape), its
/// scalars, its nodes and the extra outputs evaluated with the last node (indices among the
/// nodes). A failing DAG shrinks toward fewer and simpler nodes and a smaller shape.
#[derive(Clone, Debug)]
pub(crate) struct Dag {
    shape: Vec<usize>,
    leaves: Vec<u64>,
    scalars: Vec<i8>,
    nodes: Vec<Node>,
    outputs: Vec<u32>,
}

/// Output shapes: rank 0 to 4 with extents of 0 to 7, or a long vector of an odd length
/// (several work-groups).
fn shapes() -> impl Strategy<Value = Vec<usize>> {
    prop_oneof![
        9 => prop::collection::vec(extent(), 0..=4),
        1 => (1000..1100usize).prop_map(|n| vec![n | 1]),
    ]
}

/// Random DAGs: 2 to 4 leaves (and one of the output's shape), 1 or 2 scalars, 4 to 23
/// nodes, up to 2 extra outputs.
pub(crate) fn dags() -> impl Strategy<Value = Dag> {
    let node = (0..17u32, [0..64u32, 0..64u32, 0..64u32], any::<u64>())
        .prop_map(|(op, operands, seed)| Node { op, operands, seed });
    (
        shapes(),
        prop::collection::vec(any::<u64>(), 2..5),
        prop::collection::vec(-9..=9i8, 1..3),
        prop::collection::vec(node, 4..24),
        prop::collection::vec(any::<u32>(), 0..3),
    )
        .prop_map(|(shape, leaves, scalars, nodes, outputs)| Dag {
            shape,
            leaves,
            scalars,
            nodes,
            outputs,
        })
}

/// Grows `node` over the values made so far: its first operand among those of depth below
/// 8, the others among those that broadcast with it; None when the operation does not
/// apply to them.
fn grow<T: HostNum>(node: &Node, vals: &[Val<T>]) -> Option<Val<T>> {
    let shallow: Vec<&Val<T>> = vals.iter().filter(|v| v.depth < 8).collect();
    let a = shallow[node.operands[0] as usize % shallow.len()];
    let with_a: Vec<&Val<T>> = shallow
        .iter()
        .copied()
        .filter(|v| bshape(a.host.shape(), v.host.shape()).is_some())
        .collect();
    let b = with_a[node.operands[1] as usize % with_a.len()];
    let ab = bshape(a.host.shape(), b.host.shape())?;
    let with_ab: Vec<&Val<T>> = with_a
        .iter()
        .copied()
        .filter(|v| bshape(&ab, v.host.shape()).is_some())
        .collect();
    let c = with_ab[node.operands[2] as usize % with_ab.len()];
    let depth = a.depth.max(b.depth).max(c.depth) + 1;
    let op = node.op;
    if op >= 13 {
        return reduction(&mut rng(node.seed), a, op, depth);
    }
    let (dev, host, bound) = match op {
        0 => (
            &a.dev + &b.dev,
            zip2(&a.host, &b.host, T::h_add),
            a.bound + b.bound,
        ),
        1 => (
            &a.dev - &b.dev,
            zip2(&a.host, &b.host, T::h_sub),
            a.bound + b.bound,
        ),
        2 => (
            &a.dev * &b.dev,
            zip2(&a.host, &b.host, T::h_mul),
            a.bound * b.bound,
        ),
        3 if !T::FLOAT => (&a.dev / &b.dev, zip2(&a.host, &b.host, T::h_div), a.bound),
        4 if !T::FLOAT => (&a.dev % &b.dev, zip2(&a.host, &b.host, T::h_rem), a.bound),
        3 | 4 => {
            // Floats: divide by a leaf bounded away from zero on both sides.
            let d = T::d_den(&b.dev);
            let h = b.host.mapv(T::h_den);
            (&a.dev / &d, zip2(&a.host, &h, T::h_div), a.bound)
        }
        5 => (
            a.dev.min(&b.dev),
            zip2(&a.host, &b.host, T::h_min),
            a.bound.max(b.bound),
        ),
        6 => (
            a.dev.max(&b.dev),
            zip2(&a.host, &b.host, T::h_max),
            a.bound.max(b.bound),
        ),
        7 => (a.dev.abs(), a.host.mapv(T::h_abs), a.bound),
        8 => (T::d_neg(&a.dev), a.host.mapv(T::h_neg), a.bound),
        9 => (
            T::d_bounded(&a.dev),
            a.host.mapv(T::h_bounded),
            if T::FLOAT { 1.0 } else { a.bound * 2.0 + 128.0 },
        ),
        10 => (T::d_squash(&a.dev), a.host.mapv(T::h_squash), 1.0),
        11 => (
            T::d_mul_add(&a.dev, &b.dev, &c.dev),
            zip3(&a.host, &b.host, &c.host, T::h_mul_add),
            a.bound * b.bound + c.bound,
        ),
        _ => {
            // select on a comparison of exact values (leaves), so both sides branch alike.
            if !(a.leaf && b.leaf) && T::FLOAT {
                return None;
            }
            let mask = a.dev.lt(&b.dev);
            let hm = zip2(&a.host, &b.host, |x, y| {
                if x < y {
                    T::from_small(1)
                } else {
                    T::from_small(0)
                }
            });
            let dev = mask.select(&c.dev, &b.dev);
            let host = zip3(
                &hm,
                &c.host,
                &b.host,
                |m, x, y| if m == T::from_small(1) { x } else { y },
            );
            (dev, host, c.bound.max(b.bound))
        }
    };
    Some(Val {
        dev,
        host,
        bound,
        depth,
        leaf: false,
    })
}

/// Builds `dag` on the device and on the host, evaluates its outputs in one flush and
/// compares them.
pub(crate) fn run_dag<T: HostNum>(ctx: &Context, dag: &Dag) {
    let mut vals: Vec<Val<T>> = Vec::new();
    for &seed in &dag.leaves {
        let mut r = rng(seed);
        let s = sub_shape(&mut r, &dag.shape);
        vals.push(leaf(ctx, &mut r, s));
    }
    let mut r = rng(dag.leaves[0] ^ 1);
    vals.push(leaf(ctx, &mut r, dag.shape.clone()));
    for &v in &dag.scalars {
        vals.push(scalar(ctx, v));
    }
    let leaves = vals.len();
    for node in &dag.nodes {
        if let Some(v) = grow(node, &vals) {
            vals.push(v);
        }
    }
    if vals.len() == leaves {
        return;
    }
    // Several outputs in one flush: the last node and a few others.
    let grown = vals.len() - leaves;
    let mut outs: Vec<usize> = vec![vals.len() - 1];
    outs.extend(dag.outputs.iter().map(|&i| leaves + i as usize % grown));
    let devs: Vec<&Array<T>> = outs.iter().map(|&i| &vals[i].dev).collect();
    lazycl::eval(&devs).unwrap_or_else(|e| panic!("{e}"));
    for &i in &outs {
        let v = &vals[i];
        let got = v.dev.to_ndarray().unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(got.shape(), v.host.shape());
        let tol = 512.0 * T::eps() * (v.bound + 1.0);
        for (k, (g, h)) in got.iter().zip(v.host.iter()).enumerate() {
            let (g, h) = (g.to_f64(), h.to_f64());
            let ok = if T::FLOAT {
                (g.is_nan() && h.is_nan()) || g == h || (g - h).abs() <= tol
            } else {
                g == h
            };
            assert!(
                ok,
                "dtype {} node {i} element {k}: device {g} host {h} (tol {tol})\n{}",
                T::DTYPE,
                v.dev.explain().unwrap_or_default()
            );
        }
    }
}

/// `cases` random DAGs (proptest, seeded by `seed`), each of one of `types` (f64 runs as
/// f32 on a device without fp64).
pub(crate) fn run(ctx: &Context, seed: u64, cases: u32, types: &[DType]) {
    let fp64 = ctx.device().fp64;
    let inputs = (prop::sample::select(types.to_vec()), dags());
    check_property(seed, cases, inputs, |(dtype, dag)| match dtype {
        DType::F64 if fp64 => run_dag::<f64>(ctx, &dag),
        DType::F32 | DType::F64 => run_dag::<f32>(ctx, &dag),
        DType::I32 => run_dag::<i32>(ctx, &dag),
        DType::U32 => run_dag::<u32>(ctx, &dag),
        DType::I64 => run_dag::<i64>(ctx, &dag),
        DType::U64 => run_dag::<u64>(ctx, &dag),
        other => panic!("no host semantics for {other:?}"),
    });
}

#[test]
fn random_elementwise_dags_match_ndarray() {
    use DType::*;
    let ctx = ctx();
    let cases = cases("LAZYCL_PROPTEST_CASES", 240);
    run(&ctx, 0, cases, &[F32, I32, F64, U32, I64, U64]);
    let s = ctx.stats();
    eprintln!(
        "{cases} cases: {} kernels launched, {} programs built",
        s.kernels_launched, s.programs_built
    );
}
