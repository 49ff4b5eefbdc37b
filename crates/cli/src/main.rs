//! The `yardstick` command. Everything lives in the library so it is testable.
/// mimalloc: the client's threads allocate per request in the drivers, and
/// glibc's allocator spent a quarter of the client's CPU on TPC-C. Built
/// with `no_thp` (Cargo.toml): its arenas asked for transparent huge pages,
/// so every touched region took 2 MiB, and a null:// run peaked at 35 MiB
/// instead of 15.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    std::process::exit(yardstick_cli::main_with_args(std::env::args_os().collect()));
}
