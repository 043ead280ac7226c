//! Property test: random graphs of differentiable operations (unary functions, broadcast
//! binary operations, reductions keeping their axes, scans, flips, broadcasts, selects,
//! shared subexpressions) over two or three arrays of random shapes (axes of length 1
//! included), differentiated by `grad` and compared with central finite differences of
//! the same graph in `f64`, element by element.
//!
//! Cases per run: `LAZYCL_GRAD_CASES` (default 24). A failure prints the case's seed and
//! the graph's operations.

use crate::common::{cases, ctx, rng};
use lazycl::prelude::*;
use rand::rngs::StdRng;
use rand::Rng;

/// One operation of a random graph, over earlier values (by position).
#[derive(Debug, Clone, Copy)]
enum Step {
    Sin(usize),
    Tanh(usize),
    Square(usize),
    SoftAbs(usize),
    Atan(usize),
    Exp(usize),
    Add(usize, usize),
    Sub(usize, usize),
    Mul(usize, usize),
    Div(usize, usize),
    SumKept(usize, usize),
    MeanKept(usize, usize),
    MaxKept(usize, usize),
    Cumsum(usize, usize),
    Flip(usize, usize),
    Select(usize, usize),
}

/// A random graph: the steps after the inputs, and the shape everything broadcasts to.
struct Graph {
    full: Vec<usize>,
    inputs: Vec<Vec<usize>>,
    steps: Vec<Step>,
}

fn random_graph(r: &mut StdRng) -> Graph {
    let rank = r.gen_range(1..=3);
    let full: Vec<usize> = (0..rank).map(|_| r.gen_range(1..=4)).collect();
    let n_inputs = r.gen_range(2..=3);
    // Each input has the full shape with some axes of length 1 (broadcast).
    let inputs: Vec<Vec<usize>> = (0..n_inputs)
        .map(|_| {
            full.iter()
                .map(|&d| if r.gen_bool(0.3) { 1 } else { d })
                .collect()
        })
        .collect();
    let depth = r.gen_range(3..=8);
    let mut steps = Vec::new();
    for values in n_inputs..n_inputs + depth {
        let a = r.gen_range(0..values);
        let b = r.gen_range(0..values);
        let axis = r.gen_range(0..rank);
        let step = match r.gen_range(0..16) {
            0 => Step::Sin(a),
            1 => Step::Tanh(a),
            2 => Step::Square(a),
            3 => Step::SoftAbs(a),
            4 => Step::Atan(a),
            5 => Step::Exp(a),
            6 => Step::Add(a, b),
            7 => Step::Sub(a, b),
            8 => Step::Mul(a, b),
            9 => Step::Div(a, b),
            10 => Step::SumKept(a, axis),
            11 => Step::MeanKept(a, axis),
            12 => Step::MaxKept(a, axis),
            13 => Step::Cumsum(a, axis),
            14 => Step::Flip(a, axis),
            _ => Step::Select(a, b),
        };
        steps.push(step);
    }
    Graph { full, inputs, steps }
}

/// The graph's loss over `inputs`: every value, broadcast to the full shape and weighted,
/// summed (so that every step reaches the loss).
fn evaluate(g: &Graph, inputs: &[Array<f64>]) -> Array<f64> {
    let mut v: Vec<Array<f64>> = inputs.to_vec();
    for s in &g.steps {
        let y = match *s {
            Step::Sin(a) => v[a].sin(),
            Step::Tanh(a) => v[a].tanh(),
            Step::Square(a) => &v[a] * &v[a],
            Step::SoftAbs(a) => (&v[a] * &v[a] + 1.0).sqrt(),
            Step::Atan(a) => v[a].atan(),
            Step::Exp(a) => v[a].tanh().exp(),
            Step::Add(a, b) => &v[a] + &v[b],
            Step::Sub(a, b) => &v[a] - &v[b],
            Step::Mul(a, b) => &v[a] * &v[b],
            Step::Div(a, b) => &v[a] / &(&v[b] * &v[b] + 1.0),
            Step::SumKept(a, k) => v[a].sum_axes(&[k], true),
            Step::MeanKept(a, k) => v[a].mean_axes(&[k], true),
            Step::MaxKept(a, k) => v[a].amax_axes(&[k], true),
            Step::Cumsum(a, k) => v[a].cumsum(k),
            Step::Flip(a, k) => v[a].flip(k),
            Step::Select(a, b) => v[a].gt(0.1).select(&v[a] * 2.0, &v[b]),
        };
        v.push(y);
    }
    let ctx = inputs[0].context();
    let n: usize = g.full.iter().product();
    let mut total = None::<Array<f64>>;
    for (k, y) in v.iter().enumerate() {
        let w: Vec<f64> = (0..n).map(|i| ((i * 7 + k * 3) as f64 * 0.61).sin()).collect();
        let w = ctx.from_shape_slice(g.full.clone(), &w).unwrap();
        let term = (y.broadcast_to(&g.full) * &w).sum();
        total = Some(match total {
            Some(t) => t + term,
            None => term,
        });
    }
    total.unwrap()
}

#[test]
fn random_graphs_differentiate_like_their_finite_differences() {
    let ctx = ctx();
    for case in 0..cases("LAZYCL_GRAD_CASES", 24) {
        let seed = 9000 + case as u64;
        let mut r = rng(seed);
        let g = random_graph(&mut r);
        let hosts: Vec<Vec<f64>> = g
            .inputs
            .iter()
            .map(|s| {
                (0..s.iter().product::<usize>())
                    .map(|_| r.gen_range(-1.5..1.5))
                    .collect()
            })
            .collect();
        let upload = |hosts: &[Vec<f64>]| -> Vec<Array<f64>> {
            hosts
                .iter()
                .zip(&g.inputs)
                .map(|(h, s)| ctx.from_shape_slice(s.clone(), h).unwrap())
                .collect()
        };
        let inputs = upload(&hosts);
        let refs: Vec<&Array<f64>> = inputs.iter().collect();
        let grads = evaluate(&g, &inputs).grad(&refs).unwrap();
        for (p, grad) in grads.iter().enumerate() {
            let got = grad.to_vec().unwrap();
            for i in 0..hosts[p].len() {
                let eps = 1e-6;
                let (mut up, mut down) = (hosts.clone(), hosts.clone());
                up[p][i] += eps;
                down[p][i] -= eps;
                let fu = evaluate(&g, &upload(&up)).item().unwrap();
                let fd = evaluate(&g, &upload(&down)).item().unwrap();
                let want = (fu - fd) / (2.0 * eps);
                assert!(
                    (got[i] - want).abs() <= 1e-4 * want.abs().max(1.0),
                    "case {case} (seed {seed}), shape {:?}, inputs {:?}, steps {:?}: d/d input {p}[{i}] = {} by grad, {want} by differences",
                    g.full,
                    g.inputs,
                    g.steps,
                    got[i]
                );
            }
        }
    }
}
