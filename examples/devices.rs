//! Prints every OpenCL platform and device lazycl can see.

fn main() {
    match lazycl::devices() {
        Ok(list) => print!("{}", lazycl::device_table(&list)),
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(1);
        }
    }
}
