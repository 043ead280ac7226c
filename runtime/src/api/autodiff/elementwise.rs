//! Pullbacks of elementwise operations: each derivative written with array operations on
//! the operands and the result `y` (so a backward chain fuses like a forward one), the
//! cotangent summed back over broadcast axes. Subgradients are those of numpy-style
//! frameworks: `abs` has 0 at 0, `minimum`/`maximum`/`clamp` split ties evenly between
//! the operands (JAX's rule), `floor`, `round` and `signum` pass nothing.

use std::f64::consts::{LN_10, LN_2, PI};

use super::shared::{constant, operand, unbroadcast, unsupported, Contribution};
use crate::api::array::Array;
use crate::dtype::Float;
use crate::error::Result;
use crate::graph::{BinaryOp, InlineScalar, Node, NodeRef, Op, Side, State, TernaryOp, UnaryOp};

/// The cotangent of `x` through `y = u(x)`; `None` where the derivative is zero.
pub(super) fn unary<T: Float>(u: UnaryOp, x: &NodeRef, y: &Array<T>, g: Array<T>) -> Result<Option<NodeRef>> {
    let x = operand::<T>(x);
    let one = constant(y, 1.0);
    let d = match u {
        UnaryOp::Neg => g * constant(y, -1.0),
        UnaryOp::Sqrt => g / (y * constant(y, 2.0)),
        UnaryOp::Exp => g * y,
        UnaryOp::Exp2 => g * y * constant(y, LN_2),
        UnaryOp::Ln => g / &x,
        UnaryOp::Log2 => g / (&x * constant(y, LN_2)),
        UnaryOp::Log10 => g / (&x * constant(y, LN_10)),
        UnaryOp::Sin => g * x.cos(),
        UnaryOp::Cos => g * x.sin() * constant(y, -1.0),
        UnaryOp::Tan => g * (y * y + one),
        UnaryOp::Tanh => g * (one - y * y),
        UnaryOp::Asin => g / (one - &x * &x).sqrt(),
        UnaryOp::Acos => g / (one - &x * &x).sqrt() * constant(y, -1.0),
        UnaryOp::Atan => g / (&x * &x + one),
        UnaryOp::Sinh => g * x.cosh(),
        UnaryOp::Cosh => g * x.sinh(),
        UnaryOp::Asinh => g / (&x * &x + one).sqrt(),
        UnaryOp::Acosh => g / (&x * &x - one).sqrt(),
        UnaryOp::Atanh => g / (one - &x * &x),
        UnaryOp::Cbrt => g / (y * y * constant(y, 3.0)),
        UnaryOp::Erf | UnaryOp::Erfc => {
            let sign = if u == UnaryOp::Erf { 1.0 } else { -1.0 };
            g * (&x * &x * constant(y, -1.0)).exp() * constant(y, sign * 2.0 / PI.sqrt())
        }
        UnaryOp::Ln1p => g / (x + one),
        UnaryOp::ExpM1 => g * (y + one),
        UnaryOp::Abs => {
            let zero = constant(y, 0.0);
            g * (x.gt(&zero).cast::<T>() - x.lt(&zero).cast::<T>())
        }
        UnaryOp::Lgamma | UnaryOp::Tgamma => {
            return Err(unsupported(
                &y.node,
                &format!("{u:?}").to_lowercase(),
                "its derivative needs digamma, which lazycl does not have",
            ))
        }
        UnaryOp::Floor | UnaryOp::Ceil | UnaryOp::Round | UnaryOp::Trunc | UnaryOp::Signum => {
            return Ok(None)
        }
        // (A real operand's real part is itself; the other parts take complex operands,
        // which `rules::pull` refuses before this.)
        UnaryOp::Conj | UnaryOp::Re => g,
        UnaryOp::Im | UnaryOp::Arg | UnaryOp::NormSqr => return Ok(None),
        // (Casts are pulled back before the dispatch on type; `!` has no float operand.)
        UnaryOp::Cast | UnaryOp::Not => return Ok(None),
    };
    Ok(Some(d.node))
}

/// The cotangents of `a` and `b` through `y = a op b`, each summed back to its shape.
pub(super) fn binary<T: Float>(
    op: BinaryOp,
    a: &NodeRef,
    b: &NodeRef,
    y: &Array<T>,
    g: Array<T>,
    wanted: &[bool],
) -> Result<Vec<Contribution>> {
    let (ga, gb) = partials(op, &operand(a), &operand(b), y, g)?;
    let mut out = Vec::new();
    for (slot, (n, d)) in [(a, ga), (b, gb)].into_iter().enumerate() {
        if let (Some(d), true, true) = (d, wanted[slot], n.dtype.is_float()) {
            out.push((slot, unbroadcast(d, &n.shape).node));
        }
    }
    Ok(out)
}

