//! Every recorded operation, on every dtype it applies to, against the same Rust
//! expression evaluated per element on the host (random inputs, odd sizes).

use crate::common::{ctx, rng, Random};
use lazycl::{Array, Context};

const N: usize = 1001;

fn close32(g: f32, h: f32) -> bool {
    (g.is_nan() && h.is_nan()) || g == h || (g - h).abs() <= 2e-6 * h.abs().max(1.0)
}
fn close64(g: f64, h: f64) -> bool {
    (g.is_nan() && h.is_nan()) || g == h || (g - h).abs() <= 1e-13 * h.abs().max(1.0)
}

macro_rules! check_float {
    ($close:ident, $name:expr, $dev:expr, $host:expr) => {{
        let got = $dev.to_vec().unwrap();
        let want: Vec<_> = $host;
        assert_eq!(got.len(), want.len(), "{}", $name);
        for (i, (g, h)) in got.iter().zip(&want).enumerate() {
            assert!($close(*g, *h), "{} element {i}: device {g:?} host {h:?}", $name);
        }
    }};
}

macro_rules! float_suite {
    ($test:ident, $t:ty, $close:ident, $seed:expr) => {
        #[test]
        fn $test() {
            let ctx = ctx();
            if <$t as lazycl::Element>::DTYPE == lazycl::DType::F64 && !ctx.device().fp64 {
                return;
            }
            let mut r = rng($seed);
            let xs: Vec<$t> = <$t>::random_vec(&mut r, N);
            let ys: Vec<$t> = <$t>::random_vec(&mut r, N)
                .into_iter()
                .map(|v| v / 7.0)
                .collect();
            let us: Vec<$t> = xs.iter().map(|v| v / 100.0).collect(); // in [-1, 1]
            let x = ctx.from_slice(&xs).unwrap();
            let y = ctx.from_slice(&ys).unwrap();
            let u = ctx.from_slice(&us).unwrap();
            let a: $t = 1.75;
            let un = |f: fn($t) -> $t, v: &[$t]| v.iter().map(|&e| f(e)).collect::<Vec<$t>>();
            let bin = |f: fn($t, $t) -> $t| {
                xs.iter()
                    .zip(&ys)
                    .map(|(&p, &q)| f(p, q))
                    .collect::<Vec<$t>>()
            };
            // Record everything, evaluate in one flush (one kernel), then check each.
            let cases: Vec<(&str, Array<$t>, Vec<$t>)> = vec![
                ("add", &x + &y, bin(|p, q| p + q)),
                ("sub", &x - &y, bin(|p, q| p - q)),
                ("mul", &x * &y, bin(|p, q| p * q)),
                ("div", &x / &y, bin(|p, q| p / q)),
                ("rem", &x % &y, bin(|p, q| p % q)),
                ("add_scalar", &x + a, un(|p| p + 1.75, &xs)),
                ("scalar_sub", a - &x, un(|p| 1.75 - p, &xs)),
                ("scalar_div", a / &y, ys.iter().map(|&q| 1.75 / q).collect()),
                ("scalar_rem", &x % a, un(|p| p % 1.75, &xs)),
                ("neg", -&x, un(|p| -p, &xs)),
                ("sqrt", x.sqrt(), un(<$t>::sqrt, &xs)),
                ("exp", u.exp(), un(<$t>::exp, &us)),
                ("exp2", u.exp2(), un(<$t>::exp2, &us)),
                ("ln", x.ln(), un(<$t>::ln, &xs)),
                ("log2", x.log2(), un(<$t>::log2, &xs)),
                ("log10", x.log10(), un(<$t>::log10, &xs)),
                ("sin", x.sin(), un(<$t>::sin, &xs)),
                ("cos", x.cos(), un(<$t>::cos, &xs)),
                ("tan", u.tan(), un(<$t>::tan, &us)),
                ("tanh", u.tanh(), un(<$t>::tanh, &us)),
                ("asin", u.asin(), un(<$t>::asin, &us)),
                ("acos", u.acos(), un(<$t>::acos, &us)),
                ("atan", x.atan(), un(<$t>::atan, &xs)),
                ("atan2", x.atan2(&y), bin(<$t>::atan2)),
                ("hypot", x.hypot(&y), bin(<$t>::hypot)),
                ("abs", x.abs(), un(<$t>::abs, &xs)),
                ("min", x.min(&y), bin(<$t>::min)),
                ("max", x.max(0.0), un(|p| p.max(0.0), &xs)),
                (
                    "powf",
                    x.abs().powf(&u),
                    xs.iter().zip(&us).map(|(&p, &q)| p.abs().powf(q)).collect(),
                ),
                ("powi", u.powi(3), un(|p| p.powi(3), &us)),
                ("floor", x.floor(), un(<$t>::floor, &xs)),
                ("ceil", x.ceil(), un(<$t>::ceil, &xs)),
                ("round", x.round(), un(<$t>::round, &xs)),
                ("trunc", x.trunc(), un(<$t>::trunc, &xs)),
                ("signum", x.signum(), un(<$t>::signum, &xs)),
                (
                    "mul_add",
                    x.mul_add(&y, a),
                    xs.iter()
                        .zip(&ys)
                        .map(|(&p, &q)| p.mul_add(q, 1.75))
                        .collect(),
                ),
                (
                    "clamp",
                    x.clamp(-10.0, 20.0),
                    un(|p| p.clamp(-10.0, 20.0), &xs),
                ),
                (
                    "select",
                    x.gt(&y).select(&x, 0.5),
                    bin(|p, q| if p > q { p } else { 0.5 }),
                ),
            ];
            let all: Vec<&Array<$t>> = cases.iter().map(|c| &c.1).collect();
            let before = ctx.stats();
            lazycl::eval(&all).unwrap();
            assert_eq!(
                (ctx.stats() - before).kernels_launched,
                1,
                "one flush, one kernel"
            );
            for (name, dev, host) in cases {
                check_float!($close, name, dev, host);
            }
            // Comparisons give masks.
            type Cmp = fn(&$t, &$t) -> bool;
            let cmps: Vec<(&str, Array<bool>, Cmp)> = vec![
                ("lt", x.lt(&y), |p, q| p < q),
                ("le", x.le(&y), |p, q| p <= q),
                ("gt", x.gt(&y), |p, q| p > q),
                ("ge", x.ge(&y), |p, q| p >= q),
                ("eq", x.eq(&x), |p, q| p == q),
                ("ne", x.ne(&y), |p, q| p != q),
            ];
            for (name, dev, f) in cmps {
                let got = dev.to_vec().unwrap();
                let want: Vec<bool> = if name == "eq" {
                    xs.iter().map(|p| f(p, p)).collect()
                } else {
                    xs.iter().zip(&ys).map(|(p, q)| f(p, q)).collect()
                };
                assert_eq!(got, want, "{name}");
            }
            // NaN handling matches Rust.
            let specials: Vec<$t> = vec![<$t>::NAN, 1.0, -0.0, 0.0, <$t>::INFINITY, -2.5];
            let s = ctx.from_slice(&specials).unwrap();
            check_float!(
                $close,
                "nan-min",
                s.min(1.5),
                specials.iter().map(|p| p.min(1.5)).collect()
            );
            check_float!(
                $close,
                "nan-max",
                s.max(-1.5),
                specials.iter().map(|p| p.max(-1.5)).collect()
            );
            check_float!(
                $close,
                "nan-signum",
                s.signum(),
                specials.iter().map(|p| p.signum()).collect()
            );
            check_float!(
                $close,
                "nan-clamp",
                s.clamp(-1.0, 1.0),
                specials.iter().map(|p| p.clamp(-1.0, 1.0)).collect()
            );
        }
    };
}

