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

#[kernel]
fn locals(p: Params, x: &mut [f32]) {
    let a = Params { dt: 1.0 };
    let b = Params { dt: 1.0, steps: 2, dt: 3.0 };
    let c = Params { dt: 1, steps: 2 };
    let d = Params { ..p };
    let e = p;
    e.dt = 2.0;
    p.steps = 1;
    x[0] = a.dt + b.dt + c.dt + d.dt + e.dt;
}

#[kernel]
fn tuples(p: (f32, u32), q: (f32, bool), x: &mut [f32]) {
    x[0] = p;
    x[1] = p.2;
}

fn main() {}
