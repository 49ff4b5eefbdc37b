//! TLS for the network bindings, built by the `tls` feature that a binding
//! needing it names in its own feature list.
// not every TLS binding uses every helper: a build with only some of them
// leaves the rest unused
#![cfg_attr(
    not(all(feature = "postgres", feature = "memcached", feature = "cql")),
    allow(dead_code)
)]
use std::sync::Arc;
use yardstick_core::binding::BindingError;

/// Makes ring the process's rustls crypto provider. Drivers that build their
/// TLS configuration with `rustls::ClientConfig::builder()` need one, and a
/// build that also links aws-lc-rs (the scylla driver enables it) leaves rustls
/// unable to choose; the first installation wins, so calling it again is free.
pub(crate) fn use_ring_for_tls() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}

/// A rustls client configuration trusting `ca` (a PEM file, given by URL option
/// `option`), or the system's roots; `insecure` accepts any certificate (testing only).
pub(crate) fn tls_config(
    option: &str,
    ca: Option<&str>,
    insecure: bool,
) -> Result<rustls::ClientConfig, BindingError> {
    use rustls::pki_types::{pem::PemObject, CertificateDer};
    let mut roots = rustls::RootCertStore::empty();
    match ca {
        Some(path) => {
            let certs = CertificateDer::pem_file_iter(path)
                .and_then(|it| it.collect::<Result<Vec<_>, _>>())
                .map_err(|e| {
                    BindingError::Config(format!(
                        "cannot read {option}={path}: {e}; give the PEM file of the CA that signed the server's certificate"
                    ))
                })?;
            for c in certs {
                roots.add(c).map_err(|e| {
                    BindingError::Config(format!(
                        "{option}={path} holds an unusable certificate: {e}"
                    ))
                })?;
            }
        }
        None => {
            for c in rustls_native_certs::load_native_certs().certs {
                let _ = roots.add(c);
            }
        }
    }
    // the ring provider named explicitly: a driver that enables rustls's default
    // features also compiles aws-lc-rs in, and then rustls cannot pick one itself
    let mut cfg = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .map_err(|e| BindingError::Config(format!("cannot configure TLS: {e}")))?
    .with_root_certificates(roots)
    .with_no_client_auth();
    if insecure {
        cfg.dangerous()
            .set_certificate_verifier(Arc::new(AcceptAnyCertificate::new()));
    }
    Ok(cfg)
}

/// A certificate verifier that accepts any server certificate (`tls_insecure=true`):
/// encryption without authentication, for test servers with ad-hoc certificates.
#[derive(Debug)]
pub(crate) struct AcceptAnyCertificate(rustls::crypto::WebPkiSupportedAlgorithms);

impl AcceptAnyCertificate {
    pub(crate) fn new() -> Self {
        AcceptAnyCertificate(
            rustls::crypto::ring::default_provider().signature_verification_algorithms,
        )
    }
}

impl Default for AcceptAnyCertificate {
    fn default() -> Self {
        Self::new()
    }
}

impl rustls::client::danger::ServerCertVerifier for AcceptAnyCertificate {
    fn verify_server_cert(
        &self,
        _: &rustls::pki_types::CertificateDer<'_>,
        _: &[rustls::pki_types::CertificateDer<'_>],
        _: &rustls::pki_types::ServerName<'_>,
        _: &[u8],
        _: rustls::pki_types::UnixTime,
    ) -> Result<rustls::client::danger::ServerCertVerified, rustls::Error> {
        Ok(rustls::client::danger::ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &rustls::pki_types::CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(message, cert, dss, &self.0)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &rustls::pki_types::CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(message, cert, dss, &self.0)
    }

    fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
        self.0.supported_schemes()
    }
}
