//! The YCSB core workload: properties, configuration, keys and the per-slot
//! operation stream.
mod ahead;
pub mod config;
pub mod keys;
pub mod ledger;
pub mod properties;
pub mod stream;

pub use config::{CoreConfig, LengthDistribution, RequestDistribution};
pub use ledger::{Fate, InsertLedger};
pub use properties::{Properties, PropertyError};
pub use stream::PlannedOp;
pub use stream::{Phase, SharedState, Stream};
