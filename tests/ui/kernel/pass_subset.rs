//! A kernel touching most of the subset compiles, and its source has the expected shape.

use lazycl::prelude::*;

#[device_fn]
fn lerp(a: f32, b: f32, t: f32) -> f32 {
    a + (b - a) * t
}

#[kernel]
fn everything(x: &[f32], ints: &mut [i32], out: &mut [f32], flags: &mut [bool], mut n: u32) {
    let mut tile = Local::<[f32; 32]>::new();
    let counts: Local<[u32; 4]> = Local::new();
    let i = global_id(0);
    if i >= x.len() {
        return;
    }
    tile[local_id(0) % 32] = x[i];
    barrier();
    let v = x[i];
    let mut acc = 0.0;
    for j in 0..4 {
        acc += v.powi(j);
    }
    for j in (0..10u32).step_by(2) {
        n = n.wrapping_add(j);
    }
    let mut k = 0;
    while k < 3 {
        k += 1;
        if k == 2 {
            continue;
        }
    }
    loop {
        break;
    }
    let s = if v > 0.0 { v.sqrt() } else { -v.abs() };
    let c = { let t = v * f32::consts::PI; t.cos() };
    out[i] = lerp(acc, s + c, 0.5).clamp(-1e6, 1e6).max(f32::MIN).mul_add(2.0, 1.0);
    ints[i] = (v as i32).pow(2) >> (k & 31) | ints[i] % 7 ^ !0;
    atomic_add(&mut ints[0], 1);
    let old = atomic_cmpxchg(&mut ints[1], 0, 1);
    flags[i] = old == 0 && v.is_finite() || !flags[i];
    let _ = counts[0] + n + group_id(0) as u32 + num_groups(0) as u32 + global_size(0) as u32 + local_size(0) as u32;
}

fn main() {
    let src = everything::SOURCE;
    assert!(src.contains("__local float tile[32];"));
    assert!(src.contains("float lzc_fn_lerp(float a, float b, float t)"));
    assert!(src.contains("barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);"));
    assert!(!src.contains("double"), "no f64 in an f32 kernel:\n{src}");
}
