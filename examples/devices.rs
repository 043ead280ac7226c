//! Prints every OpenCL platform and device lazycl can see.

use clap::Parser;

/// Prints every OpenCL platform and device lazycl can see (`LAZYCL_DEVICE` picks one of
/// them for the other examples).
#[derive(Parser)]
struct Cli {}

fn main() {
    let Cli {} = Cli::parse();
    match lazycl::devices() {
        Ok(list) => print!("{}", lazycl::device_table(&list)),
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(1);
        }
    }
}
