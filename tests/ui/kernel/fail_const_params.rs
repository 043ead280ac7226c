use lazycl::prelude::*;

#[kernel]
fn scaled<const S: f32>(x: &mut [f32]) {
    x[0] = x[0] * 2.0;
}

#[device_fn]
fn times<const K: u32>(v: u32) -> u32 {
    v * 2
}

#[kernel]
fn defaulted<const N: usize = 4>(x: &mut [f32]) {
    x[0] = 1.0;
}

#[kernel]
fn wrong_type<const N: usize>(x: &mut [f32]) {
    let n: u32 = N;
    x[0] = n as f32;
}

fn main() {}
