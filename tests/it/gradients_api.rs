//! What asking for a gradient does: it runs nothing (the gradients are lazy), a training
//! step by `grad` launches about the kernels the hand-written step does and computes the
//! same values, `value_and_grad` may read values inside, `detach` and `vjp` do what
//! they say, 16-bit and f32 arrays differentiate, and what cannot be differentiated is
//! an error naming it.

use crate::common::{ctx, rng, Random};
use lazycl::prelude::*;
use rand::Rng;

/// A two-layer perceptron's parameters.
struct Mlp {
    w1: Array<f32>,
    b1: Array<f32>,
    w2: Array<f32>,
    b2: Array<f32>,
}

/// Softmax cross-entropy of a two-layer perceptron, the way a user writes it.
fn mlp_loss(m: &Mlp, x: &Array<f32>, onehot: &Array<f32>) -> Array<f32> {
    let h = (x.matmul(&m.w1) + &m.b1).max(0.0f32);
    let logits = h.matmul(&m.w2) + &m.b2;
    (logits.logsumexp(1) - (&logits * onehot).sum_axis(1)).mean()
}

/// The gradients derived by hand (`examples/mlp.rs`).
fn mlp_by_hand(m: &Mlp, x: &Array<f32>, onehot: &Array<f32>) -> [Array<f32>; 4] {
    let n = x.shape()[0] as f32;
    let h = (x.matmul(&m.w1) + &m.b1).max(0.0f32);
    let logits = h.matmul(&m.w2) + &m.b2;
    let dz = (logits.softmax(1) - onehot) / n;
    let dh = dz.matmul(&m.w2.t()) * h.gt(0.0f32).cast::<f32>();
    [
        x.t().matmul(&dh),
        dh.sum_axis(0),
        h.t().matmul(&dz),
        dz.sum_axis(0),
    ]
}

fn mlp(ctx: &Context, n: usize, f: usize, hidden: usize, classes: usize) -> (Mlp, Array<f32>, Array<f32>) {
    let mut r = rng(53);
    let mut mat = |rows: usize, cols: usize, scale: f32| {
        let v: Vec<f32> = (0..rows * cols).map(|_| r.gen_range(-scale..scale)).collect();
        ctx.from_shape_slice([rows, cols], &v).unwrap()
    };
    let m = Mlp {
        w1: mat(f, hidden, 0.5),
        b1: mat(1, hidden, 0.1).reshape([hidden]),
        w2: mat(hidden, classes, 0.5),
        b2: mat(1, classes, 0.1).reshape([classes]),
    };
    let x = mat(n, f, 1.0);
    let labels: Vec<u32> = (0..n).map(|i| (i * 7 % classes) as u32).collect();
    let ids: Vec<u32> = (0..classes as u32).collect();
    let onehot = ctx
        .from_shape_slice([n, 1], &labels)
        .unwrap()
        .eq(ctx.from_shape_slice([1, classes], &ids).unwrap())
        .cast::<f32>();
    onehot.eval().unwrap();
    (m, x, onehot)
}

#[test]
fn an_mlp_step_by_grad_runs_nothing_until_read_and_matches_the_hand_written_one() {
    let ctx = ctx();
    for (n, f, hidden, classes) in [(64usize, 5usize, 16usize, 3usize), (1, 1, 1, 2), (37, 9, 33, 10)] {
        let (m, x, onehot) = mlp(&ctx, n, f, hidden, classes);
        let before = ctx.stats();
        let loss = mlp_loss(&m, &x, &onehot);
        let g = loss.grad(&[&m.w1, &m.b1, &m.w2, &m.b2]).unwrap();
        let d = ctx.stats() - before;
        assert_eq!(
            (d.kernels_launched, d.host_waits),
            (0, 0),
            "asking for a gradient runs nothing: {d}"
        );
        let by_hand = mlp_by_hand(&m, &x, &onehot);
        for (k, (got, want)) in g.iter().zip(&by_hand).enumerate() {
            let (got, want) = (got.to_vec().unwrap(), want.to_vec().unwrap());
            let scale = want.iter().fold(1e-6f32, |a, v| a.max(v.abs()));
            for (i, (a, b)) in got.iter().zip(&want).enumerate() {
                assert!(
                    (a - b).abs() <= 1e-5 * scale,
                    "{n}x{f}x{hidden}x{classes} gradient {k}[{i}]: {a} vs {b}"
                );
            }
        }
    }
}

