//! Tests of TPC-C's inputs: the random functions, NURand constants and the
//! transaction mix against the specification's distributions.
use super::*;

#[test]
fn last_names_are_three_syllables_by_digit() {
    assert_eq!(last_name(0), "BARBARBAR");
    assert_eq!(last_name(371), "PRICALLYOUGHT");
    assert_eq!(last_name(999), "EINGEINGEING");
}

#[test]
fn run_constants_keep_the_required_distance_from_the_load() {
    let mut rng = Rng::new(3);
    for _ in 0..200 {
        let load = Constants::for_load(&mut rng);
        let run = Constants::for_run(&load, &mut rng);
        let d = load.c_last.abs_diff(run.c_last);
        assert!((65..=119).contains(&d) && d != 96 && d != 112, "{d}");
    }
    assert!(!Constants::valid_run_delta(10, 106));
    assert!(Constants::valid_run_delta(10, 75));
}

#[test]
fn nurand_stays_in_range_and_is_not_uniform() {
    let mut r = Random::new(
        1,
        Constants {
            c_last: 100,
            c_id: 500,
            ol_i_id: 4000,
        },
    );
    let mut hist = vec![0u32; 3001];
    for _ in 0..300_000 {
        let v = r.nurand(1023, 1, 3000);
        assert!((1..=3000).contains(&v));
        hist[v as usize] += 1;
    }
    let max = *hist.iter().max().unwrap();
    let min = *hist[1..].iter().min().unwrap();
    assert!(
        max > 3 * min.max(1),
        "NURand is skewed: max {max}, min {min}"
    );
    for _ in 0..10_000 {
        assert!((1..=ITEMS).contains(&r.nurand(8191, 1, ITEMS)));
        assert!(r.nurand(255, 0, 999) <= 999);
    }
}

#[test]
fn strings_and_original_data_follow_the_rules() {
    let mut r = Random::new(
        2,
        Constants {
            c_last: 0,
            c_id: 0,
            ol_i_id: 0,
        },
    );
    let mut original = 0;
    for _ in 0..10_000 {
        let mut s = b"x".to_vec();
        r.data_original(&mut s);
        // appended
        let s = s.strip_prefix(b"x").unwrap();
        assert!((26..=50).contains(&s.len()));
        assert!(s.iter().all(u8::is_ascii_alphanumeric));
        if s.windows(8).any(|w| w == b"ORIGINAL") {
            original += 1;
        }
    }
    assert!((800..1200).contains(&original), "{original} of 10000");
    let mut z = Vec::new();
    r.zip(&mut z);
    assert!(z.len() == 9 && z.ends_with(b"11111") && z.iter().all(u8::is_ascii_digit));
    let lengths: Vec<usize> = (0..1000)
        .map(|_| {
            let mut s = Vec::new();
            r.astring(300, 500, &mut s);
            assert!(s.iter().all(u8::is_ascii_alphanumeric));
            s.len()
        })
        .collect();
    assert!(lengths.iter().all(|n| (300..=500).contains(n)));
    // spread over the whole range
    assert!(lengths.iter().min() < Some(&320) && lengths.iter().max() > Some(&480));
    let mut n = Vec::new();
    r.nstring(16, 16, &mut n);
    assert!(n.len() == 16 && n.iter().all(u8::is_ascii_digit));
    let d = r.decimal(0.0, 0.2, 4);
    assert!((0.0..=0.2).contains(&d));
}

#[test]
fn the_mix_has_the_standard_shares() {
    let mut deck = Deck::new();
    let mut rng = Rng::new(9);
    let mut n = [0u32; 5];
    for _ in 0..23_000 {
        n[deck.draw(&mut rng).index()] += 1;
    }
    assert_eq!(n, [10_000, 10_000, 1000, 1000, 1000]);
}

