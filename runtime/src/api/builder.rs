//! Opening a [`Context`]: [`ContextBuilder`] (the device, from code or `LAZYCL_DEVICE`,
//! and the context's options) and its defaults.

use std::path::PathBuf;
use std::time::Duration;

use crate::backend::cache::CacheDir;
use crate::backend::context::{Context, ContextInner, Multi, Options};
use crate::backend::device::{devices, DeviceInfo, DeviceSelector};
use crate::backend::dispatch_mode::Dispatch;
use crate::error::{Error, Result};

/// Chooses a device and options for a new [`Context`] ([`Context::builder`]).
///
/// ```
/// # use lazycl::prelude::*;
/// # fn main() -> lazycl::Result<()> {
/// let ctx = Context::builder()
///     .device(DeviceSelector::Default) // or `.device_str("gpu")?`, "cpu", "1:0", "pocl"
///     .max_queued_commands(256)
///     .build()?;
/// assert_eq!(ctx.zeros::<u32>([2, 2])?.to_vec()?, [0; 4]);
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct ContextBuilder {
    selector: Option<DeviceSelector>,
    show_kernels: Option<bool>,
    quiet: Option<bool>,
    build_notice_after: Duration,
    precise_div_sqrt: bool,
    cache: CacheDir,
    max_queued_commands: usize,
    spare_buffers: usize,
    /// `None`: the device's memory but a sixteenth.
    memory_limit: Option<u64>,
    tuning: crate::profile::Tuning,
    /// `None`: `LAZYCL_DUMP_DOT` decides; `Some(None)`: off.
    dump_dot: Option<Option<PathBuf>>,
    /// A multi-device context even when the selection names one device.
    multi: bool,
    /// Each device's share of an array's rows (`None`: equal shares).
    weights: Option<Vec<f64>>,
    /// `None`: `LAZYCL_DISPATCH` decides, else inline.
    dispatch: Option<Dispatch>,
}

/// The default of [`ContextBuilder::max_queued_commands`]: enough that a launch loop never
/// waits for a device that keeps up (a GPU runs a few thousand small kernels in
/// milliseconds), few enough that a read after a long enqueue-only loop waits for
/// seconds of backlog at most, not minutes.
pub const DEFAULT_MAX_QUEUED_COMMANDS: usize = 4096;

/// The default of [`ContextBuilder::spare_buffers`]: two or three queues working side by
/// side each settle on buffers of their own.
pub const DEFAULT_SPARE_BUFFERS: usize = 2;

/// The default of [`ContextBuilder::build_notice_after`]: past about two seconds a silent
/// call reads as a hang.
pub const DEFAULT_BUILD_NOTICE_AFTER: Duration = Duration::from_secs(2);

impl ContextBuilder {
    /// Use this device instead of `LAZYCL_DEVICE` / the default choice.
    pub fn device(mut self, selector: DeviceSelector) -> Self {
        self.selector = Some(selector);
        self
    }

    /// Parse a selection in the `LAZYCL_DEVICE` syntax (`gpu`, `cpu`, `1:0`, `nvidia`).
    pub fn device_str(self, text: &str) -> Result<Self> {
        Ok(self.device(DeviceSelector::parse(text)?))
    }

    /// Where `eval()` flushes (default: `LAZYCL_DISPATCH`, `auto`, `inline`,
    /// `after-pause` or `background`, else [`Dispatch::Auto`]): on the calling thread,
    /// every error from the `eval()` itself; or handed to a thread of the context, so
    /// that the caller pays for recording and a hand-over only and a flush's errors come
    /// back from the next call that submits or reads ([`Dispatch`] says when each
    /// mode hands over, and when that pays). Reads,
    /// `assign`, launches and every other call that needs a result at once run on the
    /// calling thread either way, after that thread's handed-over `eval()`s. A
    /// multi-device context flushes inline.
    pub fn dispatch(mut self, dispatch: Dispatch) -> Self {
        self.dispatch = Some(dispatch);
        self
    }

