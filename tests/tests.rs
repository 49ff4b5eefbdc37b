//! yardstick's end-to-end tests, as one test binary (one build and link
//! instead of one per file): each module below is one area, run against the
//! real `yardstick` binary and, for the server bindings, the servers
//! `scripts/services` starts on loopback. `common` holds the fixtures every
//! module shares, `faults` the runs with a server killed or stopped in the
//! middle.
mod common;
mod faults;

mod bad_input;
mod catalogue;
mod cli_errors;
mod cli_measurement;
mod cli_run;
mod compare;
mod cql;
mod deploy;
mod embedded;
mod etcd;
mod hbase;
mod instances;
mod kv_servers;
mod matrix;
mod memory_limit;
mod merge;
mod metrics;
mod mongodb;
mod mysql;
mod observe;
mod observe_sources;
mod output;
mod postgres;
mod report;
mod schedule;
mod schema;
mod scripts;
mod secrets;
mod server_memory;
mod signals;
mod suite;
mod tpcc;
mod trace;
mod verify;
