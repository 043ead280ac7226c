//! Every expression construct of the `#[kernel]` subset, for every scalar type it applies
//! to, run on the device and compared element by element with the same Rust code run on
//! the host, on seeded random inputs (with edge values mixed in) of several sizes.
//!
//! Each `suite!` is one kernel computing many expressions per element (one program build
//! per suite keeps the test fast). An entry is `{ kernel expr }` or, where Rust's debug
//! build would panic on overflow, `{ kernel expr } => { host expr with wrapping_* }`.

use lazycl::prelude::*;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// Sizes every suite runs at: empty, one, odd, and a few work-groups' worth.
const SIZES: [usize; 4] = [0, 1, 7, 1001];

trait Gen: Element {
    fn gen(rng: &mut StdRng, i: usize) -> Self;
    fn close(self, other: Self) -> bool {
        self == other
    }
}

macro_rules! gen_int {
    ($($t:ty),*) => {$(
        impl Gen for $t {
            fn gen(rng: &mut StdRng, i: usize) -> Self {
                match i % 16 {
                    0 => 0,
                    1 => (0 as $t).wrapping_sub(1),
                    2 => <$t>::MIN,
                    3 => <$t>::MAX,
                    4 => 1,
                    5 | 6 => rng.gen_range(0..20) as $t,
                    7 => (rng.gen_range(0..20) as $t).wrapping_neg(),
                    _ => rng.gen(),
                }
            }
        }
    )*};
}
gen_int!(i32, u32, i64, u64);

macro_rules! gen_float {
    ($($t:ident: $tol:expr),*) => {$(
        impl Gen for $t {
            fn gen(rng: &mut StdRng, i: usize) -> Self {
                match i % 32 {
                    0 => 0.0,
                    1 => -0.0,
                    2 => $t::NAN,
                    3 => $t::INFINITY,
                    4 => $t::NEG_INFINITY,
                    5 => 1e30,
                    6 => 0.5,
                    7 => -2.5,
                    8..=15 => rng.gen_range(-1.0..1.0),
                    _ => rng.gen_range(-100.0..100.0),
                }
            }
            fn close(self, other: Self) -> bool {
                if self.is_nan() || other.is_nan() {
                    return self.is_nan() && other.is_nan();
                }
                if self == other {
                    return true;
                }
                let scale = self.abs().max(other.abs()).max(1.0);
                (self - other).abs() <= $tol * scale
            }
        }
    )*};
}
gen_float!(f32: 2e-5, f64: 1e-12);

impl Gen for bool {
    fn gen(rng: &mut StdRng, _: usize) -> Self {
        rng.gen()
    }
}

fn context() -> Context {
    Context::new().expect("an OpenCL device (PoCL is enough)")
}

/// Binds and launches a suite's kernel over `len` work-items.
type Launcher<A, B, R> = dyn Fn(&Context, usize, &Array<A>, &Array<B>, &mut Array<R>) -> lazycl::Result<()>;

/// Runs a suite's kernel on inputs of every size and compares with the host function.
fn check<A: Gen, B: Gen, R: Gen>(
    name: &str,
    seed: u64,
    host: fn(A, B) -> Vec<R>,
    launch: &Launcher<A, B, R>,
) {
    let ctx = context();
    let mut rng = StdRng::seed_from_u64(seed);
    let per = host(A::gen(&mut rng, 9), B::gen(&mut rng, 9)).len();
    for len in SIZES {
        let a: Vec<A> = (0..len).map(|i| A::gen(&mut rng, i)).collect();
        // Offset so that both operands are not the same edge value at once.
        let b: Vec<B> = (0..len).map(|i| B::gen(&mut rng, i + 5)).collect();
        let aa = ctx.from_slice(&a).unwrap();
        let ba = ctx.from_slice(&b).unwrap();
        let mut out = ctx.zeros::<R>([len * per]).unwrap();
        launch(&ctx, len, &aa, &ba, &mut out).unwrap();
        let got = out.to_vec().unwrap();
        for i in 0..len {
            let want = host(a[i], b[i]);
            for (k, w) in want.iter().enumerate() {
                let g = got[i * per + k];
                assert!(
                    g.close(*w),
                    "{name}: expression #{k} at element {i} of {len}: inputs ({:?}, {:?}): device {g:?}, host {w:?}",
                    a[i],
                    b[i]
                );
            }
        }
    }
}

