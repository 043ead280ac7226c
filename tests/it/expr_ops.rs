//! Every construct `expr!` accepts, for every element type it applies to, run on the
//! device and compared element by element with the same Rust expression evaluated on the
//! host, on seeded random inputs (edge values mixed in) of sizes 0, 1, 7 and 1001.
//!
//! In a suite, `x` and `y` are arrays and `a` is a scalar (a kernel argument) of `x`'s
//! type. All the expressions of a suite are materialized in one flush (one kernel, one
//! program build). An entry is `{ expr }` or, where Rust's debug build would panic on
//! overflow, `{ expr } => { host expr with wrapping_* }`.

use crate::common::{ctx, rng, Random};
use lazycl::prelude::*;
use rand::rngs::StdRng;

const SIZES: [usize; 4] = [0, 1, 7, 1001];

/// Seeded random values (`common::Random`) with edge values mixed in at every 4th place,
/// and a comparison that allows the device's documented float error.
trait Sample: Random + Element {
    fn edges() -> Vec<Self>;
    fn close(self, other: Self) -> bool {
        self == other
    }
    fn sample(rng: &mut StdRng, len: usize, shift: usize) -> Vec<Self> {
        let edges = Self::edges();
        let mut v = Self::random_vec(rng, len);
        for (i, x) in v
            .iter_mut()
            .enumerate()
            .filter(|(i, _)| (i + shift).is_multiple_of(4))
        {
            *x = edges[(i / 4 + shift) % edges.len()];
        }
        v
    }
}

macro_rules! sample_int {
    ($($t:ident: [$($e:expr),*]);*) => {$(
        impl Sample for $t {
            fn edges() -> Vec<Self> {
                vec![0, 1, 2, 7, 31, 40, $t::MAX, $t::MIN, $t::MAX - 1, $($e),*]
            }
        }
    )*};
}
sample_int!(i32: [-1, -2, -7, -40]; i64: [-1, -3, -64]; u32: [33, 64]; u64: [65, 1 << 40]);

macro_rules! sample_float {
    ($($t:ident: $tol:expr),*) => {$(
        impl Sample for $t {
            fn edges() -> Vec<Self> {
                vec![0.0, -0.0, $t::NAN, $t::INFINITY, $t::NEG_INFINITY, 3e9, -0.5, 0.25, 0.9, -0.75, 1.0, -1.0]
            }
            fn close(self, other: Self) -> bool {
                if self.is_nan() || other.is_nan() {
                    return self.is_nan() && other.is_nan();
                }
                self == other || (self - other).abs() <= $tol * self.abs().max(other.abs()).max(1.0)
            }
        }
    )*};
}
sample_float!(f32: 2e-5, f64: 1e-12);

impl Sample for bool {
    fn edges() -> Vec<Self> {
        vec![true, false]
    }
}

macro_rules! pick {
    ({$($e:tt)*}) => {{ $($e)* }};
    ({$($e:tt)*} {$($h:tt)*}) => {{ $($h)* }};
}

/// `suite!(name, seed, |x: T, y: U, a| -> R, [ {expr} (=> {host expr})?, ... ])`
macro_rules! suite {
    ($name:ident, $seed:expr, |$x:ident: $T:ident, $y:ident: $U:ident, $a:ident| -> $R:ident,
     [$( { $($e:tt)* } $(=> { $($h:tt)* })? ),* $(,)?]) => {
        #[test]
        fn $name() {
            #[allow(unused_variables, unused_parens, clippy::all)]
            fn host($x: $T, $y: $U, $a: $T) -> Vec<$R> {
                vec![$( pick!({$($e)*} $({$($h)*})?) ),*]
            }
            let ctx = ctx();
            let mut rng = rng($seed);
            for len in SIZES {
                let xs: Vec<$T> = Sample::sample(&mut rng, len, 0);
                let ys: Vec<$U> = Sample::sample(&mut rng, len, 3);
                let av: $T = <$T as Sample>::sample(&mut rng, 1, 1)[0];
                let xa = ctx.from_slice(&xs).unwrap();
                let ya = ctx.from_slice(&ys).unwrap();
                #[allow(unused_variables, unused_parens, clippy::all)]
                let outs: Vec<Array<$R>> = {
                    let ($x, $y, $a) = (&xa, &ya, av);
                    vec![$( expr!({ $($e)* }) ),*]
                };
                lazycl::eval(&outs).unwrap();
                for (k, out) in outs.iter().enumerate() {
                    assert_eq!(out.shape(), &[len], "{}: #{k}", stringify!($name));
                    let got = out.to_vec().unwrap();
                    for i in 0..len {
                        let want = host(xs[i], ys[i], av)[k];
                        assert!(
                            got[i].close(want),
                            "{}: expression #{k} at element {i} of {len}: x = {:?}, y = {:?}, a = {:?}: \
                             device {:?}, host {want:?}",
                            stringify!($name), xs[i], ys[i], av, got[i]
                        );
                    }
                }
            }
        }
    };
}

