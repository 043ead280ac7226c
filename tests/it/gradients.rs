//! Gradients of the recorded graph (`Array::grad`, `vjp`, `value_and_grad`, `detach`)
//! against central finite differences in `f64` on random data, for every kind of
//! operation with a pullback: elementwise math with broadcasting, reductions, scans,
//! views with steps and reversals, regions, products, and compositions of them (softmax,
//! layer statistics, a two-layer network). Counters show that asking for a gradient runs
//! nothing and that an update fuses with the backward pass.

use crate::common::{ctx, rng};
use lazycl::prelude::*;
use rand::Rng;

/// A function of the parameters (arrays of the given shapes) to a 0-d loss.
pub(crate) type Loss = dyn Fn(&[Array<f64>]) -> Array<f64>;

/// How a check asks for the gradient.
#[derive(Clone, Copy)]
enum Asked {
    /// `loss.grad(..)` of the recorded loss.
    Grad,
    /// `value_and_grad` over `f`, where operations run when called (a scatter) keep what
    /// gradients need.
    ValueAndGrad,
}

/// Checks `grad` of `f` at random points against central differences, element by element.
pub(crate) fn check(name: &str, shapes: &[&[usize]], range: (f64, f64), f: &Loss) {
    check_asked(name, shapes, range, f, Asked::Grad);
}

/// [`check`], the gradient asked for as `asked` says.
fn check_asked(name: &str, shapes: &[&[usize]], range: (f64, f64), f: &Loss, asked: Asked) {
    let ctx = ctx();
    let mut r = rng(name.len() as u64 * 7919 + shapes.len() as u64);
    let hosts: Vec<Vec<f64>> = shapes
        .iter()
        .map(|s| {
            (0..s.iter().product::<usize>())
                .map(|_| r.gen_range(range.0..range.1))
                .collect()
        })
        .collect();
    let arrays = |hosts: &[Vec<f64>]| -> Vec<Array<f64>> {
        hosts
            .iter()
            .zip(shapes)
            .map(|(h, s)| ctx.from_shape_slice(s.to_vec(), h).unwrap())
            .collect()
    };
    let params = arrays(&hosts);
    let refs: Vec<&Array<f64>> = params.iter().collect();
    let grads = match asked {
        Asked::Grad => f(&params).grad(&refs),
        Asked::ValueAndGrad => lazycl::value_and_grad(&refs, |q| f(q)).map(|(_, g)| g),
    }
    .unwrap_or_else(|e| panic!("{name}: {e}"));
    for (p, g) in grads.iter().enumerate() {
        assert_eq!(g.shape(), shapes[p], "{name}: the gradient's shape");
        let got = g.to_vec().unwrap();
        for i in 0..hosts[p].len() {
            let eps = 1e-6 * hosts[p][i].abs().max(1.0);
            let mut up = hosts.clone();
            up[p][i] += eps;
            let mut down = hosts.clone();
            down[p][i] -= eps;
            let fu = f(&arrays(&up)).item().unwrap();
            let fd = f(&arrays(&down)).item().unwrap();
            let want = (fu - fd) / (2.0 * eps);
            let tol = 1e-5 * want.abs().max(1.0);
            assert!(
                (got[i] - want).abs() <= tol,
                "{name}: d/d param {p}[{i}] = {} by the gradient, {want} by differences",
                got[i]
            );
        }
    }
}

/// A fixed weighting, so that a loss reads every element of `y` differently.
pub(crate) fn weigh(y: &Array<f64>) -> Array<f64> {
    let n = y.len();
    let w: Vec<f64> = (0..n).map(|i| 0.5 + (i as f64 * 0.37).sin()).collect();
    let ctx = y.context();
    (y * &ctx.from_shape_slice(y.shape().to_vec(), &w).unwrap()).sum()
}