#[test]
fn a_training_step_by_grad_launches_what_the_hand_written_step_does_plus_at_most_one() {
    let ctx = ctx();
    let (m, x, onehot) = mlp(&ctx, 256, 12, 32, 10);
    let lr = 0.1f32;
    let update = |g: [&Array<f32>; 4]| {
        [
            &m.w1 - &(g[0] * lr),
            &m.b1 - &(g[1] * lr),
            &m.w2 - &(g[2] * lr),
            &m.b2 - &(g[3] * lr),
        ]
    };
    let run = |new: [Array<f32>; 4], loss: &Array<f32>| {
        let before = ctx.stats();
        lazycl::eval(&(loss, &new[0], &new[1], &new[2], &new[3])).unwrap();
        ctx.synchronize().unwrap();
        (ctx.stats() - before).kernels_launched
    };
    // Twice each: the second run of a structure loads its programs.
    let mut counts = Vec::new();
    for _ in 0..2 {
        let loss = mlp_loss(&m, &x, &onehot);
        let h = mlp_by_hand(&m, &x, &onehot);
        let hand = run(update([&h[0], &h[1], &h[2], &h[3]]), &loss);
        let loss = mlp_loss(&m, &x, &onehot);
        let g = loss.grad(&[&m.w1, &m.b1, &m.w2, &m.b2]).unwrap();
        let auto = run(update([&g[0], &g[1], &g[2], &g[3]]), &loss);
        counts.push((hand, auto));
    }
    let (hand, auto) = counts[1];
    eprintln!("kernels a step: by hand {hand}, by grad {auto}");
    assert!(auto <= hand + 1, "by grad {auto} kernels, by hand {hand}");
}

#[test]
fn a_logistic_regression_step_by_grad_launches_no_more_kernels_than_by_hand() {
    let ctx = ctx();
    let mut r = rng(7);
    let (n, d) = (300, 7);
    let xs: Vec<f32> = (0..n * d).map(|_| r.gen_range(-1.0..1.0)).collect();
    let ys: Vec<f32> = (0..n).map(|_| f32::from(r.gen_bool(0.5))).collect();
    let x = ctx.from_shape_slice([n, d], &xs).unwrap();
    let y = ctx.from_shape_slice([n, 1], &ys).unwrap();
    let w = ctx
        .from_slice(&(0..d).map(|i| 0.1 * i as f32 - 0.3).collect::<Vec<_>>())
        .unwrap();
    let b = ctx.from_slice(&[0.2f32]).unwrap();
    let (lr, lambda) = (0.5f32, 1e-3f32);
    let logits = || (&x * &w).sum_axes(&[1], true) + &b;
    let by_hand = || {
        let z = logits();
        let r = expr!(1.0 / (1.0 + (-z).exp()) - y);
        let gw = (&x * &r).mean_axis(0) + &w * lambda;
        (&w - &(gw * lr), &b - &(r.mean_axis(0) * lr))
    };
    let by_grad = || {
        let z = logits();
        let loss = expr!(z.max(0.0) + (1.0 + (-z.abs()).exp()).ln() - y * z).mean()
            + (&w * &w).sum() * (lambda / 2.0);
        let g = loss.grad(&[&w, &b]).unwrap();
        (&w - &(&g[0] * lr), &b - &(&g[1] * lr))
    };
    let run = |(w, b): (Array<f32>, Array<f32>)| {
        let before = ctx.stats();
        lazycl::eval(&(&w, &b)).unwrap();
        ctx.synchronize().unwrap();
        let k = (ctx.stats() - before).kernels_launched;
        (k, w.to_vec().unwrap(), b.to_vec().unwrap())
    };
    // Twice each: the second run of a structure loads its programs.
    let mut last = None;
    for _ in 0..2 {
        last = Some((run(by_hand()), run(by_grad())));
    }
    let ((hand, wh, bh), (auto, wg, bg)) = last.unwrap();
    eprintln!("logistic regression, kernels a step: by hand {hand}, by grad {auto}");
    assert!(auto <= hand, "by grad {auto} kernels, by hand {hand}");
    for (p, q) in wh.iter().chain(&bh).zip(wg.iter().chain(&bg)) {
        assert!(
            (p - q).abs() <= 1e-5 * p.abs().max(1.0),
            "by hand {p}, by grad {q}"
        );
    }
}

