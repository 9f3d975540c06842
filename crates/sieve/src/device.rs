//! What a device can do, read once from its client: plane operations and widths, units per
//! cube, shared memory, element types, 64-bit atomics, and whether cubes of one launch are
//! guaranteed forward progress. Every default tuning is derived from these facts, and every
//! entry point reads them once ([`DeviceCaps::of`]) and hands them to the calls it nests.
//!
//! [`with_limits`] lowers the limits for the calls made inside it on the current thread: to
//! test small devices on a large one, or to stay inside limits smaller than the device's.

use std::cell::Cell;

use cubecl::features::{AtomicUsage, Plane, TypeUsage};
use cubecl::ir::{ElemType, Type, UIntKind};
use cubecl::prelude::*;

use crate::{Dtype, SieveError};

/// Capabilities of one device, as sieve's launch code needs them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceCaps {
    /// The CubeCL runtime (`cuda`, `hip`, `wgpu<...>`, ...).
    pub runtime: &'static str,
    /// The device as it names itself.
    pub device_name: String,
    /// Plane (subgroup / warp) reductions, scans, shuffles and broadcasts.
    pub plane_ops: bool,
    /// Narrowest plane width (units per plane) the runtime may launch with.
    pub plane_size_min: u32,
    /// Widest plane width the runtime may launch with: a cube holds whole planes, so the
    /// fewest units a tuning may give a cube.
    pub plane_size_max: u32,
    /// Most units one cube may have.
    pub max_units_per_cube: u32,
    /// Shared memory one cube may allocate, in bytes.
    pub max_shared_bytes: usize,
    /// Streaming multiprocessors (compute units), where the runtime says.
    pub multiprocessors: Option<u32>,
    /// Widest vector (in elements) the device loads in one instruction.
    pub max_vector_size: usize,
    /// Cubes that have started keep running while others spin on them. CUDA and HIP promise
    /// it for resident blocks; WebGPU, Metal and Vulkan promise nothing.
    pub forward_progress: bool,
    /// The kernel compiler keeps IEEE's rule that an ordered float comparison with a NaN
    /// operand is false. CubeCL's C++ compilers (CUDA, HIP) do, as CubeCL sets no fast-math
    /// mode by default. Vulkan lets a driver assume no NaNs unless a shader declares
    /// `SignedZeroInfNanPreserve` (CubeCL does not), and WGSL allows the same, so there NaN is
    /// only ever tested by its bits; where this holds, the scan's folds use the runtime's
    /// `isnan`.
    pub ieee_nan_compare: bool,
    /// Buffer atomic read-modify-writes carry acquire/release ordering, so each waits on the
    /// unit's memory operations: cubecl-spirv 0.11 (wgpu's Vulkan path, `wgpu<spirv>`) emits
    /// them so (`docs/PERFORMANCE.md`, thirty-fifth session); CUDA's, HIP's, WGSL's and MSL's
    /// are relaxed. Tunings make fewer of them there.
    pub ordered_atomics: bool,
    /// Atomic load/store of 64-bit words (the look-back's status words).
    pub atomic_u64: bool,
    /// Buffers of 8-bit elements (byte masks).
    pub u8: bool,
    /// Every [`Dtype`] the device serves ([`DeviceCaps::supports`]: buffers, conversions and
    /// arithmetic; bf16 without arithmetic), in [`Dtype::ALL`]'s order.
    pub dtypes: Vec<Dtype>,
    /// The [`with_limits`] override these facts were lowered by (all `None`: the device's own).
    pub limits: DeviceLimits,
}

/// Limits that lower what [`DeviceCaps::of`] reports, for the calls made inside
/// [`with_limits`] on the current thread. `None` keeps the device's own value; a limit can only
/// lower it (a larger value, or `plane_ops: Some(true)` on a device without plane operations,
/// changes nothing). Plane widths are the hardware's and cannot be overridden.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct DeviceLimits {
    /// At most this many units per cube (Vulkan guarantees 128; sieve's tunings run from 64).
    pub max_units_per_cube: Option<u32>,
    /// At most this many bytes of shared memory per cube (Vulkan guarantees 16 KiB).
    pub max_shared_bytes: Option<usize>,
    /// `Some(false)`: no plane operations (the unit-serial and split fallbacks run).
    pub plane_ops: Option<bool>,
}

