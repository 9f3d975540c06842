//! The radix parts the sort and the top-k share: order-preserving radix keys for every dtype
//! ([`keys`]) and a cube's digit bins with the most-significant-digit select over them
//! ([`digits`]). The sort ranks tiles by digit (`sort::tile`) on these keys; the top-k's
//! selects find a row's boundary key digit by digit with [`digits::select_digit()`].

// `#[cube] pub fn f` also emits a public `mod f`, which CubeCL gives no docs (see `common`).
#[allow(missing_docs)]
pub mod digits;
#[allow(missing_docs)]
pub mod keys;
