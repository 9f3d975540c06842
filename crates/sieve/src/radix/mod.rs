//! The radix parts the sort and the top-k share: order-preserving radix keys for every dtype
//! ([`keys`]), a cube's digit bins ([`digits`]), a tile of radix keys and its striped load
//! ([`tile`]) and the most-significant-digit select ([`select`]). The sort ranks tiles by digit
//! (`sort::tile`) on these keys and bins; the top-k's selects find a row's boundary key digit by
//! digit with [`select::select_digit()`].

// `#[cube] pub fn f` also emits a public `mod f`, which CubeCL gives no docs (see `common`).
#[allow(missing_docs)]
pub mod digits;
#[allow(missing_docs)]
pub mod keys;
#[allow(missing_docs)]
pub mod select;
#[allow(missing_docs)]
pub mod tile;