/// The cotangent of `a` through `a op s` or `s op a` with a host scalar `s` (a constant).
pub(super) fn with_scalar<T: Float>(
    op: BinaryOp,
    a: &NodeRef,
    s: &InlineScalar,
    y: &Array<T>,
    g: Array<T>,
) -> Result<Vec<Contribution>> {
    let scalar = Node::new(
        a.ctx.clone(),
        s.dtype,
        Default::default(),
        State::Lazy(Op::Scalar(s.bits)),
    );
    let (x, s_t) = (operand::<T>(a), operand::<T>(&scalar));
    let d = match s.side {
        Side::Right => partials(op, &x, &s_t, y, g)?.0,
        Side::Left => partials(op, &s_t, &x, y, g)?.1,
    };
    Ok(d.map(|d| vec![(0, unbroadcast(d, &a.shape).node)])
        .unwrap_or_default())
}

/// The partial cotangents `(g ∂y/∂a, g ∂y/∂b)` of `y = a op b` (in `y`'s shape), `None`
/// for an operand nothing flows to (the integer exponent of `powi`: an operand of another
/// type is converted to `T` first).
type Partials<T> = (Option<Array<T>>, Option<Array<T>>);

fn partials<T: Float>(
    op: BinaryOp,
    a: &Array<T>,
    b: &Array<T>,
    y: &Array<T>,
    g: Array<T>,
) -> Result<Partials<T>> {
    let c = |v: f64| constant(y, v);
    let half_on_ties = |chosen: Array<bool>, tie: Array<bool>| chosen.cast::<T>() + tie.cast::<T>() * c(0.5);
    Ok(match op {
        BinaryOp::Add => (Some(g.clone()), Some(g)),
        BinaryOp::Sub => (Some(g.clone()), Some(g * c(-1.0))),
        BinaryOp::Mul => (Some(&g * b), Some(g * a)),
        BinaryOp::Div => (Some(&g / b), Some(g * y / b * c(-1.0))),
        BinaryOp::Rem => (Some(g.clone()), Some(g * (a / b).trunc() * c(-1.0))),
        BinaryOp::Min | BinaryOp::Max => {
            let (a_wins, b_wins) = if op == BinaryOp::Min {
                (a.lt(b), b.lt(a))
            } else {
                (a.gt(b), b.gt(a))
            };
            (
                Some(&g * half_on_ties(a_wins, a.eq(b))),
                Some(g * half_on_ties(b_wins, a.eq(b))),
            )
        }
        BinaryOp::Pow => {
            let da = &g * b * a.powf(b - c(1.0));
            // (0 where the base is 0: the limit the frameworks take for `0^b`.)
            let db = a.eq(c(0.0)).select(c(0.0), g * y * a.ln());
            (Some(da), Some(db))
        }
        BinaryOp::PowI => (Some(g * b * a.powf(b - c(1.0))), None),
        BinaryOp::Atan2 => {
            let r = a * a + b * b;
            (Some(&g * b / &r), Some(g * a / r * c(-1.0)))
        }
        BinaryOp::Hypot => (Some(&g * a / y), Some(g * b / y)),
        BinaryOp::BitAnd
        | BinaryOp::BitOr
        | BinaryOp::BitXor
        | BinaryOp::Lt
        | BinaryOp::Le
        | BinaryOp::Gt
        | BinaryOp::Ge
        | BinaryOp::Eq
        | BinaryOp::Ne
        | BinaryOp::Complex => (None, None),
    })
}

/// The cotangents of the operands of a ternary operation that are floats.
pub(super) fn ternary<T: Float>(op: TernaryOp, [a, b, c]: [&NodeRef; 3], g: Array<T>) -> Vec<Contribution> {
    let zero = constant(&g, 0.0);
    let parts: [Option<Array<T>>; 3] = match op {
        TernaryOp::Select => {
            let mask = Array::<bool>::from_node(a.clone());
            [None, Some(mask.select(&g, &zero)), Some(mask.select(&zero, &g))]
        }
        TernaryOp::MulAdd => [
            Some(&g * operand::<T>(b)),
            Some(&g * operand::<T>(a)),
            Some(g.clone()),
        ],
        TernaryOp::Clamp => {
            let (x, lo, hi) = (operand::<T>(a), operand::<T>(b), operand::<T>(c));
            let inside = x.ge(&lo).cast::<T>() * x.le(&hi).cast::<T>();
            [
                Some(&g * inside),
                Some(&g * x.lt(&lo).cast::<T>()),
                Some(&g * x.gt(&hi).cast::<T>()),
            ]
        }
    };
    [a, b, c]
        .into_iter()
        .zip(parts)
        .enumerate()
        .filter_map(|(slot, (n, d))| {
            d.filter(|_| n.dtype.is_float())
                .map(|d| (slot, unbroadcast(d, &n.shape).node))
        })
        .collect()
}
