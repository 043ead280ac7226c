use lazycl::prelude::*;

#[kernel]
fn k<T>(y: &mut [T])
where
    T: Float,
{
    y[0] = y[0];
}

fn main() {}