#[test]
fn value_and_grad_reads_values_inside_and_treats_captured_arrays_as_constants() {
    let ctx = ctx();
    let w = ctx.from_slice(&[0.5f64, -1.5, 2.0]).unwrap();
    let c = ctx.from_slice(&[1.0f64, 2.0, 3.0]).unwrap();
    let captured = &w * 10.0; // made from w outside: a constant inside
    let (value, g) = lazycl::value_and_grad(&[&w], |p| {
        let y = (&p[0] * &c).sin();
        let s = y.sum();
        // A read on the host, then more work on what was read.
        let sign = if s.item().unwrap() > 0.0 { 1.0 } else { -1.0 };
        (&y * &y).sum() * sign + (&p[0] * &captured).sum()
    })
    .unwrap();
    let host_w = [0.5f64, -1.5, 2.0];
    let s: f64 = host_w
        .iter()
        .zip([1.0, 2.0, 3.0])
        .map(|(w, c)| (w * c).sin())
        .sum();
    let sign = if s > 0.0 { 1.0 } else { -1.0 };
    let want: Vec<f64> = host_w
        .iter()
        .zip([1.0, 2.0, 3.0])
        .map(|(w, c)| sign * 2.0 * (w * c).sin() * (w * c).cos() * c + w * 10.0)
        .collect();
    let got = g[0].to_vec().unwrap();
    for (a, b) in got.iter().zip(&want) {
        assert!((a - b).abs() < 1e-12, "{got:?} vs {want:?}");
    }
    assert!(value.item().unwrap().is_finite());
}

#[test]
fn detach_stops_gradients_and_vjp_takes_a_cotangent() {
    let ctx = ctx();
    let x = ctx.from_slice(&[1.0f32, 2.0, 3.0]).unwrap();
    let g = (&x * &x.detach()).sum().grad(&[&x]).unwrap();
    assert_eq!(g[0].to_vec().unwrap(), vec![1.0, 2.0, 3.0]);
    let y = x.exp();
    let ct = ctx.from_slice(&[1.0f32, 0.0, -2.0]).unwrap();
    let v = y.vjp(&ct, &[&x]).unwrap();
    let want: Vec<f32> = [1.0f32, 0.0, -2.0]
        .iter()
        .zip([1.0f32, 2.0, 3.0])
        .map(|(c, x)| c * x.exp())
        .collect();
    for (a, b) in v[0].to_vec().unwrap().iter().zip(&want) {
        assert!((a - b).abs() <= 1e-5 * b.abs().max(1.0));
    }
    // The loss itself, and an array that is also a target's operand.
    let g = y.sum().grad(&[&y, &x]).unwrap();
    assert_eq!(g[0].to_vec().unwrap(), vec![1.0; 3]);
    let e = x.exp().to_vec().unwrap();
    for (a, b) in g[1].to_vec().unwrap().iter().zip(&e) {
        assert!((a - b).abs() <= 1e-5 * b);
    }
}

