//! Building OpenCL programs from source, with the build log and source in the error.

use opencl3::program::Program;

use crate::context::ContextInner;
use crate::error::{ClResultExt, Error, Result};
use crate::stats::Counters;

/// Build options for a program on this context's device: OpenCL C 1.2, which NVIDIA and
/// PoCL both compile; correctly rounded `float` division and `sqrt` if the context asked
/// for them (`ContextBuilder::correctly_rounded_div_sqrt`); for generated programs also
/// `-w`, since compiler warnings about generated code (index variables it may not use)
/// would only be noise on the user's terminal.
pub(crate) fn build_options(ctx: &ContextInner, generated: bool) -> &'static str {
    match (ctx.precise_div_sqrt, generated) {
        (false, false) => "-cl-std=CL1.2",
        (false, true) => "-cl-std=CL1.2 -w",
        (true, false) => "-cl-std=CL1.2 -cl-fp32-correctly-rounded-divide-sqrt",
        (true, true) => "-cl-std=CL1.2 -cl-fp32-correctly-rounded-divide-sqrt -w",
    }
}

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

/// A built program for `source`: loaded from the disk cache when a valid binary exists
/// (counted as `programs_loaded`), else compiled (`programs_built`) and stored there.
pub(crate) fn obtain(ctx: &ContextInner, name: &str, source: &str, options: &str) -> Result<Program> {
    let start = std::time::Instant::now();
    let program = obtain_untimed(ctx, name, source, options);
    Counters::add(&ctx.counters.program_time_us, start.elapsed().as_micros() as u64);
    program
}

fn obtain_untimed(ctx: &ContextInner, name: &str, source: &str, options: &str) -> Result<Program> {
    if let Some(binary) = ctx.disk_cache.load(source, options) {
        if let Some(program) = from_binary(ctx, &binary, options) {
            if ctx.show_kernels {
                eprintln!("lazycl: loaded {name} from the program cache:\n{source}");
            }
            Counters::add(&ctx.counters.programs_loaded, 1);
            return Ok(program);
        }
    }
    let program = build_from_source(ctx, name, source, options)?;
    if let Ok(binaries) = program.get_binaries() {
        if let Some(binary) = binaries.first().filter(|b| !b.is_empty()) {
            ctx.disk_cache.store(source, options, binary);
        }
    }
    Ok(program)
}

/// A program from a device binary, or `None` if the driver rejects it (then the caller
/// rebuilds from source and replaces the file).
fn from_binary(ctx: &ContextInner, binary: &[u8], options: &str) -> Option<Program> {
    // SAFETY: the device belongs to the context; the binary is only read.
    let mut program =
        unsafe { Program::create_from_binary(&ctx.cl_context, &[ctx.device.id], &[binary]) }.ok()?;
    program.build(&[ctx.device.id], options).ok()?;
    Some(program)
}
