//! The fork's single join on Ballista: lookups run by a standalone scheduler
//! and executor over data spread over several files, each compared with the
//! same query run locally, and physical plans holding single joins through
//! the serialization that carries them between scheduler and executors; and
//! the client's in-memory tables read by distributed queries.

mod data;
mod lookups;
mod memory_tables;
mod plan_round_trip;