float_suite!(f32_ops_match_rust, f32, close32, 100);
float_suite!(f64_ops_match_rust, f64, close64, 101);

macro_rules! int_suite {
    ($test:ident, $t:ty, $seed:expr, $signed:expr) => {
        #[test]
        fn $test() {
            let ctx = ctx();
            let mut r = rng($seed);
            let mut xs: Vec<$t> = <$t>::random_vec(&mut r, N);
            let mut ys: Vec<$t> = <$t>::random_vec(&mut r, N);
            // Small divisors (and zeros, and -1 next to MIN) so / and % are exercised.
            for i in 0..N {
                if i % 3 == 0 {
                    ys[i] = (ys[i] % 17) as $t;
                }
            }
            ys[0] = 0;
            xs[1] = <$t>::MIN;
            ys[1] = (0 as $t).wrapping_sub(1);
            let small: Vec<$t> = xs.iter().map(|v| v % 50).collect();
            let x = ctx.from_slice(&xs).unwrap();
            let y = ctx.from_slice(&ys).unwrap();
            let sm = ctx.from_slice(&small).unwrap();
            let bin = |f: fn($t, $t) -> $t| {
                xs.iter()
                    .zip(&ys)
                    .map(|(&p, &q)| f(p, q))
                    .collect::<Vec<$t>>()
            };
            let un = |f: fn($t) -> $t| xs.iter().map(|&p| f(p)).collect::<Vec<$t>>();
            #[allow(unused_comparisons)]
            let cases: Vec<(&str, Array<$t>, Vec<$t>)> = vec![
                ("add", &x + &y, bin(<$t>::wrapping_add)),
                ("sub", &x - &y, bin(<$t>::wrapping_sub)),
                ("mul", &x * &y, bin(<$t>::wrapping_mul)),
                (
                    "div",
                    &x / &y,
                    bin(|p, q| if q == 0 { 0 } else { p.wrapping_div(q) }),
                ),
                (
                    "rem",
                    &x % &y,
                    bin(|p, q| if q == 0 { 0 } else { p.wrapping_rem(q) }),
                ),
                ("scalar_div_zero", &x / (0 as $t), un(|_| 0)),
                (
                    "scalar_lhs",
                    (3 as $t) - &x,
                    un(|p| (3 as $t).wrapping_sub(p)),
                ),
                ("min", x.min(&y), bin(<$t>::min)),
                ("max", x.max(&y), bin(<$t>::max)),
                (
                    "abs",
                    x.abs(),
                    un(|p| if p < 0 { (0 as $t).wrapping_sub(p) } else { p }),
                ),
                (
                    "signum",
                    x.signum(),
                    un(|p| {
                        if p > 0 {
                            1
                        } else if p < 0 {
                            (0 as $t).wrapping_sub(1)
                        } else {
                            0
                        }
                    }),
                ),
                (
                    "pow",
                    sm.pow(3),
                    small.iter().map(|&p| p.wrapping_pow(3)).collect(),
                ),
                ("and", &x & &y, bin(|p, q| p & q)),
                ("or", &x | &y, bin(|p, q| p | q)),
                ("xor", &x ^ 0x0f0f, un(|p| p ^ 0x0f0f)),
                ("not", !&x, un(|p| !p)),
                ("clamp", x.clamp(10, 1000), un(|p| p.clamp(10, 1000))),
                (
                    "select",
                    x.lt(&y).select(&x, &y),
                    bin(|p, q| if p < q { p } else { q }),
                ),
            ];
            let all: Vec<&Array<$t>> = cases.iter().map(|c| &c.1).collect();
            lazycl::eval(&all).unwrap();
            for (name, dev, host) in cases {
                assert_eq!(dev.to_vec().unwrap(), host, "{name} on {}", stringify!($t));
            }
            if $signed {
                let neg = ctx.from_slice(&xs).unwrap();
                let got = (&neg * (0 as $t).wrapping_sub(1)).to_vec().unwrap();
                assert_eq!(got, un(|p| p.wrapping_mul((0 as $t).wrapping_sub(1))));
            }
        }
    };
}

