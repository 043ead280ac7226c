//! A column reduction that reads a row reduction of the same rows per row (a linear
//! model's gradient, `X^T f(X w + b)`) runs as one kernel that reads `X` once (on CPU
//! devices only for short rows), and gives the same results as the host for many shapes
//! (odd widths, one row, one column, rows wider than a work-group, no rows) in f32 and
//! f64. The runtime's unit tests cover the shared-row kernel on CPU devices too.

use crate::common::{ctx, rng};
use lazycl::{Array, Context, Float};
use rand::Rng;

/// Kernels in the plan of materializing `a` (each one launch, plus a combine pass for
/// some reductions).
fn planned_kernels<T: lazycl::Element>(a: &Array<T>) -> usize {
    a.explain()
        .unwrap()
        .lines()
        .filter(|l| l.starts_with("kernel "))
        .count()
}

/// Vectors a row of `d` elements takes: of four where the width allows, else single
/// elements.
fn vectors(d: usize) -> usize {
    if d.is_multiple_of(4) {
        d / 4
    } else {
        d
    }
}

/// Rows one work-item reads whole inside a fused kernel: at most 8 vectors and 160 bytes.
fn reads_whole_rows(d: usize, element_size: usize) -> bool {
    vectors(d) <= 8 && d * element_size <= 160
}

fn on_gpu(ctx: &Context) -> bool {
    ctx.device().device_type == lazycl::DeviceType::Gpu
}

struct Case {
    n: usize,
    d: usize,
    x: Vec<f64>,
    w: Vec<f64>,
    y: Vec<f64>,
    b: f64,
}

impl Case {
    fn new(n: usize, d: usize, seed: u64) -> Case {
        let mut r = rng(seed);
        let mut v = |k: usize| -> Vec<f64> { (0..k).map(|_| r.gen_range(-1.0..1.0)).collect() };
        let (x, w, y) = (v(n * d), v(d), v(n));
        Case {
            n,
            d,
            x,
            w,
            y,
            b: 0.25,
        }
    }

    /// Host results in f64: logits z, gradient g, bias update (mean of b - lr r) and the
    /// largest row of |x| sums (the scale of the gradient's rounding).
    fn host(&self, lr: f64) -> (Vec<f64>, Vec<f64>, f64, f64) {
        let (n, d) = (self.n, self.d);
        let z: Vec<f64> = (0..n)
            .map(|i| (0..d).map(|j| self.x[i * d + j] * self.w[j]).sum::<f64>() + self.b)
            .collect();
        let r: Vec<f64> = (0..n).map(|i| (0.5 * z[i]).tanh() - self.y[i]).collect();
        let g: Vec<f64> = (0..d)
            .map(|j| (0..n).map(|i| self.x[i * d + j] * r[i]).sum())
            .collect();
        let bias = if n == 0 {
            f64::NAN
        } else {
            r.iter().map(|ri| self.b - lr * ri).sum::<f64>() / n as f64
        };
        (z, g, bias, (n.max(1) * d.max(1)) as f64)
    }
}

/// The gradient step of a logistic-style model, recorded lazily.
fn step<T: Float + lazycl::Signed>(
    ctx: &Context,
    c: &Case,
    conv: fn(f64) -> T,
    lr: T,
) -> (Array<T>, Array<T>, Array<T>) {
    let cv = |v: &[f64]| v.iter().map(|&x| conv(x)).collect::<Vec<T>>();
    let x = ctx.from_shape_slice([c.n, c.d], &cv(&c.x)).unwrap();
    let w = ctx.from_slice(&cv(&c.w)).unwrap();
    let y = ctx.from_shape_slice([c.n, 1], &cv(&c.y)).unwrap();
    let b = ctx.from_slice(&[conv(c.b)]).unwrap();
    let z = (&x * &w).sum_axes(&[1], true) + &b;
    let r = (&z * conv(0.5)).tanh() - &y;
    let g = (&x * &r).sum_axis(0);
    let bias = (&b - &r * lr).mean_axis(0);
    (z, g, bias)
}