macro_rules! pick {
    ({$($k:tt)*}) => {{ $($k)* }};
    ({$($k:tt)*} {$($h:tt)*}) => {{ $($h)* }};
}

/// `suite!(name, seed, |x: T, y: U| -> R, [ {expr} (=> {host expr})?, ... ])`
macro_rules! suite {
    ($name:ident, $seed:expr, |$x:ident: $T:ident, $y:ident: $U:ident| -> $R:ident,
     [$( { $($k:tt)* } $(=> { $($h:tt)* })? ),* $(,)?]) => {
        mod $name {
            use super::*;

            #[kernel]
            fn ops(a: &[$T], b: &[$U], out: &mut [$R]) {
                let i = global_id(0);
                if i < a.len() {
                    let $x = a[i];
                    let $y = b[i];
                    let per = out.len() / a.len();
                    let mut slot = i * per;
                    $( out[slot] = { $($k)* }; slot += 1; )*
                }
            }

            #[allow(unused_variables, unused_mut, clippy::all)]
            fn host($x: $T, $y: $U) -> Vec<$R> {
                vec![$( pick!({$($k)*} $({$($h)*})?) ),*]
            }

            #[test]
            fn device_matches_host() {
                check::<$T, $U, $R>(stringify!($name), $seed, host, &|ctx, len, a, b, out| {
                    ops::bind(ctx)?.global([len]).launch(a, b, out)
                });
            }
        }
    };
}

macro_rules! float_suite {
    ($name:ident, $T:ident, $seed:expr) => {
        suite!($name, $seed, |x: $T, y: $T| -> $T, [
            { x + y }, { x - y }, { x * y }, { x / y }, { x % y }, { -x }, { -(x * 2.0) + 1.0 },
            { x.sqrt() }, { x.cbrt() }, { x.exp() }, { x.exp2() }, { x.ln() }, { x.log2() }, { x.log10() },
            { x.sin() }, { x.cos() }, { x.tan() }, { x.sinh() }, { x.cosh() }, { x.tanh() },
            { x.asin() }, { x.acos() }, { x.atan() }, { y.atan2(x) },
            { x.abs() }, { x.min(y) }, { x.max(y) }, { x.powf(y) }, { x.powi(3) }, { x.powi(-2) },
            { x.floor() }, { x.ceil() }, { x.round() }, { x.trunc() },
            { x.mul_add(y, 2.0) }, { x.clamp(-1.5, 2.5) }, { x.signum() }, { x.hypot(y) }, { x.copysign(y) },
            { $T::sqrt(x) + $T::max(x, 0.5) },
            { x * $T::consts::PI + std::$T::consts::E - core::$T::consts::FRAC_PI_4 * $T::consts::TAU }
                => { x * std::$T::consts::PI + std::$T::consts::E - core::$T::consts::FRAC_PI_4 * std::$T::consts::TAU },
            { $T::MAX.min(x) + $T::EPSILON - $T::MIN_POSITIVE },
            { if x < $T::INFINITY && x > $T::NEG_INFINITY { x } else { $T::NAN } },
            { if x.is_nan() { 1.0 } else if x.is_infinite() { 2.0 } else if x.is_finite() { 3.0 } else { 4.0 } },
            { ((x * 1e6) as i32) as $T }, { (x as u32) as $T }, { (x * 1e12) as i64 as $T }, { (x as u64) as $T },
            { (x as usize) as $T }, { (x as f32) as $T }, { (x as f64) as $T },
            { (x < y) as i32 as $T + ((x <= y) as i32 as $T) * 2.0 + ((x > y) as i32 as $T) * 4.0
              + ((x >= y) as i32 as $T) * 8.0 + ((x == y) as i32 as $T) * 16.0 + ((x != y) as i32 as $T) * 32.0 },
            { if x > y { x - y } else { y - x } },
            { if x > 0.0 && y > 0.0 || x.is_nan() { 1.0 } else if !(x < y) { 2.0 } else { 3.0 } },
            { let mut s = 0.0; let mut j = 0; while j < 5 { s += x * j as $T; j += 1; } s },
            { let mut s = x; for j in 0..4 { s = s * 0.5 + j as $T; } s },
            { let mut s = 1.0; loop { s *= 2.0; if s > 100.0 { break; } } s + x },
            { let mut s = 0.0; for j in (1..20).step_by(3) { if j == 7 { continue; } s += j as $T; } s * y },
            { let z: $T = x * 2.0; let w = { let q = z + 1.0; q * q }; w - z },
            { let mut z = x; z += y; z -= 1.0; z *= 0.5; z /= 3.0; z %= 7.0; z },
            { let big = if x > 0.0 { let t = x * x; t + 1.0 } else { -1.0 }; big },
            { let z: $T; if x > y { z = x; } else { z = y; } z },
            // Shadowing, and names that are OpenCL C keywords or builtins.
            { let x = x * 2.0; let float = x + 1.0; let min = float.min(3.0); let x = min as i32; x as $T },
        ]);
    };
}

