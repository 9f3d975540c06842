//! Which of Burn's backends this build of sieve-burn has code for, and the panic for a tensor
//! on one it has none for.
//!
//! Burn's `#[backend_extension]` routes a `Dispatch` tensor to the backends the trait lists
//! (`crate::ops`) and ends with `unimplemented!` for any other. That happens when Burn was built
//! with a backend feature sieve-burn was not (a user turns on `burn/cuda` but not
//! `sieve-burn/cuda`). `crate::ops` puts [`unserved`] in that arm's place, so the panic names
//! the backend and the sieve-burn feature to turn on.
//!
//! The generated arm sees no tensor, so the backend is found by elimination: those Burn was
//! built with (`DispatchDeviceId::try_from` accepts exactly those) less those this build
//! serves. Usually that leaves one.

use burn::backend::DispatchDeviceId;

/// Every backend of Burn's dispatch, in the order messages list them.
const ALL: [DispatchDeviceId; 6] = [
    DispatchDeviceId::Cube,
    DispatchDeviceId::Flex,
    DispatchDeviceId::NdArray,
    DispatchDeviceId::LibTorch,
    DispatchDeviceId::Remote,
    DispatchDeviceId::Capture,
];

/// Whether this build of sieve-burn has code (kernels or stock-op fallbacks) for `backend`.
fn serves(backend: DispatchDeviceId) -> bool {
    match backend {
        DispatchDeviceId::Cube => cfg!(feature = "cube"),
        DispatchDeviceId::Flex => cfg!(feature = "flex"),
        DispatchDeviceId::NdArray => cfg!(feature = "ndarray"),
        DispatchDeviceId::LibTorch => cfg!(feature = "tch"),
        DispatchDeviceId::Remote => cfg!(feature = "remote"),
        // Capture records graphs without running them; the fallbacks read data (the sort).
        DispatchDeviceId::Capture => false,
    }
}

/// Whether Burn was built with `backend` (its feature is on somewhere in the build).
fn burn_has(backend: DispatchDeviceId) -> bool {
    DispatchDeviceId::try_from(u16::from(backend)).is_ok()
}

/// The backend's name and what to do about it.
fn advice(backend: DispatchDeviceId) -> (&'static str, &'static str) {
    match backend {
        DispatchDeviceId::Cube => (
            "Cube (CubeCL)",
            "enable the sieve-burn feature named like burn's runtime feature (`wgpu`, `vulkan`, \
             `webgpu`, `metal`, `cuda`, `rocm`; sieve-burn has none for burn's `cpu` runtime) \
             (burn has a CubeCL runtime on, sieve-burn has none)",
        ),
        DispatchDeviceId::Flex => (
            "Flex",
            "enable sieve-burn's `flex` feature (burn's `flex` is on, sieve-burn's is not)",
        ),
        DispatchDeviceId::NdArray => (
            "NdArray",
            "enable sieve-burn's `ndarray` feature (burn's `ndarray` is on, sieve-burn's is not)",
        ),
        DispatchDeviceId::LibTorch => (
            "LibTorch",
            "enable sieve-burn's `tch` feature (burn's `tch` is on, sieve-burn's is not)",
        ),
        DispatchDeviceId::Remote => (
            "Remote",
            "enable sieve-burn's `remote` feature (burn's `remote` is on, sieve-burn's is not)",
        ),
        DispatchDeviceId::Capture => (
            "Capture",
            "sieve-burn has no code for Burn's graph capture (its ops read data or run kernels); \
             run them on an executing backend",
        ),
    }
}

/// The functions that call a trait op, where their names are not the op's own.
const CALLERS: [(&str, &str); 8] = [
    ("cumulative", "cumsum/cumprod/cummin/cummax"),
    ("compact", "mask_select_padded/compact_rows"),
    ("mask_select_count", "mask_select"),
    ("argwhere_count", "argwhere/nonzero"),
    ("argwhere", "argwhere/nonzero"),
    ("run_starts_count", "unique/unique_consecutive"),
    ("run_starts", "unique/unique_consecutive"),
    ("partition", "stable_partition"),
];

