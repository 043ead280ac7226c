use lazycl::prelude::*;

#[kernel]
fn k(y: &mut [f32]) {
    'outer: for i in 0..4 {
        for j in 0..4 {
            if j == i {
                break 'inner;
            }
            continue 'outer;
        }
    }
    let v = 'block: {
        1.0
    };
    y[0] = v;
}

fn main() {}
