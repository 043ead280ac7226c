//! The arithmetic of a transform pass: twiddles (a helper function of the program) and
//! the butterflies of its stages, radix 2, 3, 4, 5 and 7, as lines of OpenCL C over named
//! complex values (`float2`/`double2`, real part in `.x`).

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