macro_rules! float_suite {
    ($name:ident, $T:ident, $seed:expr) => {
        suite!($name, $seed, |x: $T, y: $T, a| -> $T, [
            { x + y }, { x - y }, { x * y }, { x / y }, { x % y }, { -x }, { -(x * 2.0) + 1.0 },
            { a * x + y }, { (a * x + y).sqrt() }, { x / a - a },
            { x.sqrt() }, { x.cbrt() }, { x.exp() }, { x.exp2() }, { x.ln() }, { x.log2() }, { x.log10() },
            { x.sin() }, { x.cos() }, { x.tan() }, { x.sinh() }, { x.cosh() }, { x.tanh() },
            { x.asin() }, { x.acos() }, { x.atan() }, { y.atan2(x) },
            { x.abs() }, { x.min(y) }, { x.max(y) }, { x.powf(y) }, { x.powi(3) }, { x.powi(-2) },
            { x.floor() }, { x.ceil() }, { x.round() }, { x.trunc() },
            { x.mul_add(y, 2.0) }, { x.mul_add(a, y) }, { x.clamp(-1.5, 2.5) }, { x.signum() },
            { x.hypot(y) }, { x.copysign(y) },
            { $T::sqrt(x) + $T::max(x, 0.5) },
            { x * $T::consts::PI + std::$T::consts::E - core::$T::consts::FRAC_PI_4 }
                => { x * std::$T::consts::PI + std::$T::consts::E - core::$T::consts::FRAC_PI_4 },
            { $T::MAX.min(x) + $T::EPSILON - $T::MIN_POSITIVE },
            { if x < $T::INFINITY && x > $T::NEG_INFINITY { x } else { $T::NAN } },
            { (if x.is_nan() { 1.0 } else if x.is_infinite() { 2.0 } else if x.is_finite() { 3.0 } else { 4.0 }) as $T },
            { ((x * 1e6) as i32) as $T }, { (x as u32) as $T }, { (x * 1e12) as i64 as $T }, { (x as u64) as $T },
            { (x as f32) as $T }, { (x as f64) as $T }, { 2.5f32 as $T * x }, { (3u64 as $T) + x },
            { (x < y) as i32 as $T + ((x <= y) as i32 as $T) * 2.0 + ((x > y) as i32 as $T) * 4.0
              + ((x >= y) as i32 as $T) * 8.0 + ((x == y) as i32 as $T) * 16.0 + ((x != y) as i32 as $T) * 32.0 },
            { if x > y { x - y } else { y - x } },
            { if x > 0.0 && y < 1.0 || x.is_nan() { x } else if !(x < y) { 2.0 } else { 3.0 } },
            { if x > a { a } else { x } },
            { let z: $T = x * 2.0; let w = { let q = z + 1.0; q * q }; w - z },
            { let big = if x > 0.0 { let t = x * x; t + 1.0 } else { -1.0 }; big * y },
            { let t = x * y; let t = t + t; t * 0.25 },
            // Shadowing, and names that are OpenCL C keywords or builtins.
            { let x = x * 2.0; let float = x + 1.0; let min = float.min(3.0); let x = min as i32; x as $T },
            { let _ = y; x },
        ]);
    };
}

float_suite!(f32_ops, f32, 1);
float_suite!(f64_ops, f64, 2);

macro_rules! int_suite {
    ($name:ident, $T:ident, $seed:expr) => {
        suite!($name, $seed, |x: $T, y: $T, a| -> $T, [
            { x + y } => { x.wrapping_add(y) },
            { x - y } => { x.wrapping_sub(y) },
            { x * y } => { x.wrapping_mul(y) },
            { x / y } => { if y == 0 { 0 } else { x.wrapping_div(y) } },
            { x % y } => { if y == 0 { 0 } else { x.wrapping_rem(y) } },
            { a * x + y } => { a.wrapping_mul(x).wrapping_add(y) },
            { x / 7 }, { x % 7 }, { x / a } => { if a == 0 { 0 } else { x.wrapping_div(a) } },
            { x & y }, { x | y }, { x ^ y }, { !x }, { x & a },
            { x << y } => { x.wrapping_shl(y as u32) },
            { x >> y } => { x.wrapping_shr(y as u32) },
            { x << 3 }, { x >> 5u32 }, { x >> (y as u64 & 7) },
            { x.min(y) }, { x.max(y) }, { x.clamp(2, 100) },
            { x.pow(3) } => { x.wrapping_pow(3) },
            { x.pow(y as u32 & 7) } => { x.wrapping_pow(y as u32 & 7) },
            { x.wrapping_add(y) }, { x.wrapping_sub(y) }, { x.wrapping_mul(y) }, { x.wrapping_neg() },
            { (x < y) as $T + ((x <= y) as $T) * 2 + ((x > y) as $T) * 4 + ((x >= y) as $T) * 8
              + ((x == y) as $T) * 16 + ((x != y) as $T) * 32 },
            { if x > y && x != 0 || y == 5 { x } else { y } },
            { if x > a { x & 1 } else if x == a { 2 } else { 3 } },
            { (x as i32) as $T }, { (x as u32) as $T }, { (x as i64) as $T }, { (x as u64) as $T },
            { (x as f32) as $T }, { (x as f64) as $T }, { (x as usize % 10) as $T },
            { $T::MAX - (x & 1) }, { $T::MIN | (y & 1) }, { x / 3 + 7u32 as $T },
            { let v = if x > y { let t = x / 2; t + y / 2 } else { { y / 4 } }; v },
            { let m: $T = x & 255; let n = m * m; n - m },
        ]);
    };
}

