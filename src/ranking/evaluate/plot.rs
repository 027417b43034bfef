//! `--plot FILE.svg`: a chart of the main metric (nDCG@k with its bootstrap interval) per
//! arm, or per arm and sweep point when the packet carries a sweep. Drawn with `plotters`'
//! SVG backend into a string (text is emitted as SVG `<text>`, so no font files are
//! needed); the caller writes the file. A view of the packet only.

use plotters::prelude::*;

use crate::wire::json::Value;

use super::error::RankEvaluateError;

const WIDTH: u32 = 900;
const HEIGHT: u32 = 440;
const COLORS: [RGBColor; 8] = [
    RGBColor(90, 90, 90),
    RGBColor(230, 120, 30),
    RGBColor(30, 110, 200),
    RGBColor(40, 160, 90),
    RGBColor(170, 60, 160),
    RGBColor(200, 40, 40),
    RGBColor(20, 170, 190),
    RGBColor(140, 110, 40),
];

fn num(v: Option<&Value>) -> Option<f64> {
    match v {
        Some(Value::Float(x)) => Some(*x),
        Some(Value::Int(i)) => Some(*i as f64),
        _ => None,
    }
}

/// `(estimate, lower, upper)` of an estimate object; lower/upper fall back to the estimate.
fn triple(e: Option<&Value>) -> Option<(f64, f64, f64)> {
    let e = e?;
    let est = num(e.get("estimate"))?;
    Some((
        est,
        num(e.get("lower")).unwrap_or(est),
        num(e.get("upper")).unwrap_or(est),
    ))
}

fn plot_error<E: std::fmt::Display>(e: E) -> RankEvaluateError {
    RankEvaluateError::Plot(e.to_string())
}

fn y_range(points: &[(f64, f64, f64)]) -> (f64, f64) {
    let lo = points.iter().map(|p| p.1).fold(f64::INFINITY, f64::min);
    let hi = points.iter().map(|p| p.2).fold(f64::NEG_INFINITY, f64::max);
    if !lo.is_finite() || !hi.is_finite() {
        return (0.0, 1.0);
    }
    let pad = ((hi - lo) * 0.15).max(0.01);
    ((lo - pad).max(0.0), (hi + pad).min(1.0).max(lo + pad))
}

fn text(v: Option<&Value>) -> String {
    v.and_then(Value::as_str).unwrap_or_default().to_owned()
}

/// A short axis or legend label of an arm key.
fn short(key: &str) -> &str {
    match key {
        "semantic" => "semantic",
        "semantic_hotness" => "+ hotness",
        "bounded_utility" => "x bounded utility",
        "bounded_utility_without_inference" => "x utility, no inference",
        "memrl" => "MemRL",
        "bounded_utility_v1" => "x bounded utility, v1",
        "memrl_on_policy" => "MemRL on-policy",
        other => other,
    }
}

/// A sweep value as an axis label: integers without a fraction.
fn value_label(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{}", v as i64)
    } else {
        crate::wire::pyfmt::float_repr(v)
    }
}

/// The SVG text of the chart for `packet`.
pub fn render(packet: &Value) -> Result<String, RankEvaluateError> {
    let k = num(packet.get("settings").and_then(|s| s.get("k"))).unwrap_or(0.0) as i64;
    let level = num(packet
        .get("settings")
        .and_then(|s| s.get("confidence_level")))
    .unwrap_or(0.95);
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, HEIGHT)).into_drawing_area();
        root.fill(&WHITE).map_err(plot_error)?;
        let sweep = packet.get("sweep").filter(|s| s.as_object().is_some());
        match sweep {
            None => per_arm(&root, packet, k, level)?,
            Some(sweep) => per_sweep_point(&root, sweep, k, level)?,
        }
        root.present().map_err(plot_error)?;
    }
    Ok(svg)
}

/// An arm's key and its nDCG `(estimate, lower, upper)`.
type ArmPoint = (String, Option<(f64, f64, f64)>);

