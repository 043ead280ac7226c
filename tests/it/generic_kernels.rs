//! Generic `#[kernel]`s: one OpenCL C program per element type the bound admits (or the
//! attribute lists), written at compile time; `name::bind::<T>(&ctx)` picks one, and each
//! instance runs against a host computation of its type.

use crate::common::{ctx, rng, Random};
use lazycl::prelude::*;

#[kernel]
fn axpy<T: Float>(a: T, x: &[T], y: &mut [T]) {
    let i = global_id(0);
    if i < y.len() {
        y[i] = a * x[i] + y[i];
    }
}

/// Integers and floats alike: the constants and casts of the instance's type.
#[kernel]
fn clip_count<T: Numeric>(hi: T, x: &[T], y: &mut [T]) {
    let i = global_id(0);
    if i < y.len() {
        let v = if x[i] > hi { hi } else { x[i] };
        y[i] = (T::MAX - T::MAX) + v + (i % 3) as T;
    }
}

#[kernel(types(i32, u64))]
fn iota<T>(start: T, y: &mut [T]) {
    let i = global_id(0);
    if i < y.len() {
        y[i] = start + i as T;
    }
}

/// Two type parameters: every combination is an instance.
#[kernel]
fn scale_to<T: Float, U: Integer>(s: T, x: &[T], y: &mut [U]) {
    let i = global_id(0);
    if i < y.len() {
        y[i] = (x[i] * s) as U;
    }
}

/// The host result of `axpy`.
fn host_axpy<T: Copy + std::ops::Mul<Output = T> + std::ops::Add<Output = T>>(
    a: T,
    x: &[T],
    y: &[T],
) -> Vec<T> {
    x.iter().zip(y).map(|(&x, &y)| a * x + y).collect()
}

#[test]
fn each_float_instance_matches_the_host() {
    let c = ctx();
    let mut r = rng(71);
    for n in [0usize, 1, 7, 1000] {
        let xs = f32::random_vec(&mut r, n);
        let ys = f32::random_vec(&mut r, n);
        let x = c.from_slice(&xs).unwrap();
        let mut y = c.from_slice(&ys).unwrap();
        axpy::bind::<f32>(&c)
            .unwrap()
            .global(n.max(1))
            .launch(1.5, &x, &mut y)
            .unwrap();
        assert_eq!(y.to_vec().unwrap(), host_axpy(1.5f32, &xs, &ys), "f32, n = {n}");

        let xd = f64::random_vec(&mut r, n);
        let yd = f64::random_vec(&mut r, n);
        let x = c.from_slice(&xd).unwrap();
        let mut y = c.from_slice(&yd).unwrap();
        axpy::bind::<f64>(&c)
            .unwrap()
            .global(n.max(1))
            .launch(-0.25, &x, &mut y)
            .unwrap();
        assert_eq!(y.to_vec().unwrap(), host_axpy(-0.25f64, &xd, &yd), "f64, n = {n}");
    }
}

#[test]
fn each_instance_is_a_program_of_its_own_written_at_compile_time() {
    assert!(axpy::source::<f64>().contains("double"));
    assert!(!axpy::source::<f32>().contains("double"));
    assert!(axpy::source::<f32>().contains("float"));
    let c = ctx();
    let built = |f: &dyn Fn()| {
        let before = c.stats();
        f();
        let d = c.stats() - before;
        d.programs_built + d.programs_loaded
    };
    // A fresh context: each instance's program once, then bound from the context's cache.
    assert_eq!(built(&|| drop(axpy::bind::<f32>(&c).unwrap())), 1);
    assert_eq!(built(&|| drop(axpy::bind::<f64>(&c).unwrap())), 1);
    assert_eq!(built(&|| drop(axpy::bind::<f32>(&c).unwrap())), 0);
}

#[test]
fn integer_and_float_instances_take_their_types_constants_and_casts() {
    let c = ctx();
    let n = 10usize;
    macro_rules! check {
        ($t:ty, $hi:expr) => {{
            let xs: Vec<$t> = (0..n).map(|i| (i * 2) as $t).collect();
            let x = c.from_slice(&xs).unwrap();
            let mut y = c.zeros::<$t>([n]).unwrap();
            clip_count::bind::<$t>(&c)
                .unwrap()
                .global(n)
                .launch($hi, &x, &mut y)
                .unwrap();
            let want: Vec<$t> = xs
                .iter()
                .enumerate()
                .map(|(i, &v)| (if v > $hi { $hi } else { v }) + (i % 3) as $t)
                .collect();
            assert_eq!(y.to_vec().unwrap(), want, stringify!($t));
        }};
    }
    check!(i32, 9);
    check!(u32, 9);
    check!(i64, 9);
    check!(u64, 9);
    check!(f32, 9.5);
    check!(f64, 9.5);

    let mut a = c.zeros::<i32>([5]).unwrap();
    iota::bind::<i32>(&c)
        .unwrap()
        .global(5)
        .launch(-2, &mut a)
        .unwrap();
    assert_eq!(a.to_vec().unwrap(), vec![-2, -1, 0, 1, 2]);
    let mut b = c.zeros::<u64>([3]).unwrap();
    iota::bind::<u64>(&c)
        .unwrap()
        .global(3)
        .launch(1 << 40, &mut b)
        .unwrap();
    assert_eq!(b.to_vec().unwrap(), vec![1 << 40, (1 << 40) + 1, (1 << 40) + 2]);
}

#[test]
fn two_type_parameters_give_every_combination() {
    let c = ctx();
    let xs = [0.5f64, 1.25, -3.75, 100.0];
    let x = c.from_slice(&xs).unwrap();
    let mut y = c.zeros::<i64>([4]).unwrap();
    scale_to::bind::<f64, i64>(&c)
        .unwrap()
        .global(4)
        .launch(2.0, &x, &mut y)
        .unwrap();
    assert_eq!(y.to_vec().unwrap(), vec![1, 2, -7, 200]);
    let xf = c.from_slice(&[1.5f32, 2.5]).unwrap();
    let mut z = c.zeros::<u32>([2]).unwrap();
    scale_to::bind::<f32, u32>(&c)
        .unwrap()
        .global(2)
        .launch(4.0, &xf, &mut z)
        .unwrap();
    assert_eq!(z.to_vec().unwrap(), vec![6, 10]);
}
