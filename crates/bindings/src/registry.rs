//! The registry: every binding yardstick knows, each declared once.
//!
//! A binding module describes itself with a [`Descriptor`] (its schemes,
//! flavours, docs page, options and capabilities) and says how it opens
//! through [`Registered`]. The `registry!` invocation in `lib.rs` gives each
//! binding one line, which declares its module, builds it only with its
//! cargo feature, and adds it to [`REGISTRY`]. URL dispatch
//! ([`crate::open`]), `yardstick list`, `--help`, TPC-C dispatch
//! ([`crate::tpcc::open`]) and the docs index all read that table, so adding
//! a database touches nothing else (docs/adding-a-binding.md).
use crate::url::Target;
use yardstick_core::binding::{Binding, BindingError, OpenOptions};

/// What a binding is, for dispatch, `list`, help and the docs index.
#[derive(Debug)]
pub struct Descriptor {
    /// Its URL schemes; the first is its name (and its module's name).
    pub schemes: &'static [&'static str],
    /// The port its server listens on when the URL names none; `None` for an
    /// embedded engine (a library inside the benchmark process).
    pub server_port: Option<u16>,
    /// The engines it drives through `?flavor=` (the first is the default);
    /// empty when it has no flavours.
    pub flavours: &'static [&'static str],
    /// One line for `list` and the docs index.
    pub description: &'static str,
    pub example: &'static str,
    /// Its page under docs/ (a path from the repository root).
    pub docs: &'static str,
    /// The URL query options it accepts; anything else is refused.
    pub options: &'static [&'static str],
    pub capabilities: Capabilities,
}

impl Descriptor {
    pub fn name(&self) -> &'static str {
        self.schemes[0]
    }
}

/// What a binding can do beyond the YCSB operations every binding runs.
#[derive(Debug, Clone, Copy)]
pub struct Capabilities {
    /// A bulk path for `--batch` loads (multi-row INSERT, COPY, pipelines,
    /// write batches) rather than the one-by-one default.
    pub batch_load: bool,
    /// Ordered scans (workload E); bindings without them refuse a scan mix.
    pub scan: bool,
    /// `yardstick tpcc`: how to open a TPC-C connection, when it has one.
    pub tpcc: Option<crate::tpcc::Support>,
}

/// A binding that can be opened from a parsed target URL.
pub trait Registered: Binding + Sized {
    const DESCRIPTOR: Descriptor;
    /// Connects (or opens files) and prepares the schema `opts` describes.
    fn open(target: &Target, opts: &OpenOptions) -> Result<Self, BindingError>;

    /// The database's statistics for a run that does not open the binding
    /// (TPC-C), from the URL alone; `None` when it has none.
    fn statistics(_target: &Target) -> Option<Box<dyn yardstick_core::observe::Source>> {
        None
    }
}

/// One row of the registry.
#[derive(Debug)]
pub struct Entry {
    /// Its module's name, which is its first scheme.
    pub name: &'static str,
    /// The cargo feature that builds it; `None` when always built.
    pub feature: Option<&'static str>,
    /// The Debian packages it links (empty for pure Rust).
    pub links: &'static str,
    /// `None` when this binary was built without it.
    pub descriptor: Option<&'static Descriptor>,
}

impl Entry {
    /// Whether `scheme` (lower case) names this binding.
    pub fn accepts(&self, scheme: &str) -> bool {
        match self.descriptor {
            Some(d) => d.schemes.contains(&scheme),
            None => self.name == scheme,
        }
    }
}

/// The built binding `scheme` names, or the error that says why there is none.
pub fn find(scheme: &str) -> Result<&'static Descriptor, BindingError> {
    match crate::REGISTRY.iter().find(|e| e.accepts(scheme)) {
        Some(Entry {
            descriptor: Some(d),
            ..
        }) => Ok(d),
        Some(e) => Err(not_built(e.name, e.feature.unwrap_or(e.name), e.links)),
        None => Err(BindingError::Config(format!(
            "unknown database scheme '{scheme}://'; known schemes: {}",
            crate::REGISTRY
                .iter()
                .filter_map(|e| e.descriptor)
                .map(Descriptor::name)
                .collect::<Vec<_>>()
                .join(", ")
        ))),
    }
}