float_suite!(f32_ops, f32, 1);
float_suite!(f64_ops, f64, 2);

macro_rules! int_suite {
    ($name:ident, $T:ident, $seed:expr) => {
        suite!($name, $seed, |x: $T, y: $T| -> $T, [
            { x + y } => { x.wrapping_add(y) },
            { x - y } => { x.wrapping_sub(y) },
            { x * y } => { x.wrapping_mul(y) },
            { x / y } => { if y == 0 { 0 } else { x.wrapping_div(y) } },
            { x % y } => { if y == 0 { 0 } else { x.wrapping_rem(y) } },
            { x / 7 }, { x % 7 },
            { x & y }, { x | y }, { x ^ y }, { !x },
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
            { (x as i32) as $T }, { (x as u32) as $T }, { (x as i64) as $T }, { (x as u64) as $T },
            { (x as usize) as $T }, { (x as f32) as $T }, { (x as f64) as $T },
            { $T::MAX - (x & 1) }, { $T::MIN | (y & 1) },
            { let mut s: $T = 0; for j in 0..(y & 15) { s = s.wrapping_add(x >> j); } s },
            { let mut s = x; let mut c = 0; while s != 0 && c < 100 { s /= 3; c += 1; } c as $T },
            { let mut z = x; z += y; z -= 7; z *= 3; z /= 5; z %= 11; z &= y; z |= 1; z ^= x; z <<= 2; z >>= 1; z }
                => { let mut z = x.wrapping_add(y).wrapping_sub(7).wrapping_mul(3) / 5 % 11;
                     z &= y; z |= 1; z ^= x; z <<= 2; z >>= 1; z },
            { let mut n = 0; for j in (0..32).step_by(5) { if j % 2 == 0 { continue; } n += j; } n as $T + x / 1000 },
            { let mut c: $T = 0; loop { c += 1; if c >= (x & 3) { break; } } c },
            { let mut s: $T = 0; for j in 0..=(y & 7) { if j == 3 { continue; } s = s.wrapping_add(x.wrapping_mul(j)); } s },
            { let mut s: $T = 0; for j in ((y & 3)..=(y & 3) + 20).step_by(3) { s = s.wrapping_add(j); } s },
            { let mut c: $T = 0; for _j in ($T::MAX - 2)..=$T::MAX { c += 1; } for _j in ($T::MAX - 9..=$T::MAX).step_by(4) { c += 10; } c },
            { let mut c: $T = 0; for _j in 5..=4 { c += 1; } for _j in 4..=4 { c += 2; } c },
            { let mut c: $T = 0;
              'outer: for i in 0..6 { for j in 0..6 { if j > i { continue 'outer; } if i + j > 7 { break 'outer; } c += 1; } }
              c + x / 3 },
            { let mut n: $T = 0; let mut k = 0;
              'w: while k < 10 { k += 1; let mut m = 0;
                  'l: loop { m += 1; if m > k { break 'l; } if m == 3 { continue 'w; } n += 1; } }
              n ^ y },
            { let v = if x > y { let t = x / 2; t + y / 2 } else { { y / 4 } }; v },
            { match x & 15 { 0 => 100, 1 | 2 => 200, 3..=5 => y & 255, v @ 6..9 if v != 7 => v * 2, $T::MAX => 1, _ => 7 } },
            { let mut c: $T = 0; match y % 3 { 0 => { c += 1; } 1 => c = x & 7, _ => {} } c },
            { match x > y { true => 1, false => 2 } },
        ]);
    };
}

