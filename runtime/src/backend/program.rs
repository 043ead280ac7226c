//! Building OpenCL programs from source, with the build log and source in the error.

use opencl3::program::Program;

use crate::backend::cl_context::ClContext;
use crate::error::{ClResultExt, Error, Result};
use crate::stats::Counters;

/// Build options for a program on this context's device: OpenCL C 1.2, which NVIDIA and
/// PoCL both compile; correctly rounded `float` division and `sqrt` if the context asked
/// for them (`ContextBuilder::correctly_rounded_div_sqrt`); for generated programs also
/// `-w`, since compiler warnings about generated code (index variables it may not use)
/// would only be noise on the user's terminal.
pub(crate) fn build_options(ctx: &ClContext, generated: bool) -> &'static str {
    match (ctx.precise_div_sqrt, generated) {
        (false, false) => "-cl-std=CL1.2",
        (false, true) => "-cl-std=CL1.2 -w",
        (true, false) => "-cl-std=CL1.2 -cl-fp32-correctly-rounded-divide-sqrt",
        (true, true) => "-cl-std=CL1.2 -cl-fp32-correctly-rounded-divide-sqrt -w",
    }
}

/// Compiles `source` for the context's device, with its identity kernel (see
/// [`obtain`]). `name` labels errors and the `LAZYCL_SHOW_KERNELS` printout.
pub(crate) fn build_from_source(ctx: &ClContext, name: &str, source: &str, options: &str) -> Result<Program> {
    if ctx.show_kernels {
        eprintln!("lazycl: building {name}:\n{source}");
    }
    // After the source, so that the build log's line numbers are the source's.
    let text = format!(
        "{source}\n__kernel void {}(void) {{}}\n",
        ctx.disk_cache.identity(source, options)
    );
    let mut program = Program::create_from_source(&ctx.cl_context, &text).cl("clCreateProgramWithSource")?;
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

/// Where a program came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Origin {
    /// Compiled from its source in this process.
    Source,
    /// Created from a device binary of the disk cache.
    Binary,
}

/// A built program and where it came from.
pub(crate) struct Obtained {
    pub(crate) program: Program,
    pub(crate) origin: Origin,
}

/// A built program for `source` with kernel `name`: loaded from the disk cache when a
/// valid binary exists (counted as `programs_loaded`) and it fits, else compiled
/// (`programs_built`) and stored there.
///
/// Every program is compiled with an empty kernel named by the hash of its full key
/// (source, options, platform, device, driver, lazycl version: `DiskCache::identity`),
/// so a binary says which source it was compiled from. A loaded binary fits when it has
/// that kernel, and a kernel `name` with as many parameters as the source declares. One
/// that does not (a file holding another program's binary under this key, whatever its
/// header says) is deleted, counted as `programs_rejected`, and replaced by a build from
/// source; a loaded binary the driver later refuses at launch goes the same way
/// ([`rebuild`]).
pub(crate) fn obtain(ctx: &ClContext, name: &str, source: &str, options: &'static str) -> Result<Obtained> {
    let start = std::time::Instant::now();
    let program = obtain_untimed(ctx, name, source, options);
    Counters::add(&ctx.counters.program_time_us, start.elapsed().as_micros() as u64);
    program
}

fn obtain_untimed(ctx: &ClContext, name: &str, source: &str, options: &'static str) -> Result<Obtained> {
    if let Some(binary) = ctx.disk_cache.load(source, options) {
        if let Some(program) = from_binary(ctx, &binary, options) {
            if fits(&program, name, source, &ctx.disk_cache.identity(source, options)) {
                if ctx.show_kernels {
                    eprintln!("lazycl: loaded {name} from the program cache:\n{source}");
                }
                Counters::add(&ctx.counters.programs_loaded, 1);
                return Ok(Obtained {
                    program,
                    origin: Origin::Binary,
                });
            }
            return rebuild(ctx, name, source, options).map(|program| Obtained {
                program,
                origin: Origin::Source,
            });
        }
    }
    let program = build_and_store(ctx, name, source, options)?;
    Ok(Obtained {
        program,
        origin: Origin::Source,
    })
}

