//! The Beta distribution arithmetic of `memory_utility_reducer_v1`: the regularized
//! incomplete beta function `I_x(a, b)` (the Beta CDF) and its inverse, the quantile.
//! Plain `f64` arithmetic with a fixed number of steps for a given input, so a result
//! depends on its inputs only. Pure; no allocation.

/// Lanczos coefficients (g = 7, nine terms) for `ln Γ`.
const LANCZOS: [f64; 9] = [
    0.999_999_999_999_809_9,
    676.520_368_121_885_1,
    -1_259.139_216_722_402_8,
    771.323_428_777_653_1,
    -176.615_029_162_140_6,
    12.507_343_278_686_905,
    -0.138_571_095_265_720_12,
    9.984_369_578_019_572e-6,
    1.505_632_735_149_311_6e-7,
];

/// `ln(2π) / 2`.
const HALF_LN_TWO_PI: f64 = 0.918_938_533_204_672_8;

/// Continued-fraction steps before [`inc_beta`] settles for what it has (never reached
/// for the weights a subject can carry: the fraction converges in about `√(a + b)`
/// steps).
const MAX_FRACTION_STEPS: usize = 20_000;
/// Relative change at which the continued fraction has converged.
const FRACTION_EPSILON: f64 = 1e-15;
/// Smallest magnitude the modified Lentz method lets a denominator take.
const TINY: f64 = 1e-300;
/// Quantile search steps (bisection, sped up by Newton steps that stay in the bracket).
const MAX_QUANTILE_STEPS: usize = 200;

/// `ln Γ(x)` for `x ≥ 0.5` (the Lanczos approximation; relative error about 1e-15).
pub fn ln_gamma(x: f64) -> f64 {
    let z = x - 1.0;
    let mut sum = LANCZOS[0];
    for (i, c) in LANCZOS.iter().enumerate().skip(1) {
        sum += c / (z + i as f64);
    }
    let t = z + 7.5;
    HALF_LN_TWO_PI + (z + 0.5) * t.ln() - t + sum.ln()
}

/// `ln B(a, b)`.
pub fn ln_beta(a: f64, b: f64) -> f64 {
    ln_gamma(a) + ln_gamma(b) - ln_gamma(a + b)
}

/// The continued fraction of `I_x(a, b)` (modified Lentz), for `x < (a + 1) / (a + b + 2)`.
fn fraction(x: f64, a: f64, b: f64) -> f64 {
    let clamp = |v: f64| if v.abs() < TINY { TINY } else { v };
    let qab = a + b;
    let qap = a + 1.0;
    let qam = a - 1.0;
    let mut c = 1.0;
    let mut d = 1.0 / clamp(1.0 - qab * x / qap);
    let mut h = d;
    for m in 1..=MAX_FRACTION_STEPS {
        let m = m as f64;
        let m2 = 2.0 * m;
        let even = m * (b - m) * x / ((qam + m2) * (a + m2));
        d = 1.0 / clamp(1.0 + even * d);
        c = clamp(1.0 + even / c);
        h *= d * c;
        let odd = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
        d = 1.0 / clamp(1.0 + odd * d);
        c = clamp(1.0 + odd / c);
        let step = d * c;
        h *= step;
        if (step - 1.0).abs() < FRACTION_EPSILON {
            break;
        }
    }
    h
}

/// The regularized incomplete beta function `I_x(a, b)`, the CDF of Beta(a, b) at `x`,
/// for `a, b ≥ 1`; `ln_b` is [`ln_beta`]`(a, b)`.
pub fn inc_beta(x: f64, a: f64, b: f64, ln_b: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    let front = (a * x.ln() + b * (1.0 - x).ln() - ln_b).exp();
    if x < (a + 1.0) / (a + b + 2.0) {
        front * fraction(x, a, b) / a
    } else {
        1.0 - front * fraction(1.0 - x, b, a) / b
    }
}

/// The density of Beta(a, b) at `x` in (0, 1); `ln_b` as for [`inc_beta`].
fn density(x: f64, a: f64, b: f64, ln_b: f64) -> f64 {
    ((a - 1.0) * x.ln() + (b - 1.0) * (1.0 - x).ln() - ln_b).exp()
}