int_suite!(i32_ops, i32, 3);
int_suite!(u32_ops, u32, 4);
int_suite!(i64_ops, i64, 5);
int_suite!(u64_ops, u64, 6);

macro_rules! signed_suite {
    ($name:ident, $T:ident, $seed:expr) => {
        suite!($name, $seed, |x: $T, y: $T| -> $T, [
            { -x } => { x.wrapping_neg() },
            { x.abs() } => { x.wrapping_abs() },
            { x / -1 } => { x.wrapping_div(-1) },
            { x % -1 } => { x.wrapping_rem(-1) },
            { -7 / (y | 1) } => { (-7 as $T).wrapping_div(y | 1) },
            { -7 % (y | 1) } => { (-7 as $T).wrapping_rem(y | 1) },
            { x >> 1 },
            { $T::MIN / -1 } => { $T::MIN.wrapping_div(-1) },
            { x.clamp(-100, 100) },
            { x.pow(2) - 1 } => { x.wrapping_pow(2).wrapping_sub(1) },
            { match x { $T::MIN..=-1 => 10, 0 => 20, _ => 30 } },
            { match x { $T::MIN..=-1000 => 1, -999..=999 => 2, _ => 3 } },
            { let mut c = 0; for j in -3..3 { c += j * x; } c } => { (-3..3).fold(0 as $T, |c, j| c.wrapping_add(x.wrapping_mul(j))) },
        ]);
    };
}

signed_suite!(i32_signed, i32, 7);
signed_suite!(i64_signed, i64, 8);

suite!(bool_ops, 9, |x: bool, y: bool| -> bool, [
    { x && y }, { x || y }, { !x }, { x ^ y }, { x & y }, { x | y }, { x == y }, { x != y },
    { x < y }, { x >= y }, { if x { y } else { !y } },
    { (x as i32 + y as i32) == 1 }, { (x as u64) > (y as u64) },
    { let mut z = x; z &= y; z |= !x; z ^= true; z },
    { let z: bool; if x { z = true; } else { z = false; } z },
]);

suite!(mixed_f32_i32, 10, |x: f32, y: i32| -> f32, [
    { x * y as f32 }, { x.powi(y & 7) }, { (y as f32).sqrt() }, { (x as i32 ^ y) as f32 },
    { (x as i64 as f32) + (y as u32 as f32) }, { let k = y as usize % 5; x * k as f32 },
]);

suite!(mixed_u64_u32, 11, |x: u64, y: u32| -> u64, [
    { (x as usize / (y as usize + 1)) as u64 }, { x >> y } => { x.wrapping_shr(y) }, { x << (y & 63) },
    { (y as u64).pow(2) }, { x.wrapping_mul(y as u64) },
    { (x as u32 as u64) + (y as i32 as i64 as u64) } => { (x as u32 as u64).wrapping_add(y as i32 as i64 as u64) },
    { (x as f64) as u64 }, { let z = (y as usize).min(3); (z * 2) as u64 },
]);

suite!(mixed_f64_i64, 12, |x: f64, y: i64| -> f64, [
    { x * y as f64 }, { x.powi((y & 7) as i32) }, { (y as f64).abs().sqrt() }, { (x as f32) as f64 },
    { ((x as i64).wrapping_add(y)) as f64 }, { x.max(y as f64) },
]);

suite!(usize_ops, 13, |x: u64, y: u64| -> u64, [
    { (x as usize + y as usize) as u64 } => { (x as usize).wrapping_add(y as usize) as u64 },
    { (x as usize - y as usize) as u64 } => { (x as usize).wrapping_sub(y as usize) as u64 },
    { (x as usize * 3) as u64 } => { (x as usize).wrapping_mul(3) as u64 },
    { (x as usize / y as usize) as u64 } => { if y == 0 { 0 } else { x / y } },
    { (x as usize % 10) as u64 },
    { (x as usize).max(y as usize).min(usize::MAX - 1) as u64 },
    { ((x as usize) >> 60 | (y as usize) << 3) as u64 } => { ((x as usize) >> 60 | (y as usize).wrapping_shl(3)) as u64 },
    { let mut s = 0usize; for i in 0..(y as usize % 7) { s += i; } s as u64 },
    { usize::MAX as u64 - (x & 1) },
    { (x as usize == y as usize || (x as usize) < 5) as u64 },
]);