/// Deletes the cached binary of `source` (it loaded, but does not fit or was refused at
/// launch), counts it as `programs_rejected`, and builds the program from source.
pub(crate) fn rebuild(ctx: &ClContext, name: &str, source: &str, options: &'static str) -> Result<Program> {
    ctx.disk_cache.remove(source, options);
    Counters::add(&ctx.counters.programs_rejected, 1);
    if ctx.show_kernels {
        eprintln!("lazycl: the cached binary of {name} does not fit its source; rebuilding");
    }
    build_and_store(ctx, name, source, options)
}

fn build_and_store(ctx: &ClContext, name: &str, source: &str, options: &str) -> Result<Program> {
    let program = build_from_source(ctx, name, source, options)?;
    if let Ok(binaries) = program.get_binaries() {
        if let Some(binary) = binaries.first().filter(|b| !b.is_empty()) {
            ctx.disk_cache.store(source, options, binary);
        }
    }
    Ok(program)
}

/// Whether `program` was compiled from `source` (it has the kernel `identity`) and has a
/// kernel `name` with the parameter count `source` declares (when the declaration can be
/// read; the kernel must exist either way).
fn fits(program: &Program, name: &str, source: &str, identity: &str) -> bool {
    if opencl3::kernel::Kernel::create(program, identity).is_err() {
        return false;
    }
    let Ok(kernel) = opencl3::kernel::Kernel::create(program, name) else {
        return false;
    };
    match (declared_params(source, name), kernel.num_args()) {
        (Some(want), Ok(have)) => want == have,
        (None, Ok(_)) => true,
        (_, Err(_)) => false,
    }
}

/// The number of parameters of `__kernel void name(...)` in `source`: the commas at the
/// top level of its parenthesis, plus one (zero for `()` or `(void)`).
fn declared_params(source: &str, name: &str) -> Option<u32> {
    let mut from = 0;
    let open = loop {
        let at = from + source[from..].find(name)?;
        let before = source[..at].trim_end();
        let after = source[at + name.len()..].trim_start();
        if before.ends_with("void") && after.starts_with('(') && source[..at].contains("kernel") {
            break source.len() - after.len();
        }
        from = at + name.len();
    };
    let mut depth = 0u32;
    let mut commas = 0u32;
    let mut empty = true;
    for (i, c) in source[open..].char_indices() {
        match c {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 {
                    let inner = source[open + 1..open + i].trim();
                    empty = inner.is_empty() || inner == "void";
                    break;
                }
            }
            ',' if depth == 1 => commas += 1,
            _ => {}
        }
    }
    Some(if empty { 0 } else { commas + 1 })
}

/// A program from a device binary, or `None` if the driver rejects it (then the caller
/// rebuilds from source and replaces the file).
fn from_binary(ctx: &ClContext, binary: &[u8], options: &str) -> Option<Program> {
    // SAFETY: the device belongs to the context; the binary is only read.
    let mut program =
        unsafe { Program::create_from_binary(&ctx.cl_context, &[ctx.device.id], &[binary]) }.ok()?;
    program.build(&[ctx.device.id], options).ok()?;
    Some(program)
}

#[cfg(test)]
mod tests {
    use super::declared_params;

    #[test]
    fn parameters_are_counted_from_the_declaration() {
        let src = "inline int f(int a, int b) { return a; }\n\
                   __kernel void k(__global const float* restrict in0, float s0, __global float* out0, ulong n) { f(1, 2); }";
        assert_eq!(declared_params(src, "k"), Some(4));
        assert_eq!(declared_params("__kernel void k() {}", "k"), Some(0));
        assert_eq!(declared_params("kernel void k(void) {}", "k"), Some(0));
        assert_eq!(
            declared_params("__kernel void kk(int a) {} __kernel void k(int a) {}", "k"),
            Some(1)
        );
        assert_eq!(declared_params("__kernel void other(int a) {}", "k"), None);
    }
}