/// The panic message for trait op `op` (`sieve_sort`, `sieve_argwhere_count`, ...) on a tensor
/// of one of `candidates`, the backends Burn has and this build does not serve.
fn message(op: &str, candidates: &[DispatchDeviceId]) -> String {
    // `sieve_sort` -> "sieve_burn::sort"; `sieve_int_split_by_bit` -> "sieve_burn::split_by_bit
    // (int tensor)"; `sieve_cumulative` -> "sieve_burn::cumsum/cumprod/cummin/cummax".
    let op = op.strip_prefix("sieve_").unwrap_or(op);
    let head = ["int", "bool"]
        .into_iter()
        .find_map(|kind| {
            let rest = op.strip_prefix(kind)?.strip_prefix('_')?;
            Some(format!("sieve_burn::{rest} ({kind} tensor)"))
        })
        .unwrap_or_else(|| {
            let name = CALLERS
                .into_iter()
                .find(|(trait_op, _)| *trait_op == op)
                .map_or(op, |(_, callers)| callers);
            format!("sieve_burn::{name}")
        });
    match candidates {
        [] => format!(
            "{head}: this build has no code for the tensor's backend (sieve-burn serves: {})",
            served_names()
        ),
        [backend] => {
            let (name, advice) = advice(*backend);
            format!("{head}: this build has no code for the {name} backend: {advice}")
        }
        several => {
            let each: Vec<String> = several
                .iter()
                .map(|backend| {
                    let (name, advice) = advice(*backend);
                    format!("{name}: {advice}")
                })
                .collect();
            format!(
                "{head}: the tensor is on a backend this build has no code for, one of: {}",
                each.join("; ")
            )
        }
    }
}

fn served_names() -> String {
    let names: Vec<&str> = ALL
        .into_iter()
        .filter(|backend| serves(*backend))
        .map(|backend| advice(backend).0)
        .collect();
    if names.is_empty() {
        "none".into()
    } else {
        names.join(", ")
    }
}

/// Panics for trait op `op` on a tensor of a backend this build has no code for (the arm
/// `#[backend_extension]` leaves to `unimplemented!`).
#[track_caller]
pub(crate) fn unserved(op: &str) -> ! {
    let candidates: Vec<DispatchDeviceId> = ALL
        .into_iter()
        .filter(|backend| burn_has(*backend) && !serves(*backend))
        .collect();
    panic!("{}", message(op, &candidates))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_candidate_names_its_feature() {
        let text = message("sieve_sort_with_indices", &[DispatchDeviceId::NdArray]);
        assert_eq!(
            text,
            "sieve_burn::sort_with_indices: this build has no code for the NdArray backend: \
             enable sieve-burn's `ndarray` feature (burn's `ndarray` is on, sieve-burn's is not)"
        );
        let text = message("sieve_cumulative", &[DispatchDeviceId::Cube]);
        assert!(
            text.starts_with(
                "sieve_burn::cumsum/cumprod/cummin/cummax: this build has no code for the Cube"
            ),
            "{text}"
        );
        assert!(text.contains("`cuda`"), "{text}");
        let text = message("sieve_int_split_by_bit", &[DispatchDeviceId::Flex]);
        assert!(
            text.starts_with(
                "sieve_burn::split_by_bit (int tensor): this build has no code for the Flex"
            ),
            "{text}"
        );
        let text = message("sieve_argwhere_count", &[DispatchDeviceId::Remote]);
        assert!(text.contains("argwhere/nonzero") && text.contains("`remote` feature"));
        let text = message("sieve_topk", &[DispatchDeviceId::LibTorch]);
        assert!(text.contains("LibTorch backend: enable sieve-burn's `tch` feature"));
    }

    #[test]
    fn several_candidates_are_all_named() {
        let text = message(
            "sieve_compact",
            &[DispatchDeviceId::Cube, DispatchDeviceId::LibTorch],
        );
        assert!(text.contains("one of: Cube (CubeCL): "), "{text}");
        assert!(
            text.contains("; LibTorch: enable sieve-burn's `tch`"),
            "{text}"
        );
    }

    #[test]
    fn every_backend_has_a_name_and_a_feature_or_a_reason() {
        for backend in ALL {
            let (name, advice) = advice(backend);
            assert!(!name.is_empty() && !advice.is_empty());
            assert_eq!(
                burn_has(backend),
                DispatchDeviceId::try_from(backend as u16).is_ok()
            );
        }
        // What this build serves, Burn must have been built with (each sieve-burn backend
        // feature turns on Burn's).
        for backend in ALL.into_iter().filter(|backend| serves(*backend)) {
            assert!(burn_has(backend), "{backend:?} served but not in burn");
        }
    }
}