#[test]
fn elementwise_functions_match_finite_differences() {
    type F = fn(&Array<f64>) -> Array<f64>;
    let everywhere: [(&str, F); 18] = [
        ("neg", |x| x * -1.0),
        ("exp", |x| x.exp()),
        ("exp2", |x| x.exp2()),
        ("sin", |x| x.sin()),
        ("cos", |x| x.cos()),
        ("tanh", |x| x.tanh()),
        ("atan", |x| x.atan()),
        ("sinh", |x| x.sinh()),
        ("cosh", |x| x.cosh()),
        ("asinh", |x| x.asinh()),
        ("cbrt", |x| (x + 3.0).cbrt()),
        ("erf", |x| x.erf()),
        ("erfc", |x| x.erfc()),
        ("exp_m1", |x| x.exp_m1()),
        ("abs", |x| x.abs()),
        ("square", |x| x * x),
        ("powi", |x| x.powi(3)),
        ("chain", |x| {
            ((x * 2.0 + 1.0).sin() * x.exp()).tanh() / (x * x + 1.0)
        }),
    ];
    for (name, f) in everywhere {
        check(name, &[&[3, 4]], (-1.5, 1.5), &move |p| weigh(&f(&p[0])));
    }
    let positive: [(&str, F); 8] = [
        ("sqrt", |x| x.sqrt()),
        ("ln", |x| x.ln()),
        ("log2", |x| x.log2()),
        ("log10", |x| x.log10()),
        ("ln_1p", |x| x.ln_1p()),
        ("acosh", |x| (x + 1.5).acosh()),
        ("powf", |x| x.powf(1.7)),
        ("recip", |x| 1.0 / x),
    ];
    for (name, f) in positive {
        check(name, &[&[5]], (0.2, 3.0), &move |p| weigh(&f(&p[0])));
    }
    let inside: [(&str, F); 4] = [
        ("asin", |x| x.asin()),
        ("acos", |x| x.acos()),
        ("atanh", |x| x.atanh()),
        ("tan", |x| x.tan()),
    ];
    for (name, f) in inside {
        check(name, &[&[7]], (-0.8, 0.8), &move |p| weigh(&f(&p[0])));
    }
}

#[test]
fn binary_operations_sum_back_over_broadcast_axes() {
    type F = fn(&Array<f64>, &Array<f64>) -> Array<f64>;
    let ops: [(&str, F); 8] = [
        ("add", |a, b| a + b),
        ("sub", |a, b| a - b),
        ("mul", |a, b| a * b),
        ("div", |a, b| a / (b * b + 1.0)),
        ("pow", |a, b| (a * a + 0.5).powf(b)),
        ("atan2", |a, b| a.atan2(b)),
        ("hypot", |a, b| a.hypot(b)),
        ("rem", |a, b| a % (b.abs() + 2.0)),
    ];
    for (name, f) in ops {
        // [3, 1] against [4]: both broadcast to [3, 4]; and a 0-d operand.
        check(name, &[&[3, 1], &[4]], (0.3, 1.9), &move |p| {
            weigh(&f(&p[0], &p[1]))
        });
        check(name, &[&[2, 3], &[]], (0.3, 1.9), &move |p| {
            weigh(&f(&p[0], &p[1]))
        });
    }
    // A scalar on either side.
    check("scalar left", &[&[6]], (0.5, 2.0), &|p| {
        weigh(&(3.0 / &p[0] - 2.0 * &p[0]))
    });
    check("mul_add", &[&[4], &[4], &[1]], (-1.0, 1.0), &|p| {
        weigh(&p[0].mul_add(&p[1], &p[2]))
    });
}

#[test]
fn reductions_scans_and_row_functions_match_finite_differences() {
    check("sum_axis", &[&[3, 5]], (-1.0, 1.0), &|p| {
        weigh(&p[0].sum_axis(Axis(1)))
    });
    check("sum_axes kept", &[&[2, 3, 4]], (-1.0, 1.0), &|p| {
        weigh(&p[0].sum_axes(&[0, 2], true).exp())
    });
    check("mean", &[&[4, 3]], (-1.0, 1.0), &|p| {
        weigh(&p[0].mean_axis(Axis(0)).sin())
    });
    check("prod", &[&[3, 4]], (0.5, 1.5), &|p| {
        weigh(&p[0].prod_axis(Axis(1)))
    });
    check("amax", &[&[4, 6]], (-1.0, 1.0), &|p| {
        weigh(&p[0].amax_axis(Axis(1)))
    });
    check("amin", &[&[4, 6]], (-1.0, 1.0), &|p| p[0].amin().exp());
    check("norm", &[&[7]], (-1.0, 1.0), &|p| p[0].norm());
    check("var", &[&[3, 5]], (-1.0, 1.0), &|p| {
        weigh(&p[0].var_axis(Axis(1), 1.0))
    });
    check("std", &[&[9]], (-1.0, 1.0), &|p| p[0].std(0.0));
    check("logsumexp", &[&[3, 5]], (-2.0, 2.0), &|p| {
        weigh(&p[0].logsumexp(1))
    });
    check("softmax", &[&[3, 5]], (-2.0, 2.0), &|p| weigh(&p[0].softmax(1)));
    check("log_softmax", &[&[4, 3]], (-2.0, 2.0), &|p| {
        weigh(&p[0].log_softmax(0))
    });
    check("cumsum", &[&[3, 4]], (-1.0, 1.0), &|p| {
        weigh(&p[0].cumsum(1).sin())
    });
    check("cumsum exclusive", &[&[5, 2]], (-1.0, 1.0), &|p| {
        weigh(&p[0].cumsum_exclusive(0).cos())
    });
    check("cumprod", &[&[2, 5]], (0.5, 1.5), &|p| weigh(&p[0].cumprod(1)));
}

