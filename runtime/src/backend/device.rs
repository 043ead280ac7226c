//! Platforms and devices: listing them, and choosing one from `LAZYCL_DEVICE` or a builder.

use std::fmt;

use cl3::device::{CL_DEVICE_TYPE_ACCELERATOR, CL_DEVICE_TYPE_ALL, CL_DEVICE_TYPE_CPU, CL_DEVICE_TYPE_GPU};
use cl3::types::cl_device_id;
use opencl3::device::{Device, CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT};
use opencl3::platform::{get_platforms, Platform};

use crate::error::{ClResultExt, Error, Result};
use crate::profile::{DeviceProfile, Tuning, GROUP_PRIVATE_BYTES};

/// The kind of an OpenCL device.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeviceType {
    /// A GPU.
    Gpu,
    /// A CPU (PoCL, Intel's CPU runtime, ...).
    Cpu,
    /// An accelerator card.
    Accelerator,
    /// Anything else.
    Other,
}

impl fmt::Display for DeviceType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            DeviceType::Gpu => "GPU",
            DeviceType::Cpu => "CPU",
            DeviceType::Accelerator => "accelerator",
            DeviceType::Other => "other",
        })
    }
}

/// The facts about one device that a user needs to pick it.
#[derive(Debug, Clone)]
pub struct DeviceInfo {
    /// Index of the platform in the platform list.
    pub platform_index: usize,
    /// Index of the device within its platform.
    pub device_index: usize,
    /// The platform's name, e.g. `Portable Computing Language`.
    pub platform_name: String,
    /// The platform's version string.
    pub platform_version: String,
    /// The device's name.
    pub name: String,
    /// GPU, CPU, ...
    pub device_type: DeviceType,
    /// `CL_DEVICE_MAX_COMPUTE_UNITS`.
    pub compute_units: u32,
    /// `CL_DEVICE_GLOBAL_MEM_SIZE` in bytes.
    pub global_mem_bytes: u64,
    /// `CL_DEVICE_MAX_MEM_ALLOC_SIZE` in bytes.
    pub max_alloc_bytes: u64,
    /// `CL_DEVICE_OPENCL_C_VERSION`, e.g. `OpenCL C 1.2 pocl`.
    pub opencl_c_version: String,
    /// `CL_DRIVER_VERSION`.
    pub driver_version: String,
    /// Whether `double` is supported (`cl_khr_fp64`).
    pub fp64: bool,
    /// `CL_DEVICE_EXTENSIONS`, one name each.
    pub extensions: Vec<String>,
    /// `CL_DEVICE_MAX_WORK_GROUP_SIZE`.
    pub max_work_group_size: usize,
    /// `CL_DEVICE_MAX_WORK_ITEM_SIZES`: the largest work-group size in each dimension.
    pub max_work_item_sizes: Vec<usize>,
    /// `CL_DEVICE_ADDRESS_BITS`: the device's `size_t` (32 or 64), which bounds every
    /// global work size.
    pub address_bits: u32,
    /// `CL_DEVICE_MAX_PARAMETER_SIZE` in bytes.
    pub max_parameter_bytes: usize,
    /// `CL_DEVICE_LOCAL_MEM_SIZE` in bytes.
    pub local_mem_bytes: u64,
    /// 32-bit registers available to a work-group, where the device says
    /// (`CL_DEVICE_REGISTERS_PER_BLOCK_NV` of `cl_nv_device_attribute_query`).
    pub registers_per_group: Option<u32>,
    /// Whether `float` division and `sqrt` can be correctly rounded
    /// (`CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT`; see `ContextBuilder::correctly_rounded_div_sqrt`).
    pub correctly_rounded_div_sqrt: bool,
    pub(crate) id: cl_device_id,
}

// SAFETY: a cl_device_id is an opaque handle that OpenCL allows to be used from any thread.
unsafe impl Send for DeviceInfo {}
unsafe impl Sync for DeviceInfo {}

