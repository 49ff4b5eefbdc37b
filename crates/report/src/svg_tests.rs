use super::*;

#[test]
fn stacked_lines_are_bands_on_the_ones_below() {
    let l = |name: &str, pts: &[(f64, f64)]| Line {
        name: name.into(),
        points: pts.to_vec(),
        ..Default::default()
    };
    let bands = stack(&[
        l("a", &[(0.0, 1.0), (1.0, 2.0)]),
        l("b", &[(1.0, 3.0), (2.0, 1.0)]),
    ]);
    assert_eq!(
        bands[0],
        vec![(0.0, 0.0, 1.0), (1.0, 0.0, 2.0), (2.0, 0.0, 0.0)]
    );
    assert_eq!(
        bands[1],
        vec![(0.0, 1.0, 1.0), (1.0, 2.0, 5.0), (2.0, 0.0, 1.0)]
    );
    let svg = LineChart {
        title: "waits".into(),
        stacked: true,
        lines: vec![
            l("Lock:tuple", &[(0.0, 1.0), (1.0, 2.0)]),
            l("IO:DataFileRead", &[(1.0, 3.0)]),
        ],
        ..Default::default()
    }
    .render();
    assert_eq!(svg.matches("fill-opacity").count(), 2, "{svg}");
    assert!(svg.contains("<title>IO:DataFileRead</title>"));
}

#[test]
fn long_legend_names_keep_what_tells_them_apart() {
    let url = "redis://:***@127.0.0.1:56379?model=string&prefix=i19:";
    let a = shorten(&format!("{url} · READ"), 48);
    let b = shorten(&format!("{url} · READ service time"), 48);
    assert_eq!(a.chars().count(), 48);
    assert!(a.starts_with("redis://") && a.ends_with("· READ"), "{a}");
    assert!(b.ends_with("READ service time") && a != b, "{b}");
    assert_eq!(shorten("short · READ", 48), "short · READ");
}

#[test]
fn ticks_are_round_and_cover_the_range() {
    assert_eq!(linear_ticks(0.0, 9.0), vec![0.0, 2.0, 4.0, 6.0, 8.0, 10.0]);
    assert_eq!(
        linear_ticks(0.0, 1000.0),
        vec![0.0, 200.0, 400.0, 600.0, 800.0, 1000.0]
    );
    let t = linear_ticks(0.0, 0.0);
    assert!(t.len() >= 2);
    assert_eq!(
        log_ticks(3.0, 4500.0),
        vec![1.0, 10.0, 100.0, 1000.0, 10000.0]
    );
    assert_eq!(log_ticks(5.0, 5.0), vec![1.0, 10.0, 100.0]);
}

#[test]
fn short_numbers_read_well() {
    assert_eq!(short(0.0), "0");
    assert_eq!(short(0.25), "0.25");
    assert_eq!(short(12.5), "12.5");
    assert_eq!(short(25_000.0), "25k");
    assert_eq!(short(1_500_000.0), "1.5M");
    assert_eq!(short(999.0), "999");
}

#[test]
fn bar_charts_draw_a_bar_per_value_with_escaped_labels() {
    let c = BarChart {
        title: "ops <per> second".into(),
        y_label: "throughput (ops/s)".into(),
        groups: vec!["a".into(), "b".into()],
        series: vec![
            BarSeries {
                name: "pg & co".into(),
                values: vec![Some(10.0), Some(20.0)],
                errors: vec![Some(1.0), None],
            },
            BarSeries {
                name: "redis".into(),
                values: vec![None, Some(5.0)],
                errors: vec![],
            },
        ],
        log: false,
    };
    let svg = c.render();
    assert!(svg.starts_with("<svg") && svg.ends_with("</svg>"));
    assert_eq!(
        svg.matches("<rect x=").count(),
        3 + 2,
        "3 bars, 2 legend swatches"
    );
    assert!(svg.contains("ops &lt;per&gt; second"));
    assert!(svg.contains("pg &amp; co"));
    assert!(svg.contains("throughput (ops/s)"));
    assert_eq!(svg.matches("<path d=\"M").count(), 1, "one whisker");
}

#[test]
fn line_charts_skip_points_a_log_axis_cannot_show() {
    let c = LineChart {
        title: "cdf".into(),
        x_label: "latency (µs)".into(),
        y_label: "fraction".into(),
        lines: vec![Line {
            name: "read".into(),
            points: vec![(0.0, 0.1), (10.0, 0.5), (100.0, 1.0)],
            dashed: false,
            markers: true,
        }],
        x_log: true,
        ..Default::default()
    };
    let svg = c.render();
    assert_eq!(svg.matches("<circle").count(), 2);
    assert!(svg.contains("latency (µs)"));
    assert!(!svg.contains("NaN") && !svg.contains("inf"));
}
