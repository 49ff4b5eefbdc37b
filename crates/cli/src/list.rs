//! `yardstick list`: what this binary can drive and configure.
use crate::{workloads, CliError, ListWhat};
use yardstick_bindings::SCHEMES;
use yardstick_core::workload::properties::PROPERTIES;

pub fn print(what: ListWhat) -> Result<i32, CliError> {
    let all = what == ListWhat::All;
    if all || what == ListWhat::Bindings {
        println!("bindings (--db URL):");
        for s in SCHEMES {
            let state = if s.built {
                String::new()
            } else {
                format!(" [not built: --features {}]", s.feature.unwrap_or(s.scheme))
            };
            println!("  {:<8} {}{}", s.scheme, s.description, state);
            println!(
                "           example: {}   options: {}",
                s.example,
                if s.options.is_empty() {
                    "none".to_string()
                } else {
                    s.options.join(", ")
                }
            );
        }
        println!("  (no --db: SQLite in a temporary directory)");
    }
    if all || what == ListWhat::Workloads {
        if all {
            println!();
        }
        println!("built-in workloads (-P NAME, or -P path/to/file):");
        for (name, text) in workloads::BUILTIN {
            println!("  {name}  {}", workloads::description(text));
        }
    }
    if all || what == ListWhat::Properties {
        if all {
            println!();
        }
        println!("properties (-p name=value), with defaults:");
        for p in PROPERTIES {
            let default = if p.default.is_empty() {
                "(derived)"
            } else {
                p.default
            };
            println!("  {:<40} {:<34} {}", p.name, default, p.doc);
        }
    }
    Ok(0)
}