impl DeviceLimits {
    /// The tighter of two sets of limits, field by field.
    fn and(self, other: DeviceLimits) -> DeviceLimits {
        fn tighter<T: Ord>(a: Option<T>, b: Option<T>) -> Option<T> {
            match (a, b) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            }
        }
        DeviceLimits {
            max_units_per_cube: tighter(self.max_units_per_cube, other.max_units_per_cube),
            max_shared_bytes: tighter(self.max_shared_bytes, other.max_shared_bytes),
            plane_ops: tighter(self.plane_ops, other.plane_ops),
        }
    }
}

thread_local! {
    /// The limits of the innermost [`with_limits`] scope on this thread.
    static LIMITS: Cell<DeviceLimits> = Cell::new(DeviceLimits::default());
}

/// Runs `f` with the device limits lowered to `limits` (tightened by any enclosing scope) for
/// every sieve call `f` makes on this thread: [`DeviceCaps::of`] reports the lowered limits, so
/// default tunings, `Auto` strategy choices and tuning checks all stay inside them. Other
/// threads are not affected. The previous limits come back when `f` returns or panics.
///
/// Burn ops under Fusion run when their stream is flushed (a read, or a full queue), so read
/// their results inside the scope for the limits to apply to them.
pub fn with_limits<R>(limits: DeviceLimits, f: impl FnOnce() -> R) -> R {
    crate::common::with_thread_value(&LIMITS, LIMITS.get().and(limits), f)
}

impl DeviceCaps {
    /// The device's capabilities, lowered by the current thread's [`with_limits`] scope.
    pub fn of(client: &Client) -> Self {
        let limits = LIMITS.with(Cell::get);
        let properties = client.properties();
        let hardware = &properties.hardware;
        let runtime = client.name();
        let atomic_u64 = properties
            .atomic_type_usage(Type::atomic(ElemType::UInt(UIntKind::U64)))
            .contains(AtomicUsage::LoadStore);
        DeviceCaps {
            runtime,
            device_name: properties.identity.name.clone(),
            // The plane code takes whole planes of a power-of-two width that the cube's
            // units are a multiple of: a device reporting no such width runs without planes.
            plane_ops: properties.features.plane.contains(Plane::Ops)
                && limits.plane_ops.unwrap_or(true)
                && hardware.plane_size_min >= 1
                && hardware.plane_size_max.is_power_of_two()
                && hardware.plane_size_min <= hardware.plane_size_max,
            plane_size_min: hardware.plane_size_min,
            plane_size_max: hardware.plane_size_max,
            max_units_per_cube: limits
                .max_units_per_cube
                .map_or(hardware.max_units_per_cube, |limit| {
                    limit.min(hardware.max_units_per_cube)
                }),
            max_shared_bytes: limits
                .max_shared_bytes
                .map_or(hardware.max_shared_memory_size, |limit| {
                    limit.min(hardware.max_shared_memory_size)
                }),
            multiprocessors: hardware.num_streaming_multiprocessors,
            max_vector_size: hardware.max_vector_size,
            forward_progress: matches!(runtime, "cuda" | "hip"),
            ieee_nan_compare: matches!(runtime, "cuda" | "hip"),
            ordered_atomics: runtime == "wgpu<spirv>",
            atomic_u64,
            u8: client
                .properties()
                .type_usage(ElemType::UInt(UIntKind::U8))
                .contains(TypeUsage::Buffer),
            dtypes: Dtype::ALL
                .into_iter()
                .filter(|&dtype| supports(client, dtype))
                .collect(),
            limits,
        }
    }

    /// Units for a cube that wants `wanted`: the largest power of two at most `wanted`, the
    /// device's units per cube and 1024, but never below the widest plane (a cube holds whole
    /// planes). Every default tuning takes its units here, so it fits any device.
    pub fn cube_units(&self, wanted: u32) -> u32 {
        let cap = wanted.min(self.max_units_per_cube).clamp(1, 1024);
        let power = 1u32 << (u32::BITS - 1 - cap.leading_zeros());
        power.max(self.plane_size_max.max(1))
    }

    /// The most units a cube may have, as a power of two ([`DeviceCaps::cube_units`] of 1024).
    pub fn max_cube_units(&self) -> u32 {
        self.cube_units(1024)
    }

