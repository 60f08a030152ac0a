//! Workloads shared by the fork's benchmarks and their tests: the TPC-H and
//! TPC-DS queries from upstream's test data (linked into the tree by
//! `cargo xtask sync`), and contexts with their tables registered, empty, for
//! planning.

pub mod plans;
pub mod tpc;
