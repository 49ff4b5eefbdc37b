//! The `yardstick` command. Everything lives in the library so it is testable.
fn main() {
    std::process::exit(yardstick_cli::main_with_args(std::env::args_os().collect()));
}
