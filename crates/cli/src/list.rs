//! `yardstick list`: what this binary can drive and configure; and the
//! `--db` help text, read from the same registry.
use crate::{workloads, CliError, ListWhat};
use clap::Command;
use yardstick_bindings::REGISTRY;
use yardstick_core::workload::properties::PROPERTIES;

pub(crate) fn print(what: ListWhat) -> Result<i32, CliError> {
    let all = what == ListWhat::All;
    if all || what == ListWhat::Bindings {
        println!("bindings (--db URL):");
        for e in REGISTRY {
            match e.descriptor {
                Some(d) => {
                    let mut also: Vec<String> =
                        d.schemes[1..].iter().map(|s| format!("{s}://")).collect();
                    if !d.flavours.is_empty() {
                        also.push(format!("?flavor={}", d.flavours.join("|")));
                    }
                    let also = if also.is_empty() {
                        String::new()
                    } else {
                        format!(" (also {})", also.join(", "))
                    };
                    println!("  {:<10} {}{also}", d.name(), d.description);
                    println!(
                        "             example: {}   options: {}   docs: {}",
                        d.example,
                        if d.options.is_empty() {
                            "none".to_string()
                        } else {
                            d.options.join(", ")
                        },
                        d.docs
                    );
                }
                None => println!(
                    "  {:<10} [not built: --features {}]",
                    e.name,
                    e.feature.unwrap_or(e.name)
                ),
            }
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

/// The command line definition, with every `--db` help naming the schemes
/// this binary drives (under `tpcc`, the ones that run TPC-C).
pub(crate) fn command() -> Command {
    with_db_help(<crate::Cli as clap::CommandFactory>::command(), false)
}

fn with_db_help(mut cmd: Command, tpcc: bool) -> Command {
    let tpcc = tpcc || cmd.get_name() == "tpcc";
    if cmd.get_arguments().any(|a| a.get_id() == "db") {
        let schemes: Vec<String> = REGISTRY
            .iter()
            .filter_map(|e| e.descriptor)
            .filter(|d| !tpcc || d.capabilities.tpcc.is_some())
            .flat_map(|d| d.schemes.iter().map(|s| format!("{s}://")))
            .collect();
        cmd = cmd.mut_arg("db", |a| {
            let help = a.get_help().map(ToString::to_string).unwrap_or_default();
            a.long_help(format!(
                "{help}\n\nSchemes built into this binary: {} (`yardstick list bindings` shows their options)",
                schemes.join(", ")
            ))
        });
    }
    let subs: Vec<String> = cmd
        .get_subcommands()
        .map(|s| s.get_name().to_string())
        .collect();
    for s in subs {
        cmd = cmd.mut_subcommand(s, |sc| with_db_help(sc, tpcc));
    }
    cmd
}