/// The `p`-quantile of Beta(a, b) for `a, b ≥ 1` and `0 < p < 1`: the `x` with
/// `I_x(a, b) = p`, to within about 1e-13. A bracket search: each step tries the Newton
/// step from the current point and falls back to bisection when it would leave the
/// bracket, so it always converges and takes the same steps for the same inputs.
pub fn quantile(p: f64, a: f64, b: f64) -> f64 {
    let ln_b = ln_beta(a, b);
    let (mut low, mut high) = (0.0_f64, 1.0_f64);
    let mut x = a / (a + b);
    for _ in 0..MAX_QUANTILE_STEPS {
        let f = inc_beta(x, a, b, ln_b) - p;
        if f == 0.0 {
            return x;
        }
        if f < 0.0 {
            low = x;
        } else {
            high = x;
        }
        if high - low < 1e-14 {
            break;
        }
        let slope = density(x, a, b, ln_b);
        let newton = x - f / slope;
        let next = if slope > 0.0 && newton > low && newton < high {
            newton
        } else {
            0.5 * (low + high)
        };
        if (next - x).abs() < 1e-14 {
            return next;
        }
        x = next;
    }
    0.5 * (low + high)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, tolerance: f64) -> bool {
        (a - b).abs() <= tolerance
    }

    #[test]
    fn ln_gamma_matches_factorials() {
        let mut factorial = 1.0_f64;
        for n in 1..30 {
            // Γ(n) = (n − 1)!
            assert!(
                close(
                    ln_gamma(n as f64),
                    factorial.ln(),
                    1e-12 * factorial.ln().max(1.0)
                ),
                "{n}"
            );
            factorial *= n as f64;
        }
        assert!(close(
            ln_gamma(0.5),
            std::f64::consts::PI.sqrt().ln(),
            1e-13
        ));
    }

    /// Closed forms: `I_x(a, 1) = x^a`, `I_x(1, b) = 1 − (1 − x)^b`, and Beta(1, 1) is
    /// uniform.
    #[test]
    fn the_cdf_matches_its_closed_forms() {
        for &x in &[0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99] {
            for &a in &[1.0, 1.5, 2.0, 3.4, 8.0, 40.0] {
                let got = inc_beta(x, a, 1.0, ln_beta(a, 1.0));
                assert!(close(got, x.powf(a), 1e-12), "x {x} a {a}: {got}");
                let got = inc_beta(x, 1.0, a, ln_beta(1.0, a));
                assert!(
                    close(got, 1.0 - (1.0 - x).powf(a), 1e-12),
                    "x {x} b {a}: {got}"
                );
            }
        }
    }

    /// `I_x(a, b) = P(Binomial(a + b − 1, x) ≥ a)` for whole `a`, `b`.
    #[test]
    fn the_cdf_matches_binomial_sums() {
        for (a, b) in [(2u32, 8u32), (3, 15), (5, 5), (12, 3), (40, 60)] {
            let n = a + b - 1;
            for &x in &[0.05_f64, 0.2, 0.5, 0.7, 0.95] {
                let mut tail = 0.0;
                for k in a..=n {
                    let ln_choose = ln_gamma(f64::from(n + 1))
                        - ln_gamma(f64::from(k + 1))
                        - ln_gamma(f64::from(n - k + 1));
                    tail +=
                        (ln_choose + f64::from(k) * x.ln() + f64::from(n - k) * (1.0_f64 - x).ln())
                            .exp();
                }
                let (a, b) = (f64::from(a), f64::from(b));
                let got = inc_beta(x, a, b, ln_beta(a, b));
                assert!(
                    close(got, tail, 1e-11),
                    "a {a} b {b} x {x}: {got} vs {tail}"
                );
            }
        }
    }

    #[test]
    fn the_quantile_inverts_the_cdf() {
        for (a, b) in [
            (1.0, 1.0),
            (2.0, 1.0),
            (1.8, 6.6),
            (3.0, 15.0),
            (1.0, 801.0),
            (700.5, 300.25),
            (20_001.0, 19_000.0),
        ] {
            let ln_b = ln_beta(a, b);
            for &p in &[0.001, 0.1, 0.5, 0.9, 0.999] {
                let x = quantile(p, a, b);
                assert!((0.0..=1.0).contains(&x));
                assert!(
                    close(inc_beta(x, a, b, ln_b), p, 1e-9),
                    "a {a} b {b} p {p}: {x}"
                );
            }
        }
        // Beta(1, 1) is uniform; Beta(2, 1) has CDF x², Beta(1, 8) 1 − (1 − x)⁸.
        assert!(close(quantile(0.1, 1.0, 1.0), 0.1, 1e-12));
        assert!(close(quantile(0.1, 2.0, 1.0), 0.1_f64.sqrt(), 1e-12));
        assert!(close(
            quantile(0.9, 1.0, 8.0),
            1.0 - 0.1_f64.powf(0.125),
            1e-12
        ));
    }

    #[test]
    fn quantiles_are_symmetric_in_their_parameters() {
        for (a, b) in [(1.8, 6.6), (2.6, 12.2), (5.0, 1.0)] {
            let upper = quantile(0.9, a, b);
            let mirrored = 1.0 - quantile(0.1, b, a);
            assert!(close(upper, mirrored, 1e-12), "{a} {b}: {upper} {mirrored}");
        }
    }
}
