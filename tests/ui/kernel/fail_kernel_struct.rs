use lazycl::prelude::*;

#[derive(Clone, Copy, KernelStruct)]
struct NoRepr {
    a: f32,
}

#[derive(Clone, Copy, KernelStruct)]
#[repr(C)]
struct BadFields {
    flag: bool,
    n: usize,
    xs: [f32; 2],
}

#[derive(Clone, Copy, KernelStruct)]
#[repr(C)]
struct Params {
    dt: f32,
    steps: u32,
}

#[kernel]
fn k(p: Params, x: &mut [f32]) {
    let i = global_id(0);
    x[i] = p.speed;
    p = p;
    x[i] = p;
}

#[device_fn]
fn helper(p: Params) -> f32 {
    p.dt
}

fn main() {}