#[test]
fn sixteen_bit_and_f32_arrays_differentiate_through_their_casts() {
    let ctx = ctx();
    let mut r = rng(54);
    let v = f32::random_vec(&mut r, 20);
    let xb: Vec<bf16> = v.iter().map(|&a| bf16::from_f32(a)).collect();
    let x = ctx.from_slice(&xb).unwrap();
    // Computed in bf16 (f32 inside), the loss summed in f32.
    let g = (&x * &x).cast::<f32>().sum().grad_of(&x);
    for (a, b) in g.iter().zip(&xb) {
        let want = 2.0 * b.to_f32();
        assert!(
            (a.to_f32() - want).abs() <= 2.0 * want.abs() * 2f32.powi(-8) + 1e-6,
            "{a} vs {want}"
        );
    }
    let xh: Vec<f16> = v.iter().map(|&a| f16::from_f32(a)).collect();
    let x = ctx.from_slice(&xh).unwrap();
    let g = x.sin().cast::<f64>().sum().grad_of(&x);
    for (a, b) in g.iter().zip(&xh) {
        let want = b.to_f32().cos();
        assert!((a.to_f32() - want).abs() <= 2e-3, "{a} vs {want}");
    }
}

/// The gradient of a loss of another float type with respect to `x`, read.
trait GradOf {
    fn grad_of<T: lazycl::Float>(&self, x: &Array<T>) -> Vec<T>;
}

impl<L: lazycl::Float> GradOf for Array<L> {
    fn grad_of<T: lazycl::Float>(&self, x: &Array<T>) -> Vec<T> {
        // The loss as x's type, through a cast: the cast's pullback brings it back.
        self.cast::<T>().grad(&[x]).unwrap()[0].to_vec().unwrap()
    }
}

#[test]
fn what_cannot_be_differentiated_is_an_error_naming_it() {
    let ctx = ctx();
    let x = ctx.from_slice(&[1.0f32, 2.0]).unwrap();
    let e = (&x * 2.0).grad(&[&x]).unwrap_err().to_string();
    assert!(e.contains("must be 0-d") && e.contains("[2]"), "{e}");
    let e = x.lgamma().sum().grad(&[&x]).unwrap_err().to_string();
    assert!(e.contains("lgamma") && e.contains("digamma"), "{e}");
    // An intermediate read before the gradient was asked for. (Read, not `eval()`: an
    // evaluation handed to the dispatch thread may not have run yet, and while it has not,
    // the gradient passes through it.)
    let h = x.exp().sum_axes(&[0], true);
    h.to_vec().unwrap();
    let e = (&h * 3.0).sum().grad(&[&x]).unwrap_err().to_string();
    assert!(e.contains("materialized") && e.contains("value_and_grad"), "{e}");
    // Made from the newer of two arrays asked about, then read: not a constant.
    let (w1, w2) = (
        ctx.from_slice(&[1.0f32]).unwrap(),
        ctx.from_slice(&[2.0f32]).unwrap(),
    );
    let n = w2.exp().sum_axes(&[0], true);
    n.to_vec().unwrap();
    let e = (&n * &w1).sum().grad(&[&w1, &w2]).unwrap_err().to_string();
    assert!(e.contains("materialized"), "{e}");
    // Data prepared after the weights, then read, is a constant.
    let data = ctx.from_slice(&[3.0f32]).unwrap().exp();
    data.to_vec().unwrap();
    let g = (&data * &w1).sum().grad(&[&w1, &w2]).unwrap();
    assert_eq!(g[0].to_vec().unwrap(), vec![3.0f32.exp()]);
    let ct = ctx.from_slice(&[1.0f32]).unwrap();
    let e = x.exp().vjp(&ct, &[&x]).unwrap_err().to_string();
    assert!(e.contains("cotangent"), "{e}");
}