    /// Print every generated kernel's source to stderr as it is built
    /// (default: the `LAZYCL_SHOW_KERNELS` switch, off when unset).
    pub fn show_kernels(mut self, on: bool) -> Self {
        self.show_kernels = Some(on);
        self
    }

    /// Never print the one-line notice that programs are being built (default: the
    /// `LAZYCL_QUIET` switch, off when unset).
    pub fn quiet(mut self, on: bool) -> Self {
        self.quiet = Some(on);
        self
    }

    /// How long a flush may spend building new programs before the context says so on
    /// stderr, once: `lazycl: building 12 kernels for <device> (first run; cached
    /// afterwards)…` (default [`DEFAULT_BUILD_NOTICE_AFTER`]; [`quiet`](Self::quiet)
    /// silences it). A flush builds the programs it needs together, one thread per core.
    pub fn build_notice_after(mut self, after: Duration) -> Self {
        self.build_notice_after = after;
        self
    }

    /// Write a picture of each flush that builds a kernel (one not in this context's
    /// kernel cache yet) into `dir`, as Graphviz DOT: `dir/flush-<n>.dot`, `n` the
    /// flush's number in the process (the one `explain` of an array it computed names).
    /// `None` turns it off. Default: the `LAZYCL_DUMP_DOT` directory, off when unset. The
    /// directory is created; a file that cannot be written warns once on stderr and never
    /// fails the flush.
    pub fn dump_dot(mut self, dir: Option<PathBuf>) -> Self {
        self.dump_dot = Some(dir);
        self
    }

    /// Correctly rounded `f32` division and `sqrt`, as in Rust, on devices that support it
    /// (`-cl-fp32-correctly-rounded-divide-sqrt`; NVIDIA's and PoCL's do). Off by default:
    /// OpenCL then allows 2.5 ulp for `/` and 3 ulp for `sqrt`, and the extra precision
    /// costs a fused chain with one of each measurable bandwidth on GPUs
    /// (RESULTS.md#rule-div-sqrt).
    pub fn correctly_rounded_div_sqrt(mut self, on: bool) -> Self {
        self.precise_div_sqrt = on;
        self
    }

    /// Where built programs are cached on disk (default: [`CacheDir::FromEnv`]).
    pub fn program_cache(mut self, cache: CacheDir) -> Self {
        self.cache = cache;
        self
    }

    /// Back-pressure: the most commands one queue may hold that the device has not
    /// finished (default [`DEFAULT_MAX_QUEUED_COMMANDS`]; at least 1). Submitting past it
    /// waits for the oldest of them first (counted as `waits_backpressure`), so a loop that
    /// only enqueues cannot run arbitrarily far ahead of the device.
    pub fn max_queued_commands(mut self, commands: usize) -> Self {
        self.max_queued_commands = commands.max(1);
        self
    }

    /// How the buffer pool trades memory for independence between queues (default
    /// [`DEFAULT_SPARE_BUFFERS`]). New work gets a free buffer of its size that needs no
    /// wait on its queue if there is one. If every free buffer of that size may still be
    /// in use by another queue's commands, handing one out makes the new work wait (on
    /// the device) for those commands; so while there are at most `buffers` of them the
    /// pool makes a new buffer instead, and work on independent queues never waits for
    /// each other through recycled memory. 0 always reuses (the least memory). When the
    /// device has no memory for a new buffer, a busy one is reused anyway. On NVIDIA's
    /// OpenCL a new buffer's first use was seen to wait for a kernel still running on
    /// another queue (the driver's wait, no counter sees it): there a spare buffer saves
    /// lazycl's wait, not the driver's.
    pub fn spare_buffers(mut self, buffers: usize) -> Self {
        self.spare_buffers = buffers;
        self
    }

