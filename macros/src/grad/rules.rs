//! The derivative of each float method, in one place: given the receiver `x`, the
//! arguments and their tangents, the method's tangent. The subgradients are the runtime's
//! (`abs` has 0 at 0, `min`/`max`/`clamp` split ties evenly, `floor`, `round` and
//! `signum` pass nothing), so that an `expr!` and the same arithmetic on arrays have the
//! same gradient.

use syn::parse_quote;

use super::tangent::{int_as, literal, Tangent};
use super::Why;
use crate::ir::Scalar;

/// The tangent of `x.name(args)`, given `dx`, the tangent of `x`, and `d`, those of
/// the arguments.
pub(super) fn method(
    x: &syn::Expr,
    name: &str,
    args: &[&syn::Expr],
    dx: Tangent,
    d: Vec<Tangent>,
) -> Result<Tangent, Why> {
    if dx.is_zero() && d.iter().all(Tangent::is_zero) {
        return Ok(Tangent::Zero);
    }
    // The type of the values (every float method keeps its receiver's type).
    let t = dx.ty().or(d.iter().find_map(Tangent::ty)).unwrap_or(Scalar::F32);
    let c = |v: f64| literal(v, t);
    let (one, zero, half) = (c(1.0), c(0.0), c(0.5));
    let x: syn::Expr = parse_quote!((#x));
    let a = |k: usize| -> syn::Expr {
        let e = args[k];
        parse_quote!((#e))
    };
    let da = |k: usize| d.get(k).cloned().unwrap_or(Tangent::Zero);
    Ok(match name {
        "sqrt" => dx.times(parse_quote!(0.5 / #x.sqrt())),
        "cbrt" => dx.over(parse_quote!(3.0 * #x.cbrt() * #x.cbrt())),
        "exp" | "exp_m1" => dx.times(parse_quote!(#x.exp())),
        "exp2" => dx.times(parse_quote!(#x.exp2() * 0.6931471805599453)),
        "ln" => dx.over(x),
        "log2" => dx.over(parse_quote!(#x * 0.6931471805599453)),
        "log10" => dx.over(parse_quote!(#x * 2.302585092994046)),
        "ln_1p" => dx.over(parse_quote!(1.0 + #x)),
        "sin" => dx.times(parse_quote!(#x.cos())),
        "cos" => dx.times(parse_quote!(-#x.sin())),
        "tan" => dx.over(parse_quote!(#x.cos() * #x.cos())),
        "sinh" => dx.times(parse_quote!(#x.cosh())),
        "cosh" => dx.times(parse_quote!(#x.sinh())),
        "tanh" => dx.times(parse_quote!(1.0 - #x.tanh() * #x.tanh())),
        "asin" => dx.over(parse_quote!((1.0 - #x * #x).sqrt())),
        "acos" => dx.over(parse_quote!(-(1.0 - #x * #x).sqrt())),
        "atan" => dx.over(parse_quote!(1.0 + #x * #x)),
        "asinh" => dx.over(parse_quote!((#x * #x + 1.0).sqrt())),
        "acosh" => dx.over(parse_quote!((#x * #x - 1.0).sqrt())),
        "atanh" => dx.over(parse_quote!(1.0 - #x * #x)),
        // 2/√π · e^(-x²).
        "erf" => dx.times(parse_quote!(1.1283791670955126 * (-(#x * #x)).exp())),
        "erfc" => dx.times(parse_quote!(-1.1283791670955126 * (-(#x * #x)).exp())),
        "abs" => dx.times(parse_quote!(if #x > #zero { #one } else if #x < #zero { -#one } else { #zero })),
        "floor" | "ceil" | "round" | "trunc" | "signum" => Tangent::Zero,
        "to_f32" => dx.converted(Scalar::F32, |e| parse_quote!((#e).to_f32())),
        "to_f64" => dx.converted(Scalar::F64, |e| parse_quote!((#e).to_f64())),
        "powi" => {
            let (n, nf) = (a(0), int_as(&a(0), t));
            dx.times(parse_quote!(#nf * #x.powi(#n - 1)))
        }
        "powf" => {
            let y = a(0);
            // (0 where the base is 0: the limit the frameworks take for `0^y`.)
            let dy = parse_quote!(if #x == #zero { #zero } else { #x.powf(#y) * #x.ln() });
            dx.times(parse_quote!(#y * #x.powf(#y - #one)))
                .add(da(0).times(dy))
        }
        "atan2" => {
            let y = a(0);
            let r: syn::Expr = parse_quote!((#x * #x + #y * #y));
            dx.times(parse_quote!(#y / #r))
                .add(da(0).times(parse_quote!(-#x / #r)))
        }
        "hypot" => {
            let y = a(0);
            let h: syn::Expr = parse_quote!(#x.hypot(#y));
            dx.times(parse_quote!(#x / #h))
                .add(da(0).times(parse_quote!(#y / #h)))
        }
        "min" | "max" => {
            let y = a(0);
            let (xw, yw): (syn::Expr, syn::Expr) = match name {
                "min" => (parse_quote!(#x < #y), parse_quote!(#y < #x)),
                _ => (parse_quote!(#x > #y), parse_quote!(#y > #x)),
            };
            let share = |wins: syn::Expr| -> syn::Expr {
                parse_quote!(if #wins { #one } else if #x == #y { #half } else { #zero })
            };
            dx.times(share(xw)).add(da(0).times(share(yw)))
        }
        "copysign" => {
            let y = a(0);
            dx.times(parse_quote!(if #x == #zero { #zero } else { #x.copysign(#y) / #x }))
        }
        "mul_add" => dx.times(a(0)).add(da(0).times(x.clone())).add(da(1)),
        "clamp" => {
            let (lo, hi) = (a(0), a(1));
            let inside = parse_quote!(if #x >= #lo && #x <= #hi { #one } else { #zero });
            let below = parse_quote!(if #x < #lo { #one } else { #zero });
            let above = parse_quote!(if #x > #hi { #one } else { #zero });
            dx.times(inside).add(da(0).times(below)).add(da(1).times(above))
        }
        "lgamma" | "tgamma" => {
            return Err(Why::new(format!(
                "`{name}` has no derivative: it needs digamma, which lazycl does not have"
            )))
        }
        _ => return Err(Why::new(format!("the method `{name}` has no derivative rule"))),
    })
}