fn check<T: Float + lazycl::Signed>(conv: fn(f64) -> T, back: fn(T) -> f64, tol: f64) {
    let ctx = ctx();
    let shapes = [
        (1, 1),
        (1, 4),
        (3, 5),
        (7, 8),
        (100, 20),
        (257, 100),
        (50, 126),
        (40, 1000),
        (9, 1024),
        (5, 1030),
        (5000, 20),
        (20000, 12),
        (20000, 6),
        (3000, 126),
        (0, 8),
        (6, 0),
    ];
    for (k, &(n, d)) in shapes.iter().enumerate() {
        let c = Case::new(n, d, 40 + k as u64);
        let lr = 0.2;
        let (z, g, bias) = step(&ctx, &c, conv, conv(lr));
        // One kernel for both reductions: on GPUs for rows of at most 1,024 vectors (a
        // work-group of 512 holding two each), elsewhere only for short rows (at most 8
        // vectors and 160 bytes), which one work-item reads whole. With one row or one
        // column the space is one-dimensional: no column layout.
        let whole = reads_whole_rows(d, std::mem::size_of::<T>());
        let fused = n > 1 && d > 1 && (whole || (on_gpu(&ctx) && vectors(d) <= 1024));
        let plan = g.explain().unwrap();
        assert_eq!(plan.contains("computed inside"), fused, "{n}x{d}:\n{plan}");
        if fused {
            assert_eq!(planned_kernels(&g), 1, "{n}x{d}");
            assert_eq!(plan.contains("each work-item reads whole rows"), whole, "{n}x{d}");
            // Rows of 128 vectors or more: a work-group per row.
            let group = plan.contains("shares each row");
            assert_eq!(group, !whole && vectors(d) >= 128, "{n}x{d}:\n{plan}");
        }
        lazycl::eval(&(&g, &bias, &z)).unwrap();
        let (hz, hg, hbias, scale) = c.host(lr);
        let close = |a: f64, b: f64, s: f64| (a - b).abs() <= tol * s.max(1.0);
        for (i, (a, b)) in z.to_vec().unwrap().into_iter().zip(&hz).enumerate() {
            assert!(close(back(a), *b, d as f64), "{n}x{d} z[{i}]: {} vs {b}", back(a));
        }
        let got = g.to_vec().unwrap();
        assert_eq!(got.len(), d);
        for (j, (a, b)) in got.into_iter().zip(&hg).enumerate() {
            assert!(
                close(back(a), *b, scale / d.max(1) as f64),
                "{n}x{d} g[{j}]: {} vs {b}",
                back(a)
            );
        }
        if n > 0 {
            let got = back(bias.item().unwrap());
            assert!(close(got, hbias, 1.0), "{n}x{d} bias: {got} vs {hbias}");
        }
    }
}

#[test]
fn gradient_of_a_linear_model_matches_the_host_f32() {
    check::<f32>(|v| v as f32, |v| v as f64, 1e-4);
}

#[test]
fn gradient_of_a_linear_model_matches_the_host_f64() {
    check::<f64>(|v| v, |v| v, 1e-10);
}

/// A step that reads `X` once per iteration also builds its programs once: ten steps,
/// each updating `w`, build nothing after the first (rows of 20 f64: fused on every
/// device).
#[test]
fn repeated_fused_steps_build_no_new_programs() {
    let ctx = ctx();
    let c = Case::new(300, 20, 7);
    let x = ctx.from_shape_slice([c.n, c.d], &c.x).unwrap();
    let y = ctx.from_shape_slice([c.n, 1], &c.y).unwrap();
    let mut w = ctx.from_slice(&c.w).unwrap();
    let mut host_w = c.w.clone();
    let step = |w: &Array<f64>| {
        let z = (&x * w).sum_axes(&[1], true);
        let r = z.tanh() - &y;
        w - (&x * &r).sum_axis(0) * 0.01
    };
    w = step(&w);
    assert!(w.explain().unwrap().contains("computed inside"));
    w.eval().unwrap();
    let misses = ctx.stats().kernel_cache_misses;
    for _ in 0..10 {
        w = step(&w);
        w.eval().unwrap();
    }
    assert_eq!(ctx.stats().kernel_cache_misses, misses, "a step built a program");
    for _ in 0..11 {
        let z: Vec<f64> = (0..c.n)
            .map(|i| (0..c.d).map(|j| c.x[i * c.d + j] * host_w[j]).sum::<f64>())
            .collect();
        let r: Vec<f64> = (0..c.n).map(|i| z[i].tanh() - c.y[i]).collect();
        host_w = (0..c.d)
            .map(|j| host_w[j] - 0.01 * (0..c.n).map(|i| c.x[i * c.d + j] * r[i]).sum::<f64>())
            .collect();
    }
    for (a, b) in w.to_vec().unwrap().iter().zip(&host_w) {
        assert!((a - b).abs() < 1e-9 * b.abs().max(1.0), "{a} vs {b}");
    }
}