/// The servers a URL names, as `host:port` (the binding's default port
/// where it names none), or `None` for an embedded engine. Reads the URL's
/// authority the way every network binding writes it: `user:password@` left
/// out, hosts separated by commas.
pub fn servers(url: &str) -> Result<Option<Vec<String>>, BindingError> {
    let target = Target::parse(url)?;
    let Some(port) = find(&target.scheme)?.server_port else {
        return Ok(None);
    };
    let authority = target.rest.split(['/', '?']).next().unwrap_or("");
    let hosts = authority.rsplit('@').next().unwrap_or("");
    let list = hosts
        .split(',')
        .filter(|h| !h.is_empty())
        .map(|h| crate::url::host_port(h, port, &target.scheme))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Some(if list.is_empty() {
        vec![format!("localhost:{port}")]
    } else {
        list
    }))
}

/// A known binding this binary was built without: the feature to build it
/// with and, for the engines that link Debian's libraries (the only ones the
/// default build leaves out), the packages they need.
fn not_built(name: &str, feature: &str, links: &str) -> BindingError {
    if links.is_empty() {
        return BindingError::Unsupported(format!(
            "{name}:// is not built into this binary: rebuild with --features {feature}"
        ));
    }
    BindingError::Unsupported(format!(
        "{name}:// is not built into this binary: it links a system library; \
         apt-get install {links}, then cargo install --path . --features {feature}"
    ))
}

