//! The arithmetic of a transform pass: twiddles (a helper function of the program) and
//! the butterflies of its stages, radix 2, 3, 4, 5, 7 and 8, as lines of OpenCL C over
//! named complex values (`float2`/`double2`, real part in `.x`).

use crate::dtype::DType;

/// The name of the twiddle function of a program over complex type `d`:
/// `lzc_fft_twiddle(num, den)` is `e^(∓2πi num / den)`.
pub(super) const TWIDDLE: &str = "lzc_fft_twiddle";

/// The definition of [`TWIDDLE`] for complex type `d`, in the direction `inverse` says
/// (`cospi`/`sinpi` of `2 num / den`: exact at the quarter turns, accurate elsewhere).
pub(super) fn twiddle_definition(d: DType, inverse: bool) -> String {
    let (c, r) = (d.cl_name(), d.real().cl_name());
    let sign = if inverse { "" } else { "-" };
    format!(
        "static inline {c} {TWIDDLE}(ulong num, ulong den) {{ \
         const {r} t = ({r})(2 * (num % den)) / ({r})den; \
         return ({c})(cospi(t), {sign}sinpi(t)); }}\n"
    )
}

/// The name of the quarter-turn function: `lzc_fft_turn(v, q)` is `v` turned by `q`
/// quarters of the transform's direction (`(∓i)^q`).
pub(super) const TURN: &str = "lzc_fft_turn";

/// The definition of [`TURN`] for complex type `d`.
pub(super) fn turn_definition(d: DType, inverse: bool) -> String {
    let c = d.cl_name();
    let (first, third) = match inverse {
        false => ("v.y, -v.x", "-v.y, v.x"),
        true => ("-v.y, v.x", "v.y, -v.x"),
    };
    format!(
        "static inline {c} {TURN}({c} v, uint q) {{ \
         return q == 0 ? v : q == 1 ? ({c})({first}) : q == 2 ? -v : ({c})({third}); }}\n"
    )
}

/// The product of complex values `a` and `b` (both names or parenthesized), as text.
pub(super) fn mul(t: &str, a: &str, b: &str) -> String {
    format!("({t})({a}.x * {b}.x - {a}.y * {b}.y, {a}.x * {b}.y + {a}.y * {b}.x)")
}

/// Lines that compute `y{k}` (declared `const`) from `x0 .. x{q-1}`: the `q`-point
/// transform, `y_k = Σ_m x_m w^(m k)`, `w = e^(∓2πi / q)`.
pub(super) fn butterfly(q: u32, inverse: bool, t: &str, real: DType) -> Vec<String> {
    match q {
        2 => vec![
            format!("const {t} y0 = x0 + x1;"),
            format!("const {t} y1 = x0 - x1;"),
        ],
        4 => {
            // `∓i d`: forward turns by -i, inverse by +i.
            let (y1, y3) = if inverse {
                ("-s3.y, s3.x", "s3.y, -s3.x")
            } else {
                ("s3.y, -s3.x", "-s3.y, s3.x")
            };
            vec![
                format!("const {t} s0 = x0 + x2, s1 = x0 - x2, s2 = x1 + x3, s3 = x1 - x3;"),
                format!("const {t} y0 = s0 + s2;"),
                format!("const {t} y2 = s0 - s2;"),
                format!("const {t} y1 = s1 + ({t})({y1});"),
                format!("const {t} y3 = s1 + ({t})({y3});"),
            ]
        }
        8 => {
            // Two 4-point transforms: of `x_k + x_(k+4)` (the even outputs) and of
            // `(x_k - x_(k+4)) w8^k` (the odd ones).
            let rot = |v: &str| match inverse {
                true => format!("({t})(-{v}.y, {v}.x)"),
                false => format!("({t})({v}.y, -{v}.x)"),
            };
            let half = std::f64::consts::FRAC_1_SQRT_2;
            let sign = if inverse { 1.0 } else { -1.0 };
            let w1 = format!("(({t})({}, {}))", literal(half, real), literal(sign * half, real));
            let w3 = format!(
                "(({t})({}, {}))",
                literal(-half, real),
                literal(sign * half, real)
            );
            vec![
                format!("const {t} a0 = x0 + x4, a1 = x1 + x5, a2 = x2 + x6, a3 = x3 + x7;"),
                format!("const {t} b0 = x0 - x4, c1 = x1 - x5, c2 = x2 - x6, c3 = x3 - x7;"),
                format!(
                    "const {t} b1 = {}, b2 = {}, b3 = {};",
                    mul(t, "c1", &w1),
                    rot("c2"),
                    mul(t, "c3", &w3)
                ),
                format!("const {t} p0 = a0 + a2, p1 = a0 - a2, p2 = a1 + a3, p3 = a1 - a3;"),
                format!("const {t} q0 = b0 + b2, q1 = b0 - b2, q2 = b1 + b3, q3 = b1 - b3;"),
                format!("const {t} y0 = p0 + p2, y4 = p0 - p2;"),
                format!("const {t} y2 = p1 + {}, y6 = p1 - {};", rot("p3"), rot("p3")),
                format!("const {t} y1 = q0 + q2, y5 = q0 - q2;"),
                format!("const {t} y3 = q1 + {}, y7 = q1 - {};", rot("q3"), rot("q3")),
            ]
        }
        _ => (0..q)
            .map(|k| {
                let mut terms = vec!["x0".to_string()];
                for m in 1..q {
                    let turn = (m * k) % q;
                    if turn == 0 {
                        terms.push(format!("x{m}"));
                        continue;
                    }
                    let angle = 2.0 * std::f64::consts::PI * f64::from(turn) / f64::from(q);
                    let (c, s) = (angle.cos(), if inverse { angle.sin() } else { -angle.sin() });
                    let w = format!("(({t})({}, {}))", literal(c, real), literal(s, real));
                    terms.push(mul(t, &format!("x{m}"), &w));
                }
                format!("const {t} y{k} = {};", terms.join(" + "))
            })
            .collect(),
    }
}

/// `v` as an OpenCL C literal of type `real` (`f32` gets an `f` suffix), to the last
/// digit of an `f64`.
fn literal(v: f64, real: DType) -> String {
    let text = format!("{v:.17e}");
    match real {
        DType::F32 => format!("{text}f"),
        _ => text,
    }
}