#[test]
fn a_loop_of_updates_differentiates_the_parameters_each_step_materialized() {
    // Least squares by gradient descent: w is computed (and materialized) by every step.
    let ctx = ctx();
    let a = ctx
        .from_shape_slice([3, 2], &[1.0f64, 2.0, 0.5, -1.0, 3.0, 1.0])
        .unwrap();
    let b = ctx.from_slice(&[1.0f64, 0.0, 2.0]).unwrap();
    let mut w = ctx.from_slice(&[0.0f64, 0.0]).unwrap();
    let mut host = [0.0f64, 0.0];
    for step in 0..4 {
        let r = a.matmul(&w) - &b;
        let loss = (&r * &r).sum();
        let g = loss.grad(&[&w]).unwrap();
        w = &w - &(&g[0] * 0.05);
        w.eval().unwrap();
        least_squares_step(&mut host);
        let got = w.to_vec().unwrap();
        assert!(
            (got[0] - host[0]).abs() < 1e-12 && (got[1] - host[1]).abs() < 1e-12,
            "step {step}: {got:?} vs {host:?}"
        );
    }
}

#[test]
fn a_captured_step_replays_forward_backward_and_update_without_planning() {
    let ctx = ctx();
    let a = ctx
        .from_shape_slice([3, 2], &[1.0f64, 2.0, 0.5, -1.0, 3.0, 1.0])
        .unwrap();
    let b = ctx.from_slice(&[1.0f64, 0.0, 2.0]).unwrap();
    let step = ctx.capture(move |w: Array<f64>| {
        let r = a.matmul(&w) - &b;
        let g = (&r * &r).sum().grad(&[&w])?;
        Ok(&w - &(&g[0] * 0.05))
    });
    let mut w = ctx.zeros::<f64>(2).unwrap();
    w = step.run(&w).unwrap(); // traces
    let before = ctx.stats();
    for _ in 0..3 {
        w = step.run(&w).unwrap();
    }
    let d = ctx.stats() - before;
    assert_eq!(
        (d.steps_replayed, d.programs_built, d.flushes_planned),
        (3, 0, 0),
        "{d}"
    );
    let mut host = [0.0f64, 0.0];
    for _ in 0..4 {
        least_squares_step(&mut host);
    }
    let got = w.to_vec().unwrap();
    assert!(
        (got[0] - host[0]).abs() < 1e-12 && (got[1] - host[1]).abs() < 1e-12,
        "{got:?} vs {host:?}"
    );
}

/// One gradient step (rate 0.05) of `|a w - b|²` on the host, for the `a` and `b` of the
/// least-squares tests.
fn least_squares_step(w: &mut [f64; 2]) {
    let (a, b) = ([[1.0, 2.0], [0.5, -1.0], [3.0, 1.0]], [1.0, 0.0, 2.0]);
    let res: Vec<f64> = (0..3).map(|i| a[i][0] * w[0] + a[i][1] * w[1] - b[i]).collect();
    for (j, h) in w.iter_mut().enumerate() {
        *h -= 0.05 * (0..3).map(|i| 2.0 * res[i] * a[i][j]).sum::<f64>();
    }
}

#[kernel]
fn scaled_copy(a: f32, x: &[f32], y: &mut [f32]) {
    let i = global_id(0);
    if i < y.len() {
        y[i] = a * x[i];
    }
}