/// Other row reductions (largest element, mean) inside a column reduction, and a column
/// mean outside: the same as on the host.
#[test]
fn row_max_and_mean_inside_a_column_reduction() {
    let ctx = ctx();
    for (k, &(n, d)) in [(2, 3), (77, 12), (2000, 36)].iter().enumerate() {
        let c = Case::new(n, d, 90 + k as u64);
        let x = ctx.from_shape_slice([n, d], &c.x).unwrap();
        let rowmax = x.amax_axes(&[1], true);
        let rowmean = x.mean_axes(&[1], true);
        let a = (&x - &rowmax).exp().mean_axis(0);
        let b = (&x * &rowmean).sum_axis(0);
        let whole = reads_whole_rows(d, 8);
        assert_eq!(
            a.explain().unwrap().contains("computed inside"),
            whole || on_gpu(&ctx),
            "{n}x{d}"
        );
        lazycl::eval(&(&a, &b)).unwrap();
        let row = |i: usize| &c.x[i * d..(i + 1) * d];
        for j in 0..d {
            let ha: f64 = (0..n)
                .map(|i| (c.x[i * d + j] - row(i).iter().cloned().fold(f64::MIN, f64::max)).exp())
                .sum::<f64>()
                / n as f64;
            let hb: f64 = (0..n)
                .map(|i| c.x[i * d + j] * row(i).iter().sum::<f64>() / d as f64)
                .sum();
            let (ga, gb) = (a.to_vec().unwrap()[j], b.to_vec().unwrap()[j]);
            assert!(
                (ga - ha).abs() < 1e-12 * ha.abs().max(1.0),
                "{n}x{d} a[{j}]: {ga} vs {ha}"
            );
            assert!((gb - hb).abs() < 1e-10 * n as f64, "{n}x{d} b[{j}]: {gb} vs {hb}");
        }
    }
}

/// The pair runs where the column reduction ran when it reads something computed after
/// the row reduction (here a full sum): the order of the flush's kernels keeps every
/// dependency, and the results match the host.
#[test]
fn a_column_reduction_that_reads_a_later_result_keeps_its_order() {
    let ctx = ctx();
    let c = Case::new(500, 8, 123);
    let x = ctx.from_shape_slice([c.n, c.d], &c.x).unwrap();
    let w = ctx.from_slice(&c.w).unwrap();
    let z = (&x * &w).sum_axes(&[1], true);
    let total = (&x * &x).sum();
    let g = (&x * &(z.tanh() * &total)).sum_axis(0);
    let plan = g.explain().unwrap();
    assert!(plan.contains("computed inside"), "{plan}");
    assert_eq!(planned_kernels(&g), 2, "{plan}");
    lazycl::eval(&(&g, &z)).unwrap();
    let ht: f64 = c.x.iter().map(|v| v * v).sum();
    let hz: Vec<f64> = (0..c.n)
        .map(|i| (0..c.d).map(|j| c.x[i * c.d + j] * c.w[j]).sum())
        .collect();
    for (j, got) in g.to_vec().unwrap().into_iter().enumerate() {
        let want: f64 = (0..c.n).map(|i| c.x[i * c.d + j] * hz[i].tanh() * ht).sum();
        assert!(
            (got - want).abs() < 1e-9 * ht * c.n as f64,
            "g[{j}]: {got} vs {want}"
        );
    }
    for (a, b) in z.to_vec().unwrap().iter().zip(&hz) {
        assert!((a - b).abs() < 1e-12, "{a} vs {b}");
    }
}
