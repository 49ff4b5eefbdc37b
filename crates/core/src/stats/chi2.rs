//! Goodness-of-fit tests used by the generators' statistical tests: Pearson's
//! chi-squared against expected counts and the one-sample Kolmogorov-Smirnov
//! statistic against a CDF, both judged at the 0.1% significance level.

/// Outcome of a goodness-of-fit test.
#[derive(Debug, Clone, Copy)]
pub(crate) struct FitTest {
    pub statistic: f64,
    /// The statistic above which the fit is rejected at alpha = 0.001.
    pub critical: f64,
}

impl FitTest {
    pub(crate) fn passes(&self) -> bool {
        self.statistic <= self.critical
    }
}

/// Upper 0.1% quantile of the chi-squared distribution (Wilson-Hilferty).
pub(crate) fn chi2_critical_001(df: usize) -> f64 {
    let k = df as f64;
    let z = 3.090_232; // standard normal upper 0.1% point
    let a = 2.0 / (9.0 * k);
    k * (1.0 - a + z * a.sqrt()).powi(3)
}

/// Pearson's chi-squared test. Cells with an expected count below 5 are pooled
/// into their neighbour so the approximation holds.
pub(crate) fn chi_squared(observed: &[f64], expected: &[f64]) -> FitTest {
    assert_eq!(observed.len(), expected.len());
    let mut stat = 0.0;
    let mut cells = 0usize;
    let (mut o_acc, mut e_acc) = (0.0, 0.0);
    for (o, e) in observed.iter().zip(expected) {
        o_acc += o;
        e_acc += e;
        if e_acc >= 5.0 {
            stat += (o_acc - e_acc) * (o_acc - e_acc) / e_acc;
            cells += 1;
            o_acc = 0.0;
            e_acc = 0.0;
        }
    }
    if e_acc > 0.0 {
        stat += (o_acc - e_acc) * (o_acc - e_acc) / e_acc.max(1e-12);
        cells += 1;
    }
    let df = cells.saturating_sub(1).max(1);
    FitTest {
        statistic: stat,
        critical: chi2_critical_001(df),
    }
}

/// One-sample Kolmogorov-Smirnov test of `samples` against a continuous `cdf`.
pub(crate) fn kolmogorov_smirnov(samples: &mut [f64], cdf: impl Fn(f64) -> f64) -> FitTest {
    samples.sort_by(|a, b| a.total_cmp(b));
    let n = samples.len() as f64;
    let mut d: f64 = 0.0;
    for (i, &x) in samples.iter().enumerate() {
        let f = cdf(x);
        d = d.max(f - i as f64 / n).max((i as f64 + 1.0) / n - f);
    }
    FitTest {
        statistic: d,
        // asymptotic critical value of D at alpha = 0.001
        critical: 1.949 / n.sqrt(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn critical_values_match_tables() {
        // chi-squared 0.999 quantiles: df=10 -> 29.59, df=100 -> 149.45
        assert!((chi2_critical_001(10) - 29.59).abs() < 0.3);
        assert!((chi2_critical_001(100) - 149.45).abs() < 0.5);
    }

    #[test]
    fn chi_squared_rejects_a_wrong_distribution() {
        let observed = [900.0, 100.0];
        let expected = [500.0, 500.0];
        assert!(!chi_squared(&observed, &expected).passes());
    }

    #[test]
    fn ks_rejects_a_wrong_distribution() {
        let mut samples: Vec<f64> = (0..1000).map(|i| (i as f64 / 1000.0).powi(2)).collect();
        assert!(!kolmogorov_smirnov(&mut samples, |x| x.clamp(0.0, 1.0)).passes());
        let mut uniform: Vec<f64> = (0..1000).map(|i| (i as f64 + 0.5) / 1000.0).collect();
        assert!(kolmogorov_smirnov(&mut uniform, |x| x.clamp(0.0, 1.0)).passes());
    }
}