    /// The most device memory the context may hold, in bytes (default: what the device
    /// reports, `CL_DEVICE_GLOBAL_MEM_SIZE`, but a sixteenth, which the driver's own
    /// allocations take; [`DeviceInfo::global_mem_bytes`] before opening one). Its
    /// buffers count from their creation until OpenCL frees them: arrays' memory, scratch
    /// of queued commands, and the free buffers the pool keeps
    /// ([`Context::memory_stats`]). An allocation that would pass the limit releases the
    /// pool's free buffers first, waits for memory already released to come back from
    /// commands still using it if that makes room, and otherwise fails with
    /// [`Error::OutOfMemory`] naming the request and the memory in use; the context
    /// keeps working. The limit is this context's alone (each device's, on a
    /// multi-device one): other contexts and processes on the device count their own.
    ///
    /// ```
    /// # use lazycl::prelude::*;
    /// # fn main() -> lazycl::Result<()> {
    /// let ctx = Context::builder().memory_limit(1 << 20).build()?; // 1 MiB
    /// let a = ctx.zeros::<f32>(200_000)?; // 800 kB
    /// match ctx.zeros::<f32>(100_000) {
    ///     Err(e @ Error::OutOfMemory { .. }) => println!("{e}"),
    ///     other => panic!("expected OutOfMemory, got {other:?}"),
    /// }
    /// drop(a);
    /// assert_eq!(ctx.zeros::<f32>(100_000)?.sum().item()?, 0.0); // room again
    /// # Ok(())
    /// # }
    /// ```
    pub fn memory_limit(mut self, bytes: u64) -> Self {
        self.memory_limit = Some(bytes);
        self
    }

    /// Opens a multi-device context ([`Context::multi`]) even when the selection names a
    /// single device (a one-device multi context runs like a plain one).
    pub fn multi(mut self, on: bool) -> Self {
        self.multi = on;
        self
    }

    /// Each device's share of a multi-device context's rows, in the order the selection
    /// names the devices (default: equal shares). An array of `n` rows gives device `d`
    /// the rows from `n * (w[0] + .. + w[d - 1]) / W` up to `n * (w[0] + .. + w[d]) / W`
    /// (rounded down), `W` the sum of the weights: a device with twice the bandwidth can
    /// take twice the rows. Every weight must be finite and positive.
    pub fn weights(mut self, weights: &[f64]) -> Self {
        self.weights = Some(weights.to_vec());
        self
    }

    /// Planning switches for tests that cover every kernel layout on any device.
    #[doc(hidden)]
    pub fn tuning(mut self, tuning: crate::profile::Tuning) -> Self {
        self.tuning = tuning;
        self
    }

    /// Opens the device.
    pub fn build(self) -> Result<Context> {
        let list = devices()?;
        let Request { selector, text } = request(self.selector.clone(), &list)?;
        let chosen: Vec<DeviceInfo> = selector.choose_all(&list, &text)?.into_iter().cloned().collect();
        let multi = self.multi || selector.is_multi();
        let switches = self.switches()?;
        let options = |info: &DeviceInfo| self.options(&switches, info);
        let first = chosen[0].clone();
        if !multi {
            return Ok(Context {
                inner: ContextInner::open(first.clone(), &options(&first), &self.cache, None)?,
            });
        }
        let weights = self.shares(&chosen, &text)?;
        let parts = chosen
            .iter()
            .map(|info| ContextInner::open(info.clone(), &options(info), &self.cache, None))
            .collect::<Result<Vec<_>>>()?;
        let bridges = parts.iter().map(|p| p.new_queue()).collect::<Result<Vec<_>>>()?;
        let multi = Multi {
            parts,
            weights,
            bridges,
        };
        Ok(Context {
            inner: ContextInner::open(first.clone(), &options(&first), &self.cache, Some(multi))?,
        })
    }

    /// The switches not set in code, from the environment.
    fn switches(&self) -> Result<Switches> {
        let show_kernels = match self.show_kernels {
            Some(on) => on,
            None => crate::env::switch("LAZYCL_SHOW_KERNELS")?.unwrap_or(false),
        };
        let quiet = match self.quiet {
            Some(on) => on,
            None => crate::env::switch("LAZYCL_QUIET")?.unwrap_or(false),
        };
        let dump_dot = match &self.dump_dot {
            Some(dir) => dir.clone(),
            None => crate::env::path("LAZYCL_DUMP_DOT").map(PathBuf::from),
        };
        let dispatch = match self.dispatch {
            Some(d) => d,
            None => Dispatch::from_env()?.unwrap_or_default(),
        };
        Ok(Switches {
            show_kernels,
            quiet,
            dump_dot,
            dispatch,
        })
    }