#[test]
fn views_and_regions_send_the_cotangent_back_to_the_elements_they_read() {
    check("slice with steps", &[&[7, 6]], (-1.0, 1.0), &|p| {
        weigh(&p[0].slice(s![1..6;2, ..;-2]).exp())
    });
    check("reversed slice", &[&[9]], (-1.0, 1.0), &|p| {
        weigh(&p[0].slice(s![1..8;-3]))
    });
    check("transpose", &[&[3, 4]], (-1.0, 1.0), &|p| {
        weigh(&(p[0].t() * 2.0).sin())
    });
    check("fixed index", &[&[4, 5]], (-1.0, 1.0), &|p| {
        weigh(&p[0].index_axis(Axis(0), 2).exp())
    });
    check("broadcast view", &[&[3, 1]], (-1.0, 1.0), &|p| {
        weigh(&p[0].broadcast_to(&[2, 3, 4]).sin())
    });
    check("reshape", &[&[2, 6]], (-1.0, 1.0), &|p| {
        weigh(&p[0].reshape([3, 4]).slice(s![.., 1..3]))
    });
    check("flip", &[&[3, 4]], (-1.0, 1.0), &|p| {
        weigh(&(p[0].flip(1) * &p[0]))
    });
    check("permuted", &[&[2, 3, 4]], (-1.0, 1.0), &|p| {
        weigh(&p[0].permuted_axes([2, 0, 1]).exp())
    });
    check("concatenate", &[&[2, 3], &[4, 3]], (-1.0, 1.0), &|p| {
        weigh(&lazycl::concatenate(Axis(0), &[&p[0], &p[1].sin()]).unwrap())
    });
    check("stack", &[&[3], &[3]], (-1.0, 1.0), &|p| {
        weigh(&lazycl::stack(Axis(1), &[&p[0], &(&p[1] * &p[0])]).unwrap())
    });
    check("pad", &[&[2, 3]], (-1.0, 1.0), &|p| {
        weigh(&p[0].exp().pad(&[(1, 2), (0, 1)], 0.5))
    });
}

#[test]
fn products_batched_and_broadcast_match_finite_differences() {
    check("matmul", &[&[3, 4], &[4, 2]], (-1.0, 1.0), &|p| {
        weigh(&p[0].matmul(&p[1]))
    });
    check("batched", &[&[2, 3, 4], &[4, 5]], (-1.0, 1.0), &|p| {
        weigh(&p[0].matmul(&p[1]))
    });
    check("transposed operand", &[&[4, 3], &[4, 2]], (-1.0, 1.0), &|p| {
        weigh(&p[0].t().matmul(&p[1]).tanh())
    });
    check("vector", &[&[3, 4], &[4]], (-1.0, 1.0), &|p| {
        weigh(&p[0].matmul(&p[1]))
    });
}

#[test]
fn subgradients_split_ties_and_clamp_passes_inside() {
    let ctx = ctx();
    let x = ctx.from_slice(&[1.0f64, 3.0, 3.0, -2.0]).unwrap();
    let g = x.amax().grad(&[&x]).unwrap();
    assert_eq!(g[0].to_vec().unwrap(), vec![0.0, 0.5, 0.5, 0.0]);
    let y = ctx.from_slice(&[1.0f64, 1.0, 0.0, 5.0]).unwrap();
    let g = x.max(&y).sum().grad(&[&x, &y]).unwrap();
    assert_eq!(g[0].to_vec().unwrap(), vec![0.5, 1.0, 1.0, 0.0]);
    assert_eq!(g[1].to_vec().unwrap(), vec![0.5, 0.0, 0.0, 1.0]);
    let g = x.clamp(0.0, 2.5).sum().grad(&[&x]).unwrap();
    assert_eq!(g[0].to_vec().unwrap(), vec![1.0, 0.0, 0.0, 0.0]);
    let z = ctx.from_slice(&[-1.0f64, 0.0, 2.0]).unwrap();
    assert_eq!(
        z.abs().sum().grad(&[&z]).unwrap()[0].to_vec().unwrap(),
        vec![-1.0, 0.0, 1.0]
    );
    let m = x.gt(0.0);
    let g = m.select(&x * 2.0, &x * &x).sum().grad(&[&x]).unwrap();
    assert_eq!(g[0].to_vec().unwrap(), vec![2.0, 2.0, 2.0, -4.0]);
    // Rounding and comparisons pass nothing; an array the loss does not read gets zeros.
    let unused = ctx.from_slice(&[1.0f64, 2.0]).unwrap();
    let g = x.floor().sum().grad(&[&x, &unused]).unwrap();
    assert_eq!(g[0].to_vec().unwrap(), vec![0.0; 4]);
    assert_eq!(g[1].to_vec().unwrap(), vec![0.0; 2]);
}