fn per_arm(
    root: &DrawingArea<SVGBackend<'_>, plotters::coord::Shift>,
    packet: &Value,
    k: i64,
    level: f64,
) -> Result<(), RankEvaluateError> {
    let arms: Vec<ArmPoint> = packet
        .get("arms")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .map(|arm| {
                    (
                        text(arm.get("arm")),
                        triple(arm.get("metrics").and_then(|m| m.get("ndcg_at_k"))),
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    let known: Vec<(f64, f64, f64)> = arms.iter().filter_map(|a| a.1).collect();
    let (y0, y1) = y_range(&known);
    let n = arms.len().max(1) as f64;
    let names: Vec<String> = arms.iter().map(|a| a.0.clone()).collect();
    let mut chart = ChartBuilder::on(root)
        .caption(
            format!(
                "nDCG@{k} per arm ({}% bootstrap intervals), verdict: {}",
                (level * 100.0).round(),
                text(packet.get("verdict"))
            ),
            ("sans-serif", 18),
        )
        .margin(16)
        .x_label_area_size(46)
        .y_label_area_size(60)
        .build_cartesian_2d(0.5f64..n + 0.5, y0..y1)
        .map_err(plot_error)?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(arms.len().max(1))
        .x_label_formatter(&|x| {
            let i = x.round() as usize;
            if (x - i as f64).abs() < 1e-9 && i >= 1 {
                names
                    .get(i - 1)
                    .map(|s| format!("{i} {}", short(s)))
                    .unwrap_or_default()
            } else {
                String::new()
            }
        })
        .y_desc(format!("nDCG@{k}"))
        .y_label_formatter(&|y| format!("{y:.3}"))
        .draw()
        .map_err(plot_error)?;
    for (i, (_, e)) in arms.iter().enumerate() {
        let Some((est, lo, hi)) = *e else { continue };
        let x = (i + 1) as f64;
        let color = COLORS[i % COLORS.len()];
        chart
            .draw_series(std::iter::once(ErrorBar::new_vertical(
                x,
                lo,
                est,
                hi,
                color.stroke_width(2),
                14,
            )))
            .map_err(plot_error)?;
        chart
            .draw_series(std::iter::once(Circle::new((x, est), 5, color.filled())))
            .map_err(plot_error)?;
    }
    Ok(())
}

fn per_sweep_point(
    root: &DrawingArea<SVGBackend<'_>, plotters::coord::Shift>,
    sweep: &Value,
    k: i64,
    level: f64,
) -> Result<(), RankEvaluateError> {
    let parameter = text(sweep.get("parameter"));
    let points: Vec<&Value> = sweep
        .get("points")
        .and_then(Value::as_array)
        .map(|p| p.iter().collect())
        .unwrap_or_default();
    let xs: Vec<f64> = points.iter().filter_map(|p| num(p.get("value"))).collect();
    let arm_keys: Vec<String> = points
        .first()
        .and_then(|p| p.get("arms"))
        .and_then(Value::as_array)
        .map(|a| a.iter().map(|x| text(x.get("arm"))).collect())
        .unwrap_or_default();
    let series: Vec<Vec<(f64, f64, f64, f64)>> = arm_keys
        .iter()
        .enumerate()
        .map(|(i, _)| {
            points
                .iter()
                .filter_map(|p| {
                    let x = num(p.get("value"))?;
                    let arm = p.get("arms")?.as_array()?.get(i)?;
                    let (e, lo, hi) = triple(arm.get("ndcg_at_k"))?;
                    Some((x, e, lo, hi))
                })
                .collect()
        })
        .collect();
    let all: Vec<(f64, f64, f64)> = series.iter().flatten().map(|p| (p.1, p.2, p.3)).collect();
    let (y0, y1) = y_range(&all);
    let n = xs.len().max(1) as f64;
    let mut chart = ChartBuilder::on(root)
        .caption(
            format!(
                "nDCG@{k} per arm across {parameter} ({}% bootstrap intervals)",
                (level * 100.0).round()
            ),
            ("sans-serif", 18),
        )
        .margin(16)
        .x_label_area_size(46)
        .y_label_area_size(60)
        .build_cartesian_2d(0.5f64..n + 0.5, y0..y1)
        .map_err(plot_error)?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(xs.len().max(1))
        .x_label_formatter(&|x| {
            let i = x.round() as usize;
            if (x - i as f64).abs() < 1e-9 && i >= 1 {
                xs.get(i - 1).map(|v| value_label(*v)).unwrap_or_default()
            } else {
                String::new()
            }
        })
        .x_desc(parameter.as_str())
        .y_desc(format!("nDCG@{k}"))
        .y_label_formatter(&|y| format!("{y:.3}"))
        .draw()
        .map_err(plot_error)?;
    let arms = series.len().max(1) as f64;
    let position = |x: f64| {
        xs.iter()
            .position(|v| *v == x)
            .map_or(0.0, |i| (i + 1) as f64)
    };
    for (i, (key, points)) in arm_keys.iter().zip(&series).enumerate() {
        let color = COLORS[i % COLORS.len()];
        let dx = (i as f64 - (arms - 1.0) / 2.0) * 0.06;
        chart
            .draw_series(LineSeries::new(
                points.iter().map(|p| (position(p.0) + dx, p.1)),
                color.stroke_width(2),
            ))
            .map_err(plot_error)?
            .label(format!("{} {}", i + 1, short(key)))
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 18, y)], color.stroke_width(2))
            });
        chart
            .draw_series(points.iter().map(|p| {
                ErrorBar::new_vertical(position(p.0) + dx, p.2, p.1, p.3, color.stroke_width(1), 6)
            }))
            .map_err(plot_error)?;
        chart
            .draw_series(
                points
                    .iter()
                    .map(|p| Circle::new((position(p.0) + dx, p.1), 3, color.filled())),
            )
            .map_err(plot_error)?;
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::LowerRight)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()
        .map_err(plot_error)?;
    Ok(())
}