int_suite!(i32_ops_match_rust, i32, 200, true);
int_suite!(u32_ops_match_rust, u32, 201, false);
int_suite!(i64_ops_match_rust, i64, 202, true);
int_suite!(u64_ops_match_rust, u64, 203, false);

#[test]
fn signed_negation() {
    let ctx = ctx();
    let v = ctx.from_slice(&[i32::MIN, -5, 0, 7, i32::MAX]).unwrap();
    assert_eq!((-&v).to_vec().unwrap(), vec![i32::MIN, 5, 0, -7, -i32::MAX]);
    let w = ctx.from_slice(&[i64::MIN, -5, 0, 7]).unwrap();
    assert_eq!((-w).to_vec().unwrap(), vec![i64::MIN, 5, 0, -7]);
}

#[test]
fn bool_masks_combine() {
    let ctx = ctx();
    let mut r = rng(300);
    let a = bool::random_vec(&mut r, 99);
    let b = bool::random_vec(&mut r, 99);
    let (da, db) = (ctx.from_slice(&a).unwrap(), ctx.from_slice(&b).unwrap());
    let and: Vec<bool> = a.iter().zip(&b).map(|(p, q)| *p && *q).collect();
    let or: Vec<bool> = a.iter().zip(&b).map(|(p, q)| *p || *q).collect();
    let xor: Vec<bool> = a.iter().zip(&b).map(|(p, q)| p ^ q).collect();
    let not: Vec<bool> = a.iter().map(|p| !p).collect();
    assert_eq!((&da & &db).to_vec().unwrap(), and);
    assert_eq!((&da | &db).to_vec().unwrap(), or);
    assert_eq!((&da ^ &db).to_vec().unwrap(), xor);
    assert_eq!((!&da).to_vec().unwrap(), not);
    assert_eq!(
        da.eq(&db).to_vec().unwrap(),
        a.iter().zip(&b).map(|(p, q)| p == q).collect::<Vec<_>>()
    );
    assert_eq!((&da & true).to_vec().unwrap(), a);
}

