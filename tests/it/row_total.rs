//! A reduction of one value per row to a single element, in a flush with a column
//! reduction that computes the same row reduction inside (a logistic regression's bias
//! update `mean(b - lr (sigmoid(z) - y))` beside its gradient `X^T (sigmoid(z) - y)`),
//! is computed in that kernel: no launch of its own, the same results as the host, for
//! sums, means, maxima and minima in f32, f64 and i32, with one work-group and many.
//! Where it cannot go there (it reads something computed later, or its operand is not
//! one value per row) it stays a kernel of its own, and is still right.

use crate::common::{ctx, rng};
use lazycl::{Array, Context};
use rand::Rng;

/// Whether a total goes beside the row reduction for rows of `d` elements of `size`
/// bytes: wherever the row reduction goes inside the column reduction, that is rows one
/// work-item reads whole (at most 8 vectors of four and 160 bytes, on every device), or
/// on GPUs rows of at most 1,024 vectors that work-items share.
fn beside(ctx: &Context, d: usize, size: usize) -> bool {
    let vectors = if d.is_multiple_of(4) { d / 4 } else { d };
    let gpu = ctx.device().device_type == lazycl::DeviceType::Gpu;
    (vectors <= 8 && d * size <= 160) || (gpu && vectors <= 1024)
}

/// Kernels launched by `f`.
fn launches(ctx: &Context, f: impl FnOnce()) -> u64 {
    let before = ctx.stats().kernels_launched;
    f();
    ctx.stats().kernels_launched - before
}

struct Data {
    n: usize,
    d: usize,
    x: Vec<f64>,
    w: Vec<f64>,
    y: Vec<f64>,
}

impl Data {
    fn new(n: usize, d: usize, seed: u64) -> Data {
        let mut r = rng(seed);
        let mut v =
            |k: usize, lo: f64, hi: f64| -> Vec<f64> { (0..k).map(|_| r.gen_range(lo..hi)).collect() };
        let x = v(n * d, -1.0, 1.0);
        let w = v(d, -1.0, 1.0);
        let y = v(n, 0.0, 1.0)
            .into_iter()
            .map(|u| (u > 0.5) as u8 as f64)
            .collect();
        Data { n, d, x, w, y }
    }

    /// Host logits, in f64.
    fn z(&self) -> Vec<f64> {
        (0..self.n)
            .map(|i| (0..self.d).map(|j| self.x[i * self.d + j] * self.w[j]).sum())
            .collect()
    }
}

/// The four totals of one value per row, recorded from the logits `z` (`[n, 1]`), the
/// labels `y` and a bias `b` (one element), with their host values from `hz`.
fn totals_f64(z: &Array<f64>, y: &Array<f64>, b: &Array<f64>) -> Vec<Array<f64>> {
    let r = 1.0 / ((-z).exp() + 1.0) - y;
    vec![
        (b - &(&r * 0.2)).mean_axis(0),
        (&r * &r).sum_axis(0),
        (&(z * 0.5).tanh() + y).amax_axis(0),
        z.amin_axis(0),
    ]
}

fn host_totals(hz: &[f64], y: &[f64], b: f64) -> Vec<f64> {
    let n = hz.len() as f64;
    let r: Vec<f64> = hz
        .iter()
        .zip(y)
        .map(|(z, y)| 1.0 / ((-z).exp() + 1.0) - y)
        .collect();
    vec![
        r.iter().map(|r| b - r * 0.2).sum::<f64>() / n,
        r.iter().map(|r| r * r).sum(),
        hz.iter()
            .zip(y)
            .map(|(z, y)| (z * 0.5).tanh() + y)
            .fold(f64::MIN, f64::max),
        hz.iter().cloned().fold(f64::MAX, f64::min),
    ]
}

fn check_f64(ctx: &Context, data: &Data) {
    let (n, d) = (data.n, data.d);
    let x = ctx.from_shape_slice([n, d], &data.x).unwrap();
    let w = ctx.from_slice(&data.w).unwrap();
    let y = ctx.from_shape_slice([n, 1], &data.y).unwrap();
    let b = ctx.from_slice(&[0.25]).unwrap();
    let gradient = |z: &Array<f64>| (&x * &(1.0 / ((-z).exp() + 1.0) - &y)).sum_axis(0);
    let fused = n > 1 && d > 1 && beside(ctx, d, 8);
    let hz = data.z();
    let host = host_totals(&hz, &data.y, 0.25);
    for (k, want) in host.into_iter().enumerate() {
        let alone = gradient(&(&x * &w).sum_axes(&[1], true));
        let alone_launches = launches(ctx, || {
            alone.eval().unwrap();
        });
        let z = (&x * &w).sum_axes(&[1], true);
        let g = gradient(&z);
        let t = totals_f64(&z, &y, &b).swap_remove(k);
        let both = launches(ctx, || lazycl::eval(&(&g, &t)).unwrap());
        if fused {
            assert_eq!(both, alone_launches, "{n}x{d} total {k}: a kernel of its own");
        }
        let got = t.item().unwrap();
        assert!(
            (got - want).abs() <= 1e-10 * want.abs().max(1.0) * (n as f64).sqrt(),
            "{n}x{d} total {k}: {got} vs {want}"
        );
        // The gradient beside it is the gradient alone.
        assert_eq!(g.to_vec().unwrap(), alone.to_vec().unwrap(), "{n}x{d} total {k}");
    }
}