impl DeviceInfo {
    fn query(
        platform_index: usize,
        platform: &Platform,
        device_index: usize,
        id: cl_device_id,
    ) -> Result<Self> {
        let d = Device::new(id);
        let ty = d.dev_type().cl("clGetDeviceInfo")?;
        let device_type = if ty & CL_DEVICE_TYPE_GPU != 0 {
            DeviceType::Gpu
        } else if ty & CL_DEVICE_TYPE_CPU != 0 {
            DeviceType::Cpu
        } else if ty & CL_DEVICE_TYPE_ACCELERATOR != 0 {
            DeviceType::Accelerator
        } else {
            DeviceType::Other
        };
        let extensions = d.extensions().cl("clGetDeviceInfo")?;
        let fp64 = extensions.split_whitespace().any(|e| e == "cl_khr_fp64")
            || d.double_fp_config().map(|c| c != 0).unwrap_or(false);
        Ok(DeviceInfo {
            platform_index,
            device_index,
            platform_name: platform.name().cl("clGetPlatformInfo")?.trim().to_string(),
            platform_version: platform.version().cl("clGetPlatformInfo")?.trim().to_string(),
            name: d.name().cl("clGetDeviceInfo")?.trim().to_string(),
            device_type,
            compute_units: d.max_compute_units().cl("clGetDeviceInfo")?,
            global_mem_bytes: d.global_mem_size().cl("clGetDeviceInfo")?,
            max_alloc_bytes: d.max_mem_alloc_size().cl("clGetDeviceInfo")?,
            opencl_c_version: d.opencl_c_version().cl("clGetDeviceInfo")?.trim().to_string(),
            driver_version: d.driver_version().cl("clGetDeviceInfo")?.trim().to_string(),
            fp64,
            extensions: extensions.split_whitespace().map(str::to_string).collect(),
            max_work_group_size: d.max_work_group_size().cl("clGetDeviceInfo")?,
            max_work_item_sizes: d.max_work_item_sizes().cl("clGetDeviceInfo")?,
            address_bits: d.address_bits().cl("clGetDeviceInfo")?,
            max_parameter_bytes: d.max_parameter_size().cl("clGetDeviceInfo")?,
            local_mem_bytes: d.local_mem_size().cl("clGetDeviceInfo")?,
            registers_per_group: extensions
                .split_whitespace()
                .any(|e| e == "cl_nv_device_attribute_query")
                .then(|| d.registers_per_block_nv().ok())
                .flatten()
                .filter(|&r| r > 0),
            correctly_rounded_div_sqrt: d
                .single_fp_config()
                .is_ok_and(|c| c & CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT != 0),
            id,
        })
    }

    /// `platform:device`, the index pair `LAZYCL_DEVICE` accepts.
    pub fn index_pair(&self) -> String {
        format!("{}:{}", self.platform_index, self.device_index)
    }
}

/// Lists every device of every OpenCL platform.
///
/// Errors with [`Error::NoLoader`] when `libOpenCL.so.1` is missing and
/// [`Error::NoPlatform`] when no platform is installed.
///
/// ```
/// # fn main() -> lazycl::Result<()> {
/// let all = lazycl::devices()?;
/// print!("{}", lazycl::device_table(&all)); // what `LAZYCL_DEVICE` can pick from
/// let first = &all[0];
/// let ctx = lazycl::Context::builder()
///     .device(lazycl::DeviceSelector::Index {
///         platform: first.platform_index,
///         device: first.device_index,
///     })
///     .build()?;
/// assert_eq!(ctx.device().name, first.name);
/// # Ok(())
/// # }
/// ```
pub fn devices() -> Result<Vec<DeviceInfo>> {
    // Enumerate once per process, under a lock: some drivers (PoCL) report no devices to
    // a thread that asks while another thread's first enumeration is initializing them.
    static LIST: std::sync::Mutex<Option<Vec<DeviceInfo>>> = std::sync::Mutex::new(None);
    let mut cached = LIST.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(list) = &*cached {
        return Ok(list.clone());
    }
    let list = enumerate()?;
    *cached = Some(list.clone());
    Ok(list)
}

fn enumerate() -> Result<Vec<DeviceInfo>> {
    if !cl3::is_opencl_runtime_available() {
        return Err(Error::NoLoader);
    }
    let platforms = match get_platforms() {
        Ok(p) => p,
        // The ICD loader reports "no platforms" as CL_PLATFORM_NOT_FOUND_KHR (-1001).
        Err(e) if e.0 == cl3::error_codes::CL_PLATFORM_NOT_FOUND_KHR => Vec::new(),
        Err(e) => return Err(Error::cl("clGetPlatformIDs", e.0)),
    };
    if platforms.is_empty() {
        return Err(Error::NoPlatform);
    }
    let mut out = Vec::new();
    for (pi, platform) in platforms.iter().enumerate() {
        let ids = match platform.get_devices(CL_DEVICE_TYPE_ALL) {
            Ok(ids) => ids,
            Err(e) if e.0 == cl3::error_codes::CL_DEVICE_NOT_FOUND => Vec::new(),
            Err(e) => return Err(Error::cl("clGetDeviceIDs", e.0)),
        };
        for (di, id) in ids.into_iter().enumerate() {
            out.push(DeviceInfo::query(pi, platform, di, id)?);
        }
    }
    Ok(out)
}

