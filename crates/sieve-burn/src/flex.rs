//! Flex (Burn's pure-Rust CPU backend) has no sieve kernels: the trait's default bodies, built
//! from stock Burn ops, serve it.

use burn::backend::Flex;

use crate::SieveOps;

impl SieveOps for Flex {}
