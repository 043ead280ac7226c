//! A real signal's transform through one of half its length ([`FftReal`]): after the
//! stages of a forward pass, each vector's `Z_0 .. Z_(m-1)` in local memory become `X_0
//! ..= X_m` ([`split`]); before the stages of an inverse pass, `X_0 ..= X_m` become the
//! `Z_k` whose inverse transform is the samples, two to a point ([`join`]). A work-item
//! takes the pair `k`, `m - k` of a vector at once (reads both, writes both), so no other
//! touches them in between.
//!
//! [`FftReal`]: crate::graph::FftReal

use super::butterfly::{mul, TWIDDLE};
use super::{Sizes, PAD};
use crate::codegen::writer::Src;
use crate::dtype::DType;
use crate::plan::FftPlan;

/// `X_k = (Z_k + conj(Z_(m-k))) / 2 - (i/2) w^k (Z_k - conj(Z_(m-k)))`, `w = e^(-2πi /
/// 2m)`, for `k ≤ m` (`Z_m` is `Z_0`): `X_0` and `X_m` are the real `Re Z_0 ± Im Z_0`.
pub(super) fn split(f: &FftPlan, s: &Sizes, src: &mut Src) {
    let t = f.dtype.cl_name();
    let half = match f.dtype.real() {
        DType::F32 => "0.5f",
        _ => "0.5",
    };
    let ends = [
        format!("const {t} z = buf[{PAD}(base)];"),
        format!("buf[{PAD}(base)] = ({t})(z.x + z.y, 0);"),
        format!("buf[{PAD}(base + {}u)] = ({t})(z.x - z.y, 0);", f.spec.radix),
    ];
    let pair = |a: &str, b: &str| {
        [
            format!("const {t} ev = ({t})(({a}.x + {b}.x) * {half}, ({a}.y - {b}.y) * {half});"),
            format!("const {t} od = ({t})(({a}.y + {b}.y) * {half}, ({b}.x - {a}.x) * {half});"),
            format!("const {t} y = ev + {};", mul(t, "wk", "od")),
        ]
    };
    pairs(f, s, &ends, pair, src);
}

/// The inverse of [`split`], times `2m`: `Z_k = (X_k + conj(X_(m-k))) + i w^(-k) (X_k -
/// conj(X_(m-k)))`, the imaginary parts of `X_0` and `X_m` ignored.
pub(super) fn join(f: &FftPlan, s: &Sizes, src: &mut Src) {
    let t = f.dtype.cl_name();
    let r = f.dtype.real().cl_name();
    let ends = [
        format!(
            "const {r} x0 = buf[{PAD}(base)].x, xm = buf[{PAD}(base + {}u)].x;",
            f.spec.radix
        ),
        format!("buf[{PAD}(base)] = ({t})(x0 + xm, x0 - xm);"),
    ];
    let pair = |a: &str, b: &str| {
        [
            format!("const {t} ev = ({t})({a}.x + {b}.x, {a}.y - {b}.y);"),
            format!(
                "const {t} od = {};",
                mul(t, "wk", &format!("(({t})({a}.x - {b}.x, {a}.y + {b}.y))"))
            ),
            format!("const {t} y = ev + ({t})(-od.y, od.x);"),
        ]
    };
    pairs(f, s, &ends, pair, src);
}

/// The walk over each vector's pairs `k`, `m - k` (`k ≤ m / 2`): `ends` for `k = 0` (`X_0`
/// and `X_m`), else the lines `pair(a, b)` that make `y` from `a` at `k` and `b` at `m - k`
/// and the twiddle `wk` of `k` (in the pass's direction), stored at `k`, then the same
/// from `b`, `a` and `m - k`, stored at `m - k` (where that is another point). The group
/// waits at the end.
fn pairs<const N: usize>(
    f: &FftPlan,
    s: &Sizes,
    ends: &[String],
    pair: impl Fn(&str, &str) -> [String; N],
    src: &mut Src,
) {
    let t = f.dtype.cl_name();
    let m = f.spec.radix;
    let per = m / 2 + 1;
    src.open(format_args!(
        "for (uint e = lid; e < {}u; e += {}u) {{",
        s.vectors * per,
        s.group
    ));
    src.line(format_args!("const uint vv = e / {per}u, k = e % {per}u;"));
    src.line(format_args!("const uint base = vv * {}u;", s.row));
    src.open("if (k == 0) {");
    for line in ends {
        src.line(line);
    }
    src.close();
    src.open("else {");
    src.line(format_args!(
        "const {t} a = buf[{PAD}(base + k)], b = buf[{PAD}(base + {m}u - k)];"
    ));
    // Point `k` from `(a, b)`; point `m - k` from `(b, a)`, unless it is `k` itself.
    let mirror = format!("{m}u - k");
    for (at, (x, y)) in [("k", ("a", "b")), (mirror.as_str(), ("b", "a"))] {
        match at == "k" {
            true => src.open("{"),
            false => src.open(format_args!("if (k != {at}) {{")),
        }
        src.line(format_args!("const {t} wk = {TWIDDLE}({at}, {}u);", 2 * m));
        for line in pair(x, y) {
            src.line(line);
        }
        src.line(format_args!("buf[{PAD}(base + {at})] = y;"));
        src.close();
    }
    src.close();
    src.close();
    src.line("barrier(CLK_LOCAL_MEM_FENCE);");
}
