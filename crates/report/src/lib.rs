//! yardstick's output formats for one result: the human summary table and
//! YCSB's own text format (so existing parsing scripts keep working).
pub mod fmt;
pub mod html;
pub mod nodes;
pub mod observed;
mod section;
pub mod summary;
pub mod svg;
pub mod tpcc;
pub mod ycsb;

pub use summary::summary_table;
pub use ycsb::ycsb_text;
