use super::*;
use crate::rng::Rng;

/// A set owing values of `lens` (fields 0, 1, ...) from a filler seeded `seed`.
fn owing(set: &mut WriteSet, lens: &[usize], seed: u64) {
    set.clear();
    for (i, &n) in lens.iter().enumerate() {
        set.push_reuse(i).resize(n, 0);
    }
    set.owe(|| Filler::new(&mut Rng::new(seed)));
}

/// The next `n` bytes of `f`.
fn next(f: &mut Filler, n: usize) -> Vec<u8> {
    let mut v = vec![0; n];
    f.fill(&mut v);
    v
}

fn written(set: &WriteSet, k: usize) -> Vec<u8> {
    let mut out = vec![MaybeUninit::new(0xFF); set.lengths().nth(k).unwrap().1];
    set.write_entry(k, &mut out);
    // SAFETY: every byte was initialised above (and written since).
    out.iter().map(|b| unsafe { b.assume_init() }).collect()
}

#[test]
fn owed_bytes_are_the_filler_s_next_made_at_first_use_and_counted_before() {
    let mut reference = Filler::new(&mut Rng::new(5));
    let mut set = WriteSet::default();
    owing(&mut set, &[100, 0, 1000], 5);
    assert_eq!(
        (set.len(), set.bytes(), set.lengths().collect::<Vec<_>>()),
        (3, 1100, vec![(0, 100), (1, 0), (2, 1000)]),
        "the lengths are known while the bytes are owed"
    );
    let (a, b) = (next(&mut reference, 100), next(&mut reference, 1000));
    let got: Vec<(usize, Vec<u8>)> = set.iter().map(|(f, v)| (f, v.to_vec())).collect();
    assert_eq!(got, vec![(0, a), (1, vec![]), (2, b.clone())]);
    // several owed entries: one is copied out of the settled set
    assert_eq!(written(&set, 2), b);
    // the next owing goes on past them, from the set's one filler (the
    // seed is not asked again)
    owing(&mut set, &[64], 99);
    assert_eq!(set.iter().next().unwrap().1, next(&mut reference, 64));
}

#[test]
fn a_lone_owed_value_written_out_is_the_same_bytes_each_time_and_the_filler_goes_past_it() {
    let mut reference = Filler::new(&mut Rng::new(8));
    let mut set = WriteSet::default();
    owing(&mut set, &[1000], 8);
    let first = next(&mut reference, 1000);
    assert_eq!(written(&set, 0), first, "made straight into the output");
    assert_eq!(
        written(&set, 0),
        first,
        "a retry sends what the first try did"
    );
    assert_eq!(
        set.iter().next().unwrap().1,
        first,
        "and the set, settled later, holds them"
    );
    // written out only, never settled: the next value still comes after it
    owing(&mut set, &[300], 8);
    let second = next(&mut reference, 300);
    assert_eq!(written(&set, 0), second);
    owing(&mut set, &[300], 8);
    assert_eq!(set.iter().next().unwrap().1, next(&mut reference, 300));
}

#[test]
fn owed_bytes_never_used_are_the_next_owings_and_a_push_settles_the_owed_first() {
    let mut reference = Filler::new(&mut Rng::new(3));
    let mut set = WriteSet::default();
    owing(&mut set, &[200], 3);
    // cleared unused: nothing was sent, so the filler did not move
    owing(&mut set, &[200], 3);
    let first = next(&mut reference, 200);
    assert_eq!(written(&set, 0), first);
    owing(&mut set, &[10], 3);
    set.push(1).extend_from_slice(b"eager");
    let got: Vec<(usize, Vec<u8>)> = set.iter().map(|(f, v)| (f, v.to_vec())).collect();
    assert_eq!(
        got,
        vec![(0, next(&mut reference, 10)), (1, b"eager".to_vec())]
    );
}

#[test]
fn a_set_without_owed_bytes_copies_its_values_and_a_clone_has_the_bytes() {
    let mut set = WriteSet::default();
    set.push(0).extend_from_slice(b"value");
    assert_eq!(written(&set, 0), b"value");
    let mut owed = WriteSet::default();
    owing(&mut owed, &[50], 4);
    let copy = owed.clone();
    let bytes = next(&mut Filler::new(&mut Rng::new(4)), 50);
    assert_eq!(copy.iter().next().unwrap().1, bytes);
    assert_eq!(owed.iter().next().unwrap().1, bytes);
    assert_eq!(format!("{set:?}"), "[(0, [118, 97, 108, 117, 101])]");
}

#[test]
#[should_panic(expected = "entry 0's length")]
fn an_output_of_another_length_is_refused() {
    let mut set = WriteSet::default();
    owing(&mut set, &[10], 1);
    set.write_entry(0, &mut [MaybeUninit::new(0); 9]);
}

#[test]
fn a_stream_leaves_an_owing_sets_values_owed_to_the_sets_own_filler_and_fills_others_itself() {
    use crate::binding::Fields;
    use crate::workload::{CoreConfig, Properties, SharedState, Stream};
    let mut p = Properties::new();
    for kv in ["fieldcount=2", "fieldlength=300"] {
        p.set_override(kv).unwrap();
    }
    let shared = SharedState::new(CoreConfig::from_properties(&p).unwrap());
    let (mut a, mut b) = (Stream::new(&shared, 6), Stream::new(&shared, 6));
    let (mut owed, mut eager, mut alone) =
        (WriteSet::owing(), WriteSet::default(), WriteSet::default());
    a.values(&shared, b"k", Fields::All, &mut owed);
    assert_eq!(owed.state.get(), State::Owed, "left owed");
    assert_eq!(eager.state.get(), State::Settled);
    a.values(&shared, b"k", Fields::All, &mut eager);
    b.values(&shared, b"k", Fields::All, &mut alone);
    let bytes = |s: &WriteSet| s.iter().map(|(_, v)| v.to_vec()).collect::<Vec<_>>();
    // the owed set drew nothing from the stream's filler
    assert_eq!(bytes(&eager), bytes(&alone));
    let made = bytes(&owed);
    assert_eq!(made.iter().map(Vec::len).collect::<Vec<_>>(), [300, 300]);
    assert!(made.iter().flatten().all(|c| (0x20..=0x5F).contains(c)));
    assert_ne!(made, bytes(&alone), "a filler of its own");
    assert!(WriteSet::owing().clone().may_owe() && !WriteSet::default().may_owe());
}