    /// A clear error naming `dtype` and the runtime if this device cannot hold and compute
    /// `dtype` (the 32-bit dtypes are everywhere; f16, bf16, f64 and the 8-, 16- and 64-bit
    /// integers need the runtime to register them: WGSL has no 8- or 16-bit integers, most
    /// wgpu devices no f64).
    pub fn check_dtype(&self, dtype: Dtype) -> Result<(), SieveError> {
        if self.supports(dtype) {
            return Ok(());
        }
        Err(SieveError::UnsupportedDtype {
            dtype,
            device: self.describe(),
            reason: match dtype {
                Dtype::F16 => "the device has no f16 arithmetic and storage",
                Dtype::BF16 => "the device has no bf16 arithmetic and storage",
                Dtype::F64 => "the device has no f64 arithmetic and storage",
                Dtype::I64 | Dtype::U64 => "the device has no 64-bit integers",
                Dtype::I16 | Dtype::U16 => "the device has no 16-bit integer buffers",
                Dtype::I8 | Dtype::U8 => "the device has no 8-bit integer buffers",
                Dtype::I32 | Dtype::U32 | Dtype::F32 => "the device has no 32-bit buffers",
            },
        })
    }

    /// Whether the device serves `dtype`: the runtime lets kernels keep it in buffers, convert
    /// it and compute in it (bf16: buffers and conversions, all sieve does with it).
    pub fn supports(&self, dtype: Dtype) -> bool {
        self.dtypes.contains(&dtype)
    }

    /// A clear error unless `units` (a tuning's units per cube) is a power of two from the
    /// widest plane to the largest cube.
    pub fn check_units_per_cube(&self, units: u32) -> Result<(), SieveError> {
        self.check_units("tuning.units_per_cube", units)
    }

    /// As [`DeviceCaps::check_units_per_cube`], for the tuning field named `name`.
    pub fn check_units(&self, name: &'static str, units: u32) -> Result<(), SieveError> {
        let min_units = self.plane_size_max.max(1);
        let max_units = self.max_units_per_cube.min(1024);
        if !units.is_power_of_two() || units < min_units || units > max_units {
            return Err(SieveError::invalid(
                name,
                units,
                format!(
                    "a power of two in {min_units}..={max_units} (at least the plane width, at \
                     most a cube)"
                ),
            ));
        }
        Ok(())
    }

    /// A clear error when a tuning asks for plane operations the device lacks.
    pub fn check_planes(&self, use_planes: bool) -> Result<(), SieveError> {
        if use_planes && !self.plane_ops {
            return Err(SieveError::UnsupportedStrategy {
                strategy: "use_planes",
                device: self.describe(),
                reason: "the device has no plane operations",
            });
        }
        Ok(())
    }

    /// `runtime: name`, for messages (with the limits a [`with_limits`] scope set, if any).
    pub fn describe(&self) -> String {
        if self.limits == DeviceLimits::default() {
            format!("{}: {}", self.runtime, self.device_name)
        } else {
            format!(
                "{}: {}, limited to {} units per cube, {} bytes of shared memory{}",
                self.runtime,
                self.device_name,
                self.max_units_per_cube,
                self.max_shared_bytes,
                if self.plane_ops {
                    ""
                } else {
                    ", no plane operations"
                }
            )
        }
    }

    /// `N units per cube, M bytes of shared memory`, for messages about tunings and
    /// capacities that these limits set.
    pub fn describe_limits(&self) -> String {
        format!(
            "{} units per cube, {} bytes of shared memory",
            self.max_units_per_cube, self.max_shared_bytes
        )
    }
}

/// [`DeviceCaps::check_dtype`] for one dtype, without reading every capability first (one
/// lookup where the device has the dtype): for callers that refuse a dtype before they queue
/// any work, such as the Burn ops.
pub fn check_dtype(client: &Client, dtype: Dtype) -> Result<(), SieveError> {
    if supports(client, dtype) {
        Ok(())
    } else {
        DeviceCaps::of(client).check_dtype(dtype)
    }
}

/// Whether the runtime lets kernels keep `dtype` in buffers and convert it, and compute in it
/// (bf16 excepted: sieve only converts it, to f32). Registered alone is not enough: Vulkan
/// registers bf16 for conversions without 16-bit storage, and the 8- and 16-bit integers
/// without 8- or 16-bit storage buffers where the device lacks them.
fn supports(client: &Client, dtype: Dtype) -> bool {
    let usage = client.properties().type_usage(dtype.elem_type());
    let needed = if dtype == Dtype::BF16 {
        TypeUsage::Buffer | TypeUsage::Conversion
    } else {
        TypeUsage::Buffer | TypeUsage::Conversion | TypeUsage::Arithmetic
    };
    usage.is_superset(needed)
}