int_suite!(i32_ops, i32, 3);
int_suite!(u32_ops, u32, 4);
int_suite!(i64_ops, i64, 5);
int_suite!(u64_ops, u64, 6);

macro_rules! signed_suite {
    ($name:ident, $T:ident, $seed:expr) => {
        suite!($name, $seed, |x: $T, y: $T, a| -> $T, [
            { -x } => { x.wrapping_neg() },
            { x.abs() } => { x.wrapping_abs() },
            { x / -1 } => { x.wrapping_div(-1) },
            { x % -1 } => { x.wrapping_rem(-1) },
            { -7 / (y | 1) } => { (-7 as $T).wrapping_div(y | 1) },
            { -7 % (y | 1) } => { (-7 as $T).wrapping_rem(y | 1) },
            { x >> 1 }, { x.clamp(-100, 100) },
            { x.pow(2) - 1 } => { x.wrapping_pow(2).wrapping_sub(1) },
            { (if x < 0 { -1 } else if x == 0 { 0 } else { 1 }) as $T },
            { (x < -a) as $T } => { (x < a.wrapping_neg()) as $T },
        ]);
    };
}

signed_suite!(i32_signed, i32, 7);
signed_suite!(i64_signed, i64, 8);

suite!(bool_ops, 9, |x: bool, y: bool, a| -> bool, [
    { x && y }, { x || y }, { !x }, { x ^ y }, { x & y }, { x | y }, { x == y }, { x != y },
    { x < y }, { x >= y }, { if x { y } else { !y } }, { x && a }, { x ^ a || y },
    { (x as i32 + y as i32) == 1 }, { (x as u64) > (y as u64) }, { x ^ true }, { let z = x & y; z | !x },
]);

suite!(f32_predicates, 10, |x: f32, y: f32, a| -> bool, [
    { x > 0.0 && y < 1.0 }, { x < y || x.is_nan() }, { !(x >= a) }, { x == y }, { x != x },
    { x.is_finite() && !y.is_infinite() }, { if x > y { x > 0.5 } else { y > 0.5 } },
]);

suite!(i64_predicates, 11, |x: i64, y: i64, a| -> bool, [
    { x > 0 && y < 10 }, { x <= a || x == y }, { (x & 1) == 0 }, { x as f64 > y as f64 },
]);

suite!(mixed_f32_i32, 12, |x: f32, y: i32, a| -> f32, [
    { x * y as f32 }, { x.powi(y & 7) }, { (y as f32).sqrt() }, { (x as i32 ^ y) as f32 },
    { (x as i64 as f32) + (y as u32 as f32) }, { let k = y as usize % 5; x * k as f32 },
    { if y > 0 { x } else { a } }, { (y as f64 * 0.5) as f32 + x },
]);

suite!(mixed_u64_u32, 13, |x: u64, y: u32, a| -> u64, [
    { (x as usize / (y as usize + 1)) as u64 } => { (x as usize / (y as usize).wrapping_add(1).max(0)) as u64 },
    { x >> y } => { x.wrapping_shr(y) }, { x << (y & 63) },
    { (y as u64).pow(2) }, { x.wrapping_mul(y as u64) }, { a + (y & 1) as u64 } => { a.wrapping_add((y & 1) as u64) },
    { (x as u32 as u64) + (y as i32 as i64 as u64) } => { (x as u32 as u64).wrapping_add(y as i32 as i64 as u64) },
    { (x as f64) as u64 },
]);

suite!(mixed_f64_i64, 14, |x: f64, y: i64, a| -> f64, [
    { x * y as f64 }, { x.powi((y & 7) as i32) }, { (y as f64).abs().sqrt() }, { (x as f32) as f64 },
    { ((x as i64).wrapping_add(y)) as f64 }, { x.max(y as f64) }, { x - a },
]);