    /// The options of the context of device `info`.
    fn options(&self, switches: &Switches, info: &DeviceInfo) -> Options {
        Options {
            dispatch: switches.dispatch,
            dump_dot: switches.dump_dot.clone(),
            show_kernels: switches.show_kernels,
            build_notice_after: (!switches.quiet).then_some(self.build_notice_after),
            precise_div_sqrt: self.precise_div_sqrt && info.correctly_rounded_div_sqrt,
            max_queued_commands: self.max_queued_commands,
            spare_buffers: self.spare_buffers,
            memory_limit: self.memory_limit,
            tuning: self.tuning,
        }
    }

    /// Each of the `chosen` devices' share of the rows ([`weights`](Self::weights), else
    /// equal shares); `request` names the selection in an error.
    fn shares(&self, chosen: &[DeviceInfo], request: &str) -> Result<Vec<f64>> {
        match &self.weights {
            None => Ok(vec![1.0; chosen.len()]),
            Some(w) if w.len() == chosen.len() && w.iter().all(|x| x.is_finite() && *x > 0.0) => {
                Ok(w.clone())
            }
            Some(w) => Err(Error::MultiDevice {
                op: "ContextBuilder::weights".into(),
                devices: chosen.len(),
                reason: format!(
                    "{w:?} is not one finite, positive weight per device ({request} chose {})",
                    chosen
                        .iter()
                        .map(|d| d.name.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            }),
        }
    }
}

/// The devices a context is asked for, and how the request reads in an error.
struct Request {
    selector: DeviceSelector,
    text: String,
}

/// The selection `selector` (`None`: `LAZYCL_DEVICE`, else the default device) among
/// the devices of `list`.
fn request(selector: Option<DeviceSelector>, list: &[DeviceInfo]) -> Result<Request> {
    let (selector, text) = match selector {
        Some(s) => {
            let r = s.to_string();
            (s, r)
        }
        None => match crate::env::text("LAZYCL_DEVICE") {
            Ok(Some(text)) => (
                DeviceSelector::parse(&text).map_err(|_| no_match(&format!("LAZYCL_DEVICE={text}"), list))?,
                format!("LAZYCL_DEVICE={text}"),
            ),
            Ok(None) => (DeviceSelector::Default, "the default device".to_string()),
            Err(Error::InvalidEnvironment { value, reason, .. }) => {
                return Err(no_match(
                    &format!("LAZYCL_DEVICE={value:?}, which {reason}"),
                    list,
                ))
            }
            Err(e) => return Err(e),
        },
    };
    Ok(Request { selector, text })
}

/// The switches of a context that the environment sets where code does not.
struct Switches {
    show_kernels: bool,
    quiet: bool,
    dump_dot: Option<PathBuf>,
    dispatch: Dispatch,
}

fn no_match(request: &str, list: &[DeviceInfo]) -> Error {
    Error::NoMatchingDevice {
        request: request.to_string(),
        available: crate::backend::device::device_table(list),
    }
}

impl Context {
    /// A builder to choose the device in code.
    pub fn builder() -> ContextBuilder {
        ContextBuilder {
            selector: None,
            show_kernels: None,
            quiet: None,
            build_notice_after: DEFAULT_BUILD_NOTICE_AFTER,
            precise_div_sqrt: false,
            cache: CacheDir::FromEnv,
            max_queued_commands: DEFAULT_MAX_QUEUED_COMMANDS,
            spare_buffers: DEFAULT_SPARE_BUFFERS,
            memory_limit: None,
            tuning: Default::default(),
            dump_dot: None,
            multi: false,
            weights: None,
            dispatch: None,
        }
    }
}
