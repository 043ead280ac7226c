//! Building OpenCL programs from source, with the build log and source in the error.

use opencl3::program::Program;

use crate::context::ContextInner;
use crate::error::{ClResultExt, Error, Result};
use crate::stats::Counters;

/// Options for `#[kernel]` programs: OpenCL C 1.2, which NVIDIA and PoCL both compile.
pub(crate) const BUILD_OPTIONS: &str = "-cl-std=CL1.2";

/// Options for generated programs: also silence compiler warnings, which would only be
/// noise on the user's terminal (generated code declares index variables it may not use).
pub(crate) const GENERATED_BUILD_OPTIONS: &str = "-cl-std=CL1.2 -w";

/// Compiles `source` for the context's device. `name` labels errors and the
/// `LAZYCL_SHOW_KERNELS` printout.
pub(crate) fn build_from_source(
    ctx: &ContextInner,
    name: &str,
    source: &str,
    options: &str,
) -> Result<Program> {
    if ctx.show_kernels {
        eprintln!("lazycl: building {name}:\n{source}");
    }
    let mut program = Program::create_from_source(&ctx.cl_context, source).cl("clCreateProgramWithSource")?;
    Counters::add(&ctx.counters.programs_built, 1);
    if let Err(e) = program.build(&[ctx.device.id], options) {
        let log = program.get_build_log(ctx.device.id).unwrap_or_else(|_| {
            format!(
                "(no build log; clBuildProgram returned {})",
                cl3::error_codes::error_text(e.0)
            )
        });
        return Err(Error::Build {
            name: name.to_string(),
            log,
            source_code: source.to_string(),
        });
    }
    Ok(program)
}