#[test]
fn gathers_send_the_cotangent_to_the_picked_elements_repeats_added() {
    // Indices with repeats, one out of range (clamped, as the forward pass reads it).
    check("take rows", &[&[4, 3]], (-1.0, 1.0), &|p| {
        let idx = p[0].context().from_slice(&[2u32, 0, 2, 9]).unwrap();
        weigh(&p[0].take(Axis(0), &idx).exp())
    });
    check("take columns, 2-d indices", &[&[2, 5]], (-1.0, 1.0), &|p| {
        let idx = p[0]
            .context()
            .from_shape_slice([2, 2], &[4i64, -3, 1, 4])
            .unwrap();
        weigh(&p[0].take(Axis(1), &idx).sin())
    });
    check("take_along_axis", &[&[3, 4]], (-1.0, 1.0), &|p| {
        let idx = p[0]
            .context()
            .from_shape_slice([3, 2], &[3u32, 3, 0, 1, 2, 0])
            .unwrap();
        weigh(&(p[0].take_along_axis(Axis(1), &idx) * &p[0].slice(s![.., ..2])))
    });
    check("take_along_axis broadcast", &[&[1, 4]], (-1.0, 1.0), &|p| {
        let idx = p[0]
            .context()
            .from_shape_slice([3, 2], &[3u32, 1, 0, 0, 2, 3])
            .unwrap();
        weigh(&p[0].take_along_axis(Axis(1), &idx).exp())
    });
}

#[test]
fn scatter_add_matches_finite_differences() {
    // Inside value_and_grad (a scatter runs when called, and keeps its rule only there).
    // Rows 2, 0, 2 (a repeat) and 9 (outside: dropped) of a [3, 4] array, into zeros and
    // into a computed array.
    let in_closure = |name: &str, shapes: &[&[usize]], f: &Loss| {
        check_asked(name, shapes, (-1.0, 1.0), f, Asked::ValueAndGrad)
    };
    in_closure("scatter_add into zeros", &[&[4, 4]], &|p| {
        let ctx = p[0].context();
        let rows = ctx.from_slice(&[2u32, 0, 2, 9]).unwrap();
        let mut sums = ctx.zeros::<f64>([3, 4]).unwrap();
        scatter_add(&mut sums, Axis(0), &rows, &(&p[0] * &p[0])).unwrap();
        weigh(&sums.sin())
    });
    in_closure(
        "scatter_add into a computed array, broadcast values",
        &[&[4, 1], &[3, 4]],
        &|p| {
            let ctx = p[0].context();
            let cols = ctx.from_slice(&[3i32, -1, 0, 3]).unwrap();
            let mut acc = p[1].exp();
            scatter_add(&mut acc, -1, &cols, p[0].reshape(vec![1, 4])).unwrap();
            scatter_add(
                &mut acc,
                Axis(0),
                &ctx.from_slice(&[1u32]).unwrap(),
                p[1].slice(s![0..1, ..]),
            )
            .unwrap();
            weigh(&(&acc * &acc))
        },
    );
    // Outside value_and_grad: an error that says where it differentiates.
    let ctx = ctx();
    let x = ctx.from_slice(&[1.0f64, 2.0]).unwrap();
    let mut acc = ctx.zeros::<f64>([2]).unwrap();
    scatter_add(&mut acc, 0, &ctx.from_slice(&[1u32, 0]).unwrap(), &x).unwrap();
    let e = acc.sum().grad(&[&x]).unwrap_err().to_string();
    assert!(e.contains("scatter_add") && e.contains("value_and_grad"), "{e}");
}