/// Formats devices as the table `examples/devices.rs` prints.
pub fn device_table(devices: &[DeviceInfo]) -> String {
    let mut rows = vec![[
        "index".to_string(),
        "type".into(),
        "platform".into(),
        "device".into(),
        "CUs".into(),
        "memory".into(),
        "OpenCL C".into(),
        "fp64".into(),
    ]];
    for d in devices {
        rows.push([
            d.index_pair(),
            d.device_type.to_string(),
            d.platform_name.clone(),
            d.name.clone(),
            d.compute_units.to_string(),
            format!("{:.1} GiB", d.global_mem_bytes as f64 / (1u64 << 30) as f64),
            d.opencl_c_version.clone(),
            if d.fp64 { "yes" } else { "no" }.into(),
        ]);
    }
    let mut widths = [0usize; 8];
    for row in &rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let mut s = String::new();
    for row in rows {
        let cells: Vec<String> = row.iter().zip(widths).map(|(c, w)| format!("{c:<w$}")).collect();
        s.push_str(cells.join("  ").trim_end());
        s.push('\n');
    }
    s
}

/// Which device a context should use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DeviceSelector {
    /// `LAZYCL_DEVICE` if set, else the first GPU, else the first device.
    Default,
    /// The first GPU.
    Gpu,
    /// The first CPU device.
    Cpu,
    /// Device `device` of platform `platform` (as listed by [`devices`]).
    Index {
        /// Platform index.
        platform: usize,
        /// Device index within the platform.
        device: usize,
    },
    /// The first device whose device name, platform name or platform/OpenCL C version
    /// contains this text (case-insensitive), e.g. `nvidia`, `pocl`.
    Name(String),
    /// Every device (`*`): a multi-device context ([`Context::multi`](crate::Context::multi)).
    All,
    /// Every GPU (`gpu:*`).
    AllGpus,
    /// Every CPU device (`cpu:*`).
    AllCpus,
    /// Every device of platform `P` (`P:*`).
    Platform(usize),
    /// Each selection in turn, a device each (`1:0,1:1`; `gpu,cpu`); one named twice is
    /// opened twice.
    List(Vec<DeviceSelector>),
}

/// The selection in the `LAZYCL_DEVICE` syntax (what [`DeviceSelector::parse`] reads).
impl std::fmt::Display for DeviceSelector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DeviceSelector::Default => {
                f.write_str("the default device (the first GPU, else the first device)")
            }
            DeviceSelector::Gpu => f.write_str("gpu"),
            DeviceSelector::Cpu => f.write_str("cpu"),
            DeviceSelector::Index { platform, device } => write!(f, "{platform}:{device}"),
            DeviceSelector::Name(name) => f.write_str(name),
            DeviceSelector::All => f.write_str("*"),
            DeviceSelector::AllGpus => f.write_str("gpu:*"),
            DeviceSelector::AllCpus => f.write_str("cpu:*"),
            DeviceSelector::Platform(p) => write!(f, "{p}:*"),
            DeviceSelector::List(items) if items.is_empty() => f.write_str("(an empty list of devices)"),
            DeviceSelector::List(items) => {
                let texts: Vec<String> = items.iter().map(|s| s.to_string()).collect();
                f.write_str(&texts.join(","))
            }
        }
    }
}

impl DeviceSelector {
    /// Every GPU of the machine (`gpu:*`), for [`Context::multi`](crate::Context::multi).
    pub fn all_gpus() -> Self {
        DeviceSelector::AllGpus
    }

