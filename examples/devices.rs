//! Prints every OpenCL platform and device lazycl can see.

use clap::Parser;

/// Prints every OpenCL platform and device lazycl can see (`LAZYCL_DEVICE` picks one of
/// them for the other examples).
#[derive(Parser)]
struct Cli {
    /// Also list each device's OpenCL extensions, or only those whose name contains this
    /// text (e.g. `--extensions command_buffer`).
    #[arg(long, value_name = "TEXT", num_args = 0..=1, default_missing_value = "")]
    extensions: Option<String>,
}

fn main() {
    let cli = Cli::parse();
    match lazycl::devices() {
        Ok(list) => {
            print!("{}", lazycl::device_table(&list));
            if let Some(filter) = &cli.extensions {
                for d in &list {
                    let shown: Vec<&str> = d
                        .extensions
                        .iter()
                        .map(String::as_str)
                        .filter(|e| e.contains(filter.as_str()))
                        .collect();
                    println!(
                        "{}:{} {}: {}",
                        d.platform_index,
                        d.device_index,
                        d.name,
                        if shown.is_empty() {
                            "(none)".to_string()
                        } else {
                            shown.join(" ")
                        }
                    );
                }
            }
        }
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(1);
        }
    }
}
