//! What a device can do, read once from its client: plane operations and widths, element
//! types, 64-bit atomics, and whether cubes of one launch are guaranteed forward progress.

use cubecl::features::{AtomicUsage, Plane};
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
    pub plane_size_min: u32,
    pub plane_size_max: u32,
    /// Most units one cube may have.
    pub max_units_per_cube: u32,
    /// Streaming multiprocessors (compute units), where the runtime says.
    pub multiprocessors: Option<u32>,
    /// Widest vector (in elements) the device loads in one instruction.
    pub max_vector_size: usize,
    /// Cubes that have started keep running while others spin on them. CUDA and HIP promise
    /// it for resident blocks; WebGPU, Metal and Vulkan promise nothing.
    pub forward_progress: bool,
    /// Atomic load/store of 64-bit words (the look-back's status words).
    pub atomic_u64: bool,
    pub f16: bool,
    pub bf16: bool,
    pub i64: bool,
    /// Buffers of 8-bit elements (byte masks).
    pub u8: bool,
}

impl DeviceCaps {
    pub fn of(client: &Client) -> Self {
        let properties = client.properties();
        let hardware = &properties.hardware;
        let runtime = client.name();
        let atomic_u64 = properties
            .atomic_type_usage(Type::atomic(ElemType::UInt(UIntKind::U64)))
            .contains(AtomicUsage::LoadStore);
        DeviceCaps {
            runtime,
            device_name: properties.identity.name.clone(),
            plane_ops: properties.features.plane.contains(Plane::Ops),
            plane_size_min: hardware.plane_size_min,
            plane_size_max: hardware.plane_size_max,
            max_units_per_cube: hardware.max_units_per_cube,
            multiprocessors: hardware.num_streaming_multiprocessors,
            max_vector_size: hardware.max_vector_size,
            forward_progress: matches!(runtime, "cuda" | "hip"),
            atomic_u64,
            f16: supports(client, Dtype::F16),
            bf16: supports(client, Dtype::BF16),
            i64: supports(client, Dtype::I64),
            u8: client
                .properties()
                .supports_type(ElemType::UInt(UIntKind::U8)),
        }
    }

    /// A clear error if `dtype` cannot be scanned on this device.
    pub fn check_dtype(&self, dtype: Dtype) -> Result<(), SieveError> {
        let missing = match dtype {
            Dtype::F16 if !self.f16 => Some("the device has no f16 arithmetic and storage"),
            Dtype::BF16 if !self.bf16 => Some("the device has no bf16 arithmetic and storage"),
            Dtype::I64 if !self.i64 => Some("the device has no 64-bit integers"),
            _ => None,
        };
        match missing {
            Some(reason) => Err(SieveError::UnsupportedDtype {
                dtype,
                device: self.describe(),
                reason,
            }),
            None => Ok(()),
        }
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

    /// `runtime: name`, for messages.
    pub fn describe(&self) -> String {
        format!("{}: {}", self.runtime, self.device_name)
    }
}

fn supports(client: &Client, dtype: Dtype) -> bool {
    client.properties().supports_type(dtype.elem_type())
}