#[test]
fn inputs_follow_clause_2() {
    let mut r = Random::new(
        5,
        Constants {
            c_last: 1,
            c_id: 2,
            ol_i_id: 3,
        },
    );
    let (mut rollbacks, mut remote_lines, mut lines, mut by_name, mut remote_pay) = (0, 0, 0, 0, 0);
    for _ in 0..20_000 {
        let o = r.new_order(1, 10);
        assert!((5..=15).contains(&o.lines.len()));
        if o.rollback {
            rollbacks += 1;
            assert_eq!(o.lines.last().unwrap().i_id, ITEMS + 1);
        }
        lines += o.lines.len();
        remote_lines += o.lines.iter().filter(|l| l.supply_w_id != 1).count();
        let p = r.payment(1, 10);
        if p.c_w_id != 1 {
            remote_pay += 1;
        }
        if matches!(p.customer, CustomerBy::LastName(_)) {
            by_name += 1;
        }
    }
    assert!((120..=280).contains(&rollbacks), "{rollbacks}");
    let remote = remote_lines as f64 / lines as f64;
    assert!((0.007..0.013).contains(&remote), "{remote}");
    assert!((2600..3400).contains(&remote_pay), "{remote_pay}");
    assert!((11_500..12_500).contains(&by_name), "{by_name}");
    // one warehouse: nothing is remote
    let o = r.new_order(1, 1);
    assert!(o.lines.iter().all(|l| l.supply_w_id == 1));
}

#[test]
fn initial_rows_match_their_columns() {
    let mut r = Random::new(
        7,
        Constants {
            c_last: 5,
            c_id: 6,
            ol_i_id: 7,
        },
    );
    let len = |g: &dyn Fn(&mut Random, &mut rows::Values)| {
        let mut v = rows::Values::default();
        g(&mut Random::new(7, r.c), &mut v);
        assert_eq!(v.rows.len(), 1);
        v.rows[0].len()
    };
    assert_eq!(len(&|r, s| rows::item(r, 1, s)), columns("item").len());
    assert_eq!(
        len(&|r, s| rows::warehouse(r, 1, s)),
        columns("warehouse").len()
    );
    assert_eq!(len(&|r, s| rows::stock(r, 1, 1, s)), columns("stock").len());
    assert_eq!(
        len(&|r, s| rows::district(r, 1, 1, s)),
        columns("district").len()
    );
    assert_eq!(
        len(&|r, s| rows::customer(r, 1, 1, 1, s)),
        columns("customer").len()
    );
    assert_eq!(
        len(&|r, s| rows::history(r, 1, 1, 1, s)),
        columns("history").len()
    );
    let perm = rows::customer_permutation(&mut r);
    let mut o = rows::OrderValues::default();
    for o_id in 1..=CUSTOMERS_PER_DISTRICT {
        rows::order(&mut r, 1, 1, o_id, perm[o_id as usize - 1], &mut o);
    }
    let rows::OrderValues {
        orders,
        lines,
        new_orders,
    } = o;
    assert_eq!(orders.rows.len(), 3000);
    assert_eq!(new_orders.rows.len(), 900);
    assert_eq!(orders.rows[0].len(), columns("oorder").len());
    assert_eq!(lines.rows[0].len(), columns("order_line").len());
    assert_eq!(new_orders.rows[0].len(), columns("new_order").len());
    let mut customers: Vec<i64> = orders
        .rows
        .iter()
        .map(|row| match row[3] {
            Value::Int(c) => c,
            _ => 0,
        })
        .collect();
    customers.sort();
    assert_eq!(customers, (1..=3000).collect::<Vec<i64>>(), "a permutation");
    let count: i64 = orders
        .rows
        .iter()
        .map(|row| match row[6] {
            Value::Int(n) => n,
            _ => 0,
        })
        .sum();
    assert_eq!(count as usize, lines.rows.len());
    // the first 2,100 orders are delivered (a carrier, no NEW-ORDER row)
    assert!(matches!(orders.rows[2099][5], Value::Int(1..=10)));
    assert_eq!(orders.rows[2100][5], Value::Null);
    assert_eq!(new_orders.rows[0][0], Value::Int(2101));
    // customers 1..1000 take the syllables of c_id - 1
    assert_eq!(
        rows::one(|s| rows::customer(&mut r, 1, 1, 1, s))[5],
        Value::Text("BARBARBAR".into())
    );
    assert_eq!(
        rows::one(|s| rows::customer(&mut r, 1, 1, 372, s))[5],
        Value::Text("PRICALLYOUGHT".into())
    );
}