#[test]
fn totals_beside_a_gradient_match_the_host_f64() {
    let ctx = ctx();
    // Short rows (one work-item reads each whole: beside on every device), one row, odd
    // widths and counts, and enough rows for many work-groups (their parts combined by
    // the last); wider rows (126 and 1,000: beside on GPUs).
    for (k, &(n, d)) in [
        (2, 20),
        (1, 20),
        (37, 3),
        (5001, 20),
        (20000, 8),
        (3001, 12),
        (300, 126),
        (64, 1000),
    ]
    .iter()
    .enumerate()
    {
        check_f64(&ctx, &Data::new(n, d, 10 + k as u64));
    }
}

/// The logistic-regression step in f32: the bias update beside the gradient, against
/// the host in f64 (f32 tolerance).
#[test]
fn bias_update_beside_the_gradient_f32() {
    let ctx = ctx();
    for (k, &(n, d)) in [(3, 20), (4097, 20), (30000, 8), (500, 100), (700, 1000)]
        .iter()
        .enumerate()
    {
        let data = Data::new(n, d, 30 + k as u64);
        let x32: Vec<f32> = data.x.iter().map(|&v| v as f32).collect();
        let w32: Vec<f32> = data.w.iter().map(|&v| v as f32).collect();
        let y32: Vec<f32> = data.y.iter().map(|&v| v as f32).collect();
        let x = ctx.from_shape_slice([n, d], &x32).unwrap();
        let w = ctx.from_slice(&w32).unwrap();
        let y = ctx.from_shape_slice([n, 1], &y32).unwrap();
        let b = ctx.from_slice(&[0.25f32]).unwrap();
        let z = (&x * &w).sum_axes(&[1], true) + &b;
        let r = 1.0f32 / ((-&z).exp() + 1.0f32) - &y;
        let g = (&x * &r).sum_axis(0);
        let w2 = &w - &(&g * (0.2f32 / n as f32));
        let b2 = (&b - &(&r * 0.2f32)).mean_axis(0);
        let steps = launches(&ctx, || lazycl::eval(&(&w2, &b2)).unwrap());
        if beside(&ctx, d, 4) {
            // The gradient with its row reduction and the bias, then `w`'s update (which
            // may also finish the gradient's parts); a combine pass at most.
            assert!(steps <= 3, "{n}x{d}: {steps} launches");
            let x_ = ctx.from_shape_slice([n, d], &x32).unwrap();
            let z_ = (&x_ * &w).sum_axes(&[1], true) + &b;
            let r_ = 1.0f32 / ((-&z_).exp() + 1.0f32) - &y;
            let w_ = &w - &((&x_ * &r_).sum_axis(0) * (0.2f32 / n as f32));
            let without = launches(&ctx, || {
                w_.eval().unwrap();
            });
            assert_eq!(steps, without, "{n}x{d}: the bias took a kernel");
        }
        let hz: Vec<f64> = (0..n)
            .map(|i| {
                (0..d)
                    .map(|j| f64::from(x32[i * d + j]) * f64::from(w32[j]))
                    .sum::<f64>()
                    + 0.25
            })
            .collect();
        let hb = hz
            .iter()
            .zip(&data.y)
            .map(|(z, y)| 0.25 - 0.2 * (1.0 / ((-z).exp() + 1.0) - y))
            .sum::<f64>()
            / n as f64;
        let got = f64::from(b2.item().unwrap());
        assert!((got - hb).abs() < 1e-5, "{n}x{d} bias: {got} vs {hb}");
    }
}