/// Rust `as` for every pair of element types, on values that stress the edges.
#[test]
fn casts_follow_rust_as() {
    let ctx = ctx();
    let fp64 = ctx.device().fp64;
    let floats: Vec<f64> = vec![
        f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
        0.0,
        -0.0,
        0.4,
        -0.6,
        2.5,
        -2.5,
        3e9,
        -3e9,
        5e9,
        1e20,
        -1e20,
        2147483647.0,
        -2147483648.0,
        4294967295.0,
        1.5e19,
        1e308,
    ];
    let ints: Vec<i64> = vec![
        0,
        1,
        -1,
        i64::MIN,
        i64::MAX,
        i32::MIN as i64,
        i32::MAX as i64,
        u32::MAX as i64,
        123456789,
        -987654321012,
    ];
    check_casts_from(
        &ctx,
        &floats.iter().map(|&v| v as f32).collect::<Vec<f32>>(),
        fp64,
    );
    if fp64 {
        check_casts_from(&ctx, &floats, fp64);
    }
    check_casts_from(&ctx, &ints.iter().map(|&v| v as i32).collect::<Vec<i32>>(), fp64);
    check_casts_from(&ctx, &ints.iter().map(|&v| v as u32).collect::<Vec<u32>>(), fp64);
    check_casts_from(&ctx, &ints, fp64);
    check_casts_from(&ctx, &ints.iter().map(|&v| v as u64).collect::<Vec<u64>>(), fp64);
    let bools = ctx.from_slice(&[true, false, true]).unwrap();
    assert_eq!(bools.cast::<i32>().to_vec().unwrap(), vec![1, 0, 1]);
    assert_eq!(bools.cast::<f32>().to_vec().unwrap(), vec![1.0, 0.0, 1.0]);
}

trait AsAll: lazycl::Element {
    fn as_f32(self) -> f32;
    fn as_f64(self) -> f64;
    fn as_i32(self) -> i32;
    fn as_u32(self) -> u32;
    fn as_i64(self) -> i64;
    fn as_u64(self) -> u64;
    fn as_bool(self) -> bool;
}
macro_rules! as_all {
    ($($t:ty),*) => {$(
        impl AsAll for $t {
            fn as_f32(self) -> f32 { self as f32 }
            fn as_f64(self) -> f64 { self as f64 }
            fn as_i32(self) -> i32 { self as i32 }
            fn as_u32(self) -> u32 { self as u32 }
            fn as_i64(self) -> i64 { self as i64 }
            fn as_u64(self) -> u64 { self as u64 }
            #[allow(clippy::float_cmp)]
            fn as_bool(self) -> bool { self != (0 as $t) }
        }
    )*};
}
as_all!(f32, f64, i32, u32, i64, u64);

fn check_casts_from<T: AsAll>(ctx: &Context, data: &[T], fp64: bool) {
    let a = ctx.from_slice(data).unwrap();
    let name = T::DTYPE;
    let eq32 = |g: &[f32], h: Vec<f32>| {
        g.iter()
            .zip(&h)
            .all(|(a, b)| a == b || (a.is_nan() && b.is_nan()))
    };
    assert!(
        eq32(
            &a.cast::<f32>().to_vec().unwrap(),
            data.iter().map(|v| v.as_f32()).collect()
        ),
        "{name} as f32"
    );
    assert_eq!(
        a.cast::<i32>().to_vec().unwrap(),
        data.iter().map(|v| v.as_i32()).collect::<Vec<_>>(),
        "{name} as i32"
    );
    assert_eq!(
        a.cast::<u32>().to_vec().unwrap(),
        data.iter().map(|v| v.as_u32()).collect::<Vec<_>>(),
        "{name} as u32"
    );
    assert_eq!(
        a.cast::<i64>().to_vec().unwrap(),
        data.iter().map(|v| v.as_i64()).collect::<Vec<_>>(),
        "{name} as i64"
    );
    assert_eq!(
        a.cast::<u64>().to_vec().unwrap(),
        data.iter().map(|v| v.as_u64()).collect::<Vec<_>>(),
        "{name} as u64"
    );
    assert_eq!(
        a.cast::<bool>().to_vec().unwrap(),
        data.iter().map(|v| v.as_bool()).collect::<Vec<_>>(),
        "{name} as bool"
    );
    if fp64 {
        let g = a.cast::<f64>().to_vec().unwrap();
        let h: Vec<f64> = data.iter().map(|v| v.as_f64()).collect();
        assert!(
            g.iter()
                .zip(&h)
                .all(|(a, b)| a == b || (a.is_nan() && b.is_nan())),
            "{name} as f64: {g:?} vs {h:?}"
        );
    }
}
