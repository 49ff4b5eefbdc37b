//! The embedded engines' URL options (`?cache_size=64MiB&sync=true`), parsed
//! alike for every engine so each error names the engine, the option and
//! what it takes.
use crate::url::Target;
use yardstick_core::binding::BindingError;

/// Parses a byte-size URL option of engine `engine`.
pub(crate) fn size_option(
    target: &Target,
    engine: &str,
    name: &str,
) -> Result<Option<u64>, BindingError> {
    target
        .param(name)
        .map(|v| {
            crate::url::parse_bytes(v).ok_or_else(|| {
                BindingError::Config(format!(
                    "{engine} {name}={v} is not a size: write for example {name}=64MiB"
                ))
            })
        })
        .transpose()
}

/// Parses a whole-number URL option of engine `engine` within `range`.
pub(crate) fn int_option(
    target: &Target,
    engine: &str,
    name: &str,
    range: std::ops::RangeInclusive<u64>,
) -> Result<Option<u64>, BindingError> {
    target
        .param(name)
        .map(|v| {
            v.parse::<u64>()
                .ok()
                .filter(|n| range.contains(n))
                .ok_or_else(|| {
                    BindingError::Config(format!(
                        "{engine} {name}={v} is not valid: use a whole number from {} to {}",
                        range.start(),
                        range.end()
                    ))
                })
        })
        .transpose()
}

/// Parses a true/false URL option.
pub(crate) fn bool_option(
    target: &Target,
    engine: &str,
    name: &str,
) -> Result<Option<bool>, BindingError> {
    target
        .param(name)
        .map(|v| match v {
            "true" | "1" | "on" => Ok(true),
            "false" | "0" | "off" => Ok(false),
            _ => Err(BindingError::Config(format!(
                "{engine} {name}={v} is not valid: use true or false"
            ))),
        })
        .transpose()
}

/// Parses an option that must be one of `choices`.
pub(crate) fn choice_option<'a>(
    target: &'a Target,
    engine: &str,
    name: &str,
    choices: &[&str],
) -> Result<Option<&'a str>, BindingError> {
    match target.param(name) {
        None => Ok(None),
        Some(v) if choices.contains(&v) => Ok(Some(v)),
        Some(v) => Err(BindingError::Config(format!(
            "{engine} {name}={v} is not valid: use {}",
            choices.join(", ")
        ))),
    }
}