/// Declares each binding's module, behind its feature, and builds
/// [`REGISTRY`] and the URL dispatch from the same lines.
macro_rules! registry {
    (
        always: $($amod:ident :: $aty:ident),* ;
        $( $feature:literal $(links $links:literal)? => $mod:ident :: $ty:ident ),* $(,)?
    ) => {
        $( pub mod $amod; )*
        $( #[cfg(feature = $feature)] pub mod $mod; )*

        /// Every binding yardstick knows, built into this binary or not.
        pub static REGISTRY: &[$crate::registry::Entry] = &[
            $(
                $crate::registry::Entry {
                    name: stringify!($amod),
                    feature: None,
                    links: "",
                    descriptor: Some(&<$amod::$aty as $crate::registry::Registered>::DESCRIPTOR),
                },
            )*
            $(
                $crate::registry::Entry {
                    name: stringify!($mod),
                    feature: Some($feature),
                    links: concat!("" $(, $links)?),
                    #[cfg(feature = $feature)]
                    descriptor: Some(&<$mod::$ty as $crate::registry::Registered>::DESCRIPTOR),
                    #[cfg(not(feature = $feature))]
                    descriptor: None,
                },
            )*
        ];

        /// Opens the built binding `target` names and hands it to `visitor`.
        fn dispatch<V: WithBinding>(
            target: &$crate::url::Target,
            opts: &OpenOptions,
            visitor: V,
        ) -> Result<V::Output, BindingError> {
            let name = $crate::registry::find(&target.scheme)?.name();
            $(
                if name == stringify!($amod) {
                    let b = <$amod::$aty as $crate::registry::Registered>::open(target, opts)?;
                    return Ok(visitor.call(std::sync::Arc::new(b)));
                }
            )*
            $(
                #[cfg(feature = $feature)]
                if name == stringify!($mod) {
                    let b = <$mod::$ty as $crate::registry::Registered>::open(target, opts)?;
                    return Ok(visitor.call(std::sync::Arc::new(b)));
                }
            )*
            // find() returns only built entries, each of which has a line above
            Err(BindingError::Unsupported(format!("{name}:// has no dispatch line in this build")))
        }

        /// The statistics source of the built binding `target` names.
        fn dispatch_statistics(
            target: &$crate::url::Target,
        ) -> Option<Box<dyn yardstick_core::observe::Source>> {
            let name = $crate::registry::find(&target.scheme).ok()?.name();
            $(
                if name == stringify!($amod) {
                    return <$amod::$aty as $crate::registry::Registered>::statistics(target);
                }
            )*
            $(
                #[cfg(feature = $feature)]
                if name == stringify!($mod) {
                    return <$mod::$ty as $crate::registry::Registered>::statistics(target);
                }
            )*
            None
        }
    };
}
pub(crate) use registry;

/// docs/bindings/README.md's table: one row per binding, from the registry
/// (a test keeps the page equal to it).
#[cfg(test)]
pub(crate) fn docs_index() -> String {
    let mut t = String::from(
        "| scheme | flavours | batch load | scan | TPC-C | cargo feature | page |\n|---|---|---|---|---|---|---|\n",
    );
    for e in crate::REGISTRY {
        t.push_str(&index_row(e).unwrap_or_default());
    }
    t
}

/// One row of [`docs_index`]; `None` for a binding this binary lacks.
#[cfg(test)]
pub(crate) fn index_row(e: &Entry) -> Option<String> {
    let d = e.descriptor?;
    let yes = |b: bool| if b { "yes" } else { "no" };
    // `xs` as code spans, each followed by `suffix`
    let list = |xs: &[&str], suffix: &str| {
        xs.iter()
            .map(|x| format!("`{x}{suffix}`"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let page = d.docs.trim_start_matches("docs/bindings/");
    let feature = match (e.feature, e.links) {
        (None, _) => "always built".to_string(),
        (Some(f), "") => format!("`{f}` (default)"),
        (Some(f), links) => format!("`{f}` (links {links})"),
    };
    Some(format!(
        "| {} | {} | {} | {} | {} | {feature} | [{page}]({page}) |\n",
        list(d.schemes, "://"),
        if d.flavours.is_empty() {
            "-".to_string()
        } else {
            list(d.flavours, "")
        },
        yes(d.capabilities.batch_load),
        yes(d.capabilities.scan),
        yes(d.capabilities.tpcc.is_some()),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::REGISTRY;

    #[test]
    fn an_engine_left_out_names_its_feature_and_packages() {
        let e = not_built("rocksdb", "rocksdb", "librocksdb-dev libclang-dev").to_string();
        assert!(
            e.contains("apt-get install librocksdb-dev libclang-dev, then cargo install --path . --features rocksdb"),
            "{e}"
        );
        let e = not_built("mongodb", "mongodb", "").to_string();
        assert!(e.contains("rebuild with --features mongodb"), "{e}");
    }

    #[test]
    fn unknown_schemes_list_the_known_ones() {
        let e = find("oracle").unwrap_err().to_string();
        assert!(
            e.contains("unknown database scheme 'oracle://'")
                && e.contains("null")
                && e.contains("sqlite"),
            "{e}"
        );
    }

    /// The page's table must be what the registry says; with every feature
    /// built (as CI builds) the whole table, otherwise the rows built here.
    #[test]
    fn the_docs_index_is_the_registry() {
        let path =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/bindings/README.md");
        let page = std::fs::read_to_string(&path).unwrap();
        if REGISTRY.iter().all(|e| e.descriptor.is_some()) {
            assert!(
                page.contains(&docs_index()),
                "{} is out of date; its table should be:\n{}",
                path.display(),
                docs_index()
            );
        }
        for e in REGISTRY {
            if let Some(row) = index_row(e) {
                assert!(
                    page.contains(&row),
                    "{} lacks the row\n{row}",
                    path.display()
                );
            }
        }
    }

    #[test]
    fn every_entry_is_named_after_its_module_and_has_a_docs_page() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let mut names = std::collections::BTreeSet::new();
        for e in REGISTRY {
            assert!(names.insert(e.name), "{} registered twice", e.name);
            if let Some(d) = e.descriptor {
                assert_eq!(d.name(), e.name, "the first scheme is the module's name");
                assert!(
                    root.join(d.docs).is_file(),
                    "{}: no docs page {}",
                    d.name(),
                    d.docs
                );
                assert!(d.example.starts_with(&format!("{}://", d.name())));
                assert!(find(d.name()).is_ok());
                for s in d.schemes {
                    assert_eq!(find(s).unwrap().name(), d.name(), "alias {s}");
                }
            }
        }
    }
}

#[cfg(test)]
mod server_tests {
    use super::*;

    #[test]
    fn a_url_names_its_servers_with_the_default_port_where_it_gives_none() {
        let s = |u: &str| servers(u).unwrap();
        assert_eq!(
            s("mysql://bench:pw@127.0.0.1:53306/ycsb?engine=rocksdb"),
            Some(vec!["127.0.0.1:53306".to_string()])
        );
        assert_eq!(
            s("mysql://bench:pw@127.0.0.1/ycsb"),
            Some(vec!["127.0.0.1:3306".to_string()])
        );
        // a password with an @ in it, and a cluster of hosts
        assert_eq!(
            s("redis://:p@ss@10.0.0.1:7000,10.0.0.2"),
            Some(vec![
                "10.0.0.1:7000".to_string(),
                "10.0.0.2:6379".to_string()
            ])
        );
        assert_eq!(
            s("hbase://127.0.0.1:59090?info=127.0.0.1:56010"),
            Some(vec!["127.0.0.1:59090".to_string()])
        );
        assert_eq!(s("null://"), None);
        assert_eq!(s("sqlite:///tmp/x.db"), None);
        assert!(servers("mysql://h:99999/db").is_err());
        assert!(servers("oracle://h/db").is_err());
    }
}
