//! The integration tests, as one test binary: every family's raw API and its Burn ops against
//! CPU references. One binary links Burn and the kernels once, so CI links one program and a
//! GPU call carries (and runs under compute-sanitizer) one file per runtime.

mod common;

mod backends;
mod burn_ops;
mod compact;
mod cumulative;
mod dims;
mod dtypes_ops;
mod dtypes_scan;
mod dtypes_sort;
mod filter_ops;
mod huge;
mod index_dtypes;
mod props;
mod sampling;
mod scan;
mod scans;
mod sets;
mod small_devices;
mod sort;
mod sort_ops;
mod soundness;
mod split_ops;
mod topk;
mod topk_ops;
