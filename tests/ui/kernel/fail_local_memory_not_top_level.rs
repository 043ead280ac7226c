use lazycl::prelude::*;

#[kernel]
fn k(y: &mut [f32]) {
    if y.len() > 0 {
        let mut tile = Local::<[f32; 64]>::new();
        tile[0] = 1.0;
    }
    let mut bad = Local::<[f32; n]>::new();
}

fn main() {}