/// Integer sums and maxima of a value per row, exact (wrapping like the host).
#[test]
fn integer_totals_beside_are_exact() {
    let ctx = ctx();
    for (k, &(n, d)) in [(5, 8), (9000, 20), (123, 7)].iter().enumerate() {
        let mut r = rng(60 + k as u64);
        let x: Vec<i32> = (0..n * d).map(|_| r.gen_range(-1000..1000)).collect();
        let w: Vec<i32> = (0..d).map(|_| r.gen_range(-1000..1000)).collect();
        let y: Vec<i32> = (0..n).map(|_| r.gen_range(-5..5)).collect();
        let xa = ctx.from_shape_slice([n, d], &x).unwrap();
        let wa = ctx.from_slice(&w).unwrap();
        let ya = ctx.from_shape_slice([n, 1], &y).unwrap();
        let hz: Vec<i32> = (0..n)
            .map(|i| (0..d).fold(0i32, |a, j| a.wrapping_add(x[i * d + j].wrapping_mul(w[j]))))
            .collect();
        let want_sum = hz
            .iter()
            .zip(&y)
            .fold(0i32, |a, (z, y)| a.wrapping_add(z.wrapping_mul(*y)));
        let want_max = hz.iter().zip(&y).map(|(z, y)| z.wrapping_sub(*y)).max().unwrap();
        for (which, want) in [(0, want_sum), (1, want_max)] {
            let z = (&xa * &wa).sum_axes(&[1], true);
            let g = (&xa * &(&z - &ya)).sum_axis(0);
            let t = if which == 0 {
                (&z * &ya).sum_axis(0)
            } else {
                (&z - &ya).amax_axis(0)
            };
            lazycl::eval(&(&g, &t)).unwrap();
            assert_eq!(t.item().unwrap(), want, "{n}x{d} total {which}");
            let hg: Vec<i32> = (0..d)
                .map(|j| {
                    (0..n).fold(0i32, |a, i| {
                        a.wrapping_add(x[i * d + j].wrapping_mul(hz[i].wrapping_sub(y[i])))
                    })
                })
                .collect();
            assert_eq!(g.to_vec().unwrap(), hg, "{n}x{d} gradient");
        }
    }
}

/// Totals that cannot be computed beside the row reduction stay kernels of their own
/// and are right: one that reads a result computed after the gradient (its sum), one
/// whose operand is `[n]` rather than `[n, 1]`, one over rows of a three-dimensional
/// operand, and two in one flush (the second on its own); a total that a later kernel of
/// the flush reads is there for it.
#[test]
fn totals_that_cannot_go_beside_stay_right() {
    let ctx = ctx();
    let data = Data::new(2000, 20, 77);
    let (n, d) = (data.n, data.d);
    let x = ctx.from_shape_slice([n, d], &data.x).unwrap();
    let w = ctx.from_slice(&data.w).unwrap();
    let y = ctx.from_shape_slice([n, 1], &data.y).unwrap();
    let hz = data.z();
    let hg: Vec<f64> = (0..d)
        .map(|j| (0..n).map(|i| data.x[i * d + j] * (hz[i] - data.y[i])).sum())
        .collect();
    let close = |a: f64, b: f64| (a - b).abs() <= 1e-9 * b.abs().max(1.0);
    let record = || {
        let z = (&x * &w).sum_axes(&[1], true);
        let g = (&x * &(&z - &y)).sum_axis(0);
        (z, g)
    };
    // Reads the gradient's sum: computed after the gradient's kernel.
    let (z, g) = record();
    let late = (&z * &g.sum()).mean_axis(0);
    lazycl::eval(&(&g, &late)).unwrap();
    let want = hz.iter().sum::<f64>() / n as f64 * hg.iter().sum::<f64>();
    assert!(
        close(late.item().unwrap(), want),
        "{} vs {want}",
        late.item().unwrap()
    );
    // An operand of one dimension.
    let (z, g) = record();
    let flat = (z.reshape([n]) * 2.0).sum_axis(0);
    lazycl::eval(&(&g, &flat)).unwrap();
    assert!(close(flat.item().unwrap(), 2.0 * hz.iter().sum::<f64>()));
    // Rows of a three-dimensional operand (`[n, 4, 5]`, its row results `[n, 1, 1]`).
    let x3 = x.reshape([n, 4, 5]);
    let w3 = w.reshape([4, 5]);
    let z3 = (&x3 * &w3).sum_axes(&[1, 2], true);
    let g3 = (&x3 * &z3).sum_axis(0);
    let t3 = (&z3 * 0.5).mean();
    lazycl::eval(&(&g3, &t3)).unwrap();
    assert!(close(t3.item().unwrap(), 0.5 * hz.iter().sum::<f64>() / n as f64));
    for (j, a) in g3.to_vec().unwrap().iter().enumerate() {
        let want: f64 = (0..n).map(|i| data.x[i * d + j] * hz[i]).sum();
        assert!(close(*a, want), "g3[{j}]: {a} vs {want}");
    }
    // Two totals: one beside, one a kernel of its own; and a later kernel reading one.
    let (z, g) = record();
    let (t1, t2) = ((&z * 0.5).sum_axis(0), z.amax_axis(0));
    let scaled = &g * &t1;
    lazycl::eval(&(&scaled, &t2)).unwrap();
    let h1 = 0.5 * hz.iter().sum::<f64>();
    assert!(close(t1.item().unwrap(), h1));
    assert!(close(
        t2.item().unwrap(),
        hz.iter().cloned().fold(f64::MIN, f64::max)
    ));
    for (a, b) in scaled.to_vec().unwrap().iter().zip(&hg) {
        assert!(close(*a, b * h1), "{a} vs {}", b * h1);
    }
}