    /// Parses the `LAZYCL_DEVICE` syntax: `gpu`, `cpu`, `P:D`, or a name substring for one
    /// device; `*`, `gpu:*`, `cpu:*`, `P:*` or a comma-separated list (`1:0,1:1`) for
    /// several (a multi-device context).
    pub fn parse(text: &str) -> Result<Self> {
        let t = text.trim();
        if t.is_empty() {
            return Err(Error::NoMatchingDevice {
                request: text.to_string(),
                available: "(an empty selection; use gpu, cpu, P:D, a name substring, \
                            or several: *, gpu:*, cpu:*, P:*, a list like 1:0,1:1)"
                    .into(),
            });
        }
        if t.contains(',') {
            let items = t.split(',').map(Self::parse).collect::<Result<Vec<_>>>()?;
            return Ok(DeviceSelector::List(items));
        }
        match t.to_ascii_lowercase().as_str() {
            "gpu" => return Ok(DeviceSelector::Gpu),
            "cpu" => return Ok(DeviceSelector::Cpu),
            "*" => return Ok(DeviceSelector::All),
            "gpu:*" => return Ok(DeviceSelector::AllGpus),
            "cpu:*" => return Ok(DeviceSelector::AllCpus),
            _ => {}
        }
        if let Some((p, d)) = t.split_once(':') {
            if let (Ok(platform), "*") = (p.trim().parse(), d.trim()) {
                return Ok(DeviceSelector::Platform(platform));
            }
            if let (Ok(platform), Ok(device)) = (p.trim().parse(), d.trim().parse()) {
                return Ok(DeviceSelector::Index { platform, device });
            }
        }
        Ok(DeviceSelector::Name(t.to_string()))
    }

    /// Whether the selection names several devices (a multi-device context).
    pub fn is_multi(&self) -> bool {
        matches!(
            self,
            DeviceSelector::All
                | DeviceSelector::AllGpus
                | DeviceSelector::AllCpus
                | DeviceSelector::Platform(_)
                | DeviceSelector::List(_)
        )
    }

    /// Every device the selection names, in order (one for a single-device selection);
    /// an error naming the request and the device table when it names none.
    pub(crate) fn choose_all<'a>(
        &self,
        list: &'a [DeviceInfo],
        request: &str,
    ) -> Result<Vec<&'a DeviceInfo>> {
        let found: Vec<&DeviceInfo> = match self {
            DeviceSelector::All => list.iter().collect(),
            DeviceSelector::AllGpus => list.iter().filter(|d| d.device_type == DeviceType::Gpu).collect(),
            DeviceSelector::AllCpus => list.iter().filter(|d| d.device_type == DeviceType::Cpu).collect(),
            DeviceSelector::Platform(p) => list.iter().filter(|d| d.platform_index == *p).collect(),
            DeviceSelector::List(items) => items
                .iter()
                .map(|s| s.choose(list, request))
                .collect::<Result<_>>()?,
            single => return Ok(vec![single.choose(list, request)?]),
        };
        if found.is_empty() {
            return Err(Error::NoMatchingDevice {
                request: request.to_string(),
                available: device_table(list),
            });
        }
        Ok(found)
    }

    /// Picks a device from `list`.
    pub(crate) fn choose<'a>(&self, list: &'a [DeviceInfo], request: &str) -> Result<&'a DeviceInfo> {
        let found = match self {
            DeviceSelector::Default => list
                .iter()
                .find(|d| d.device_type == DeviceType::Gpu)
                .or_else(|| list.first()),
            DeviceSelector::Gpu => list.iter().find(|d| d.device_type == DeviceType::Gpu),
            DeviceSelector::Cpu => list.iter().find(|d| d.device_type == DeviceType::Cpu),
            DeviceSelector::Index { platform, device } => list
                .iter()
                .find(|d| d.platform_index == *platform && d.device_index == *device),
            DeviceSelector::Name(name) => {
                let needle = name.to_lowercase();
                list.iter().find(|d| {
                    // PoCL names itself only in its version strings ("OpenCL 3.0 PoCL 3.1").
                    [
                        &d.name,
                        &d.platform_name,
                        &d.platform_version,
                        &d.opencl_c_version,
                    ]
                    .iter()
                    .any(|text| text.to_lowercase().contains(&needle))
                })
            }
            multi => {
                let all = multi.choose_all(list, request)?;
                all.first().copied()
            }
        };
        found.ok_or_else(|| Error::NoMatchingDevice {
            request: request.to_string(),
            available: device_table(list),
        })
    }
}

impl DeviceInfo {
    /// What planning knows of this device, with the tests' `tuning` switches.
    pub(crate) fn profile(&self, tuning: Tuning) -> DeviceProfile {
        DeviceProfile {
            gpu: self.device_type == DeviceType::Gpu,
            compute_units: self.compute_units,
            max_group: self
                .max_work_item_sizes
                .first()
                .map_or(self.max_work_group_size, |&d| d.min(self.max_work_group_size)),
            local_mem_bytes: self.local_mem_bytes,
            private_bytes: self
                .registers_per_group
                .map_or(GROUP_PRIVATE_BYTES, |r| u64::from(r) * 4),
            parameter_bytes: self.max_parameter_bytes,
            tuning,
        }
    }
}