/// Arrays computed outside the recorded graph — by a sort, a selection, a `#[kernel]` —
/// are never silently constants to a gradient that may pass through them: an error names
/// what computed them, or (sorts and selections inside `value_and_grad`) the gradient
/// passes by the positions they chose.
#[test]
fn sorts_selections_and_kernels_are_never_silent_constants() {
    let ctx = ctx();
    let xs = [3.0f32, 1.0, 5.0, 2.0, 4.0];
    let x = ctx.from_slice(&xs).unwrap();
    let y = &x * 2.0f32;
    let e = y
        .topk(2)
        .unwrap()
        .values
        .sum()
        .grad(&[&x])
        .unwrap_err()
        .to_string();
    assert!(e.contains("a selection") && e.contains("value_and_grad"), "{e}");
    let e = y.sort().unwrap().sum().grad(&[&x]).unwrap_err().to_string();
    assert!(e.contains("a sort"), "{e}");
    let mut out = ctx.zeros::<f32>([5]).unwrap();
    scaled_copy::bind(&ctx)
        .unwrap()
        .global([5])
        .launch(3.0, &y.to_contiguous(), &mut out)
        .unwrap();
    let e = (&out * &out).sum().grad(&[&x]).unwrap_err().to_string();
    assert!(
        e.contains("#[kernel]") && e.contains("expr!") && e.contains("with_vjp"),
        "{e}"
    );
    // Data a kernel wrote before the parameters were made is a constant.
    let w = ctx.from_slice(&[0.5f32; 5]).unwrap();
    let g = (&out * &w).sum().grad(&[&w]).unwrap();
    assert_eq!(g[0].to_vec().unwrap(), out.to_vec().unwrap());

    // Inside value_and_grad: the values picked carry the gradient to their positions.
    let weights = ctx.from_slice(&[1.0f32, 10.0, 100.0, 1000.0, 10000.0]).unwrap();
    let (_, g) = lazycl::value_and_grad(&[&x], |p| (p[0].sort().unwrap() * &weights).sum()).unwrap();
    // sorted: 1 (x1), 2 (x3), 3 (x0), 4 (x4), 5 (x2) → d/dx_i is the weight of its rank.
    assert_eq!(g[0].to_vec().unwrap(), vec![100.0, 1.0, 10000.0, 10.0, 1000.0]);
    let (_, g) = lazycl::value_and_grad(&[&x], |p| {
        let top = (&p[0] * &p[0]).topk(2).unwrap();
        top.values.sum()
    })
    .unwrap();
    assert_eq!(g[0].to_vec().unwrap(), vec![0.0, 0.0, 10.0, 0.0, 8.0]);
    let m = ctx
        .from_shape_slice([2, 3], &[1.0f32, 9.0, 4.0, 7.0, 2.0, 8.0])
        .unwrap();
    let (_, g) = lazycl::value_and_grad(&[&m], |p| {
        let top = p[0].topk_axis(1, 0).unwrap();
        (top.values * 2.0f32).sum()
    })
    .unwrap();
    assert_eq!(g[0].to_vec().unwrap(), vec![0.0, 2.0, 0.0, 2.0, 0.0, 2.0]);
}

/// A `#[kernel]` launch differentiates by the rule its user gives (`with_vjp`); a rule of
/// the wrong arity or shapes is an error naming it.
#[test]
fn a_kernel_differentiates_by_the_rule_its_user_gives() {
    let ctx = ctx();
    let w = ctx.from_slice(&[0.5f32, -1.0, 2.0]).unwrap();
    let x = &w * &w;
    let launch = |x: &Array<f32>| {
        let mut out = ctx.zeros::<f32>([3]).unwrap();
        scaled_copy::bind(&ctx)
            .unwrap()
            .global([3])
            .launch(3.0, &x.to_contiguous(), &mut out)
            .unwrap();
        out
    };
    let y = launch(&x).with_vjp(&[&x], |g| vec![g * 3.0f32]);
    let g = (&y * &y).sum().grad(&[&w]).unwrap();
    // y = 3 w², so d(Σ y²)/dw = 2 y · 6 w = 36 w³.
    let ws = w.to_vec().unwrap();
    let want: Vec<f32> = ws.iter().map(|w| 36.0 * w * w * w).collect();
    assert_eq!(g[0].to_vec().unwrap(), want);
    let bad = launch(&x).with_vjp(&[&x, &w], |g| vec![g * 3.0f32]);
    let e = bad.sum().grad(&[&w]).unwrap_err().to_string();
    assert!(
        e.contains("with_vjp") && e.contains("1 cotangents for 2 inputs"),
        "{e}"
    );
    let bad = launch(&x).with_vjp(&[&x], |g| vec![g.sum()]);
    let e = bad.sum().grad(&[&w]).unwrap_err().to_string();
    assert!(e.contains("shape []") && e.contains("gradients_api.rs"), "{e}");
}
