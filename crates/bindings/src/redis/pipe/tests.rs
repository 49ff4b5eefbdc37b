use super::*;
use std::future::Future;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

#[test]
fn replies_parse_whole_and_wait_when_cut_anywhere() {
    let cases: [(&[u8], Reply); 6] = [
        (b"+OK\r\n", Reply::Status),
        (b"-ERR wrong\r\n", Reply::Error("ERR wrong".into())),
        (b":42\r\n", Reply::Int(42)),
        (b"$-1\r\n", Reply::Nil),
        (b"$5\r\nab\r\nc\r\n", Reply::Bulk(b"ab\r\nc".to_vec())),
        (b"$0\r\n\r\n", Reply::Bulk(Vec::new())),
    ];
    let parse = |b: &[u8]| parse_reply(b, &mut Vec::new());
    for (wire, want) in cases {
        assert_eq!(parse(wire), Ok(Some((want.clone(), wire.len()))));
        for cut in 1..wire.len() {
            assert_eq!(parse(&wire[..cut]), Ok(None), "{wire:?} cut at {cut}");
        }
        let mut two = wire.to_vec();
        two.extend_from_slice(b":1\r\n");
        assert_eq!(parse(&two), Ok(Some((want, wire.len()))));
    }
    assert!(parse(b"*2\r\n").is_err());
    assert!(parse(b":x\r\n").is_err());
}

#[test]
fn resp_integers_are_digits_with_an_optional_minus_and_fit_an_i64() {
    let ok: [(&[u8], i64); 6] = [
        (b"0", 0),
        (b"1000", 1000),
        (b"-1", -1),
        (b"007", 7),
        (b"9223372036854775807", i64::MAX),
        (b"-9223372036854775808", i64::MIN),
    ];
    for (line, want) in ok {
        assert_eq!(resp_int(line), Some(want), "{line:?}");
    }
    let bad: [&[u8]; 9] = [
        b"",
        b"-",
        b"+5",
        b"1 ",
        b"12a",
        b"--1",
        b"9223372036854775808",
        b"-9223372036854775809",
        b"12345678901234567890",
    ];
    for line in bad {
        assert_eq!(resp_int(line), None, "{line:?}");
    }
}

#[test]
fn a_bulk_reply_fills_a_spare_buffer_when_there_is_one() {
    let spare = Vec::with_capacity(64);
    let at = spare.as_ptr();
    let mut spares = vec![spare];
    let Ok(Some((Reply::Bulk(v), 9))) = parse_reply(b"$3\r\nabc\r\n", &mut spares) else {
        panic!("a whole bulk reply")
    };
    assert_eq!((v.as_slice(), v.as_ptr()), (&b"abc"[..], at));
    assert!(spares.is_empty());
    // none left: a new buffer
    let Ok(Some((Reply::Bulk(w), _))) = parse_reply(b"$1\r\nz\r\n", &mut spares) else {
        panic!("a whole bulk reply")
    };
    assert_eq!(w, b"z");
}

fn args<'a>(a: &[&'a [u8]]) -> Vec<Arg<'a>> {
    a.iter().map(|a| Arg::Bytes(a)).collect()
}

#[test]
fn an_owed_value_is_made_in_the_output_as_the_set_would_make_it_and_alike_when_sent_again() {
    use yardstick_core::binding::{Fields, WriteSet};
    use yardstick_core::workload::{CoreConfig, Properties, SharedState, Stream};
    let mut props = Properties::new();
    for kv in ["fieldcount=1", "fieldlength=1000"] {
        props.set_override(kv).unwrap();
    }
    let shared = SharedState::new(CoreConfig::from_properties(&props).unwrap());
    let mut stream = Stream::new(&shared, 4);
    let mut ws = WriteSet::owing();
    stream.values(&shared, b"k", Fields::All, &mut ws);
    let (mut out, set) = (b"held".to_vec(), Arg::entry(&ws, 0).unwrap());
    for _ in 0..2 {
        encode(&mut out, &[Arg::Bytes(b"SET"), Arg::Bytes(b"k"), set]);
    }
    // the set made afterwards: its bytes are the ones sent, both times
    let v = ws.iter().next().unwrap().1;
    assert!(v.len() == 1000 && v.iter().all(|b| (0x20..=0x5F).contains(b)));
    let mut want = b"held".to_vec();
    for _ in 0..2 {
        encode(&mut want, &args(&[b"SET", b"k", v]));
    }
    assert_eq!(out, want);
    assert!(Arg::entry(&ws, 1).is_none(), "no second entry");
}

#[test]
fn commands_are_resp_arrays_of_bulk_strings() {
    let mut out = Vec::new();
    encode(&mut out, &args(&[b"SET", b"k", b""]));
    assert_eq!(out, b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$0\r\n\r\n");
    // appended after what is there, lengths of every number of digits
    let big = vec![b'v'; 123_456];
    let mut expected = out.clone();
    for len in [0, 1, 9, 10, 99, 100, 999, 1000, 12_345, 123_456] {
        encode(&mut out, &args(&[b"GET", &big[..len]]));
        expected.extend_from_slice(format!("*2\r\n$3\r\nGET\r\n${len}\r\n").as_bytes());
        expected.extend_from_slice(&big[..len]);
        expected.extend_from_slice(b"\r\n");
    }
    assert_eq!(out, expected);
    // a command of many arguments: the array's count in two digits
    let many: Vec<&[u8]> = std::iter::repeat_n(&b"ab"[..], 12).collect();
    let mut out = Vec::new();
    encode(&mut out, &args(&many));
    assert!(out.starts_with(b"*12\r\n$2\r\nab\r\n"), "{out:?}");
    assert_eq!(out.len(), 5 + 12 * 8);
}

/// A server that answers `GET key` with the key reversed, one byte per
/// write, after 300 ms for keys starting "slow" (and a key over 64 bytes
/// with its length); it counts its reads.
async fn fake_server(listener: TcpListener, reads: Rc<std::cell::Cell<usize>>) {
    let (mut s, _) = listener.accept().await.unwrap();
    let mut buf = Vec::new();
    loop {
        let mut chunk = [0u8; 4096];
        let n = s.read(&mut chunk).await.unwrap_or(0);
        if n == 0 {
            return;
        }
        reads.set(reads.get() + 1);
        buf.extend_from_slice(&chunk[..n]);
        // whole commands: *2 $3 GET $n key
        while let Some(end) = command_end(&buf) {
            let cmd: Vec<u8> = buf.drain(..end).collect();
            let text = String::from_utf8_lossy(&cmd);
            let key = text.split("\r\n").nth(4).unwrap().to_string();
            if key == "close" {
                return;
            }
            if key.starts_with("slow") {
                tokio::time::sleep(Duration::from_millis(300)).await;
            }
            let val: String = match key.len() {
                0..=64 => key.chars().rev().collect(),
                n => n.to_string(),
            };
            for b in format!("${}\r\n{val}\r\n", val.len()).bytes() {
                s.write_all(&[b]).await.unwrap();
            }
        }
    }
}

/// Where the first whole command in `buf` ends: `*2 $3 GET $n` and then
/// the key's `n` bytes and CRLF (found without reading the key, which may
/// be megabytes long).
fn command_end(buf: &[u8]) -> Option<usize> {
    let mut at = 0;
    let mut last = &buf[..0];
    for _ in 0..4 {
        let end = at + buf[at..].windows(2).position(|w| w == b"\r\n")?;
        last = &buf[at..end];
        at = end + 2;
    }
    let n: usize = std::str::from_utf8(&last[1..]).ok()?.parse().ok()?;
    (buf.len() >= at + n + 2).then_some(at + n + 2)
}

fn run(test: impl std::future::Future<Output = ()>) {
    crate::testing::runtime().block_on(test);
}

async fn pipe_and_server() -> (
    Rc<Pipe>,
    impl std::future::Future<Output = ()>,
    Rc<std::cell::Cell<usize>>,
) {
    pipe_and_server_receiving(None, Duration::from_secs(5)).await
}

/// A pipe to a [`fake_server`] whose socket receives `rcvbuf` bytes at a
/// time, each call on it bounded by `limit`.
async fn pipe_and_server_receiving(
    rcvbuf: Option<u32>,
    limit: Duration,
) -> (
    Rc<Pipe>,
    impl std::future::Future<Output = ()>,
    Rc<std::cell::Cell<usize>>,
) {
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    if let Some(n) = rcvbuf {
        socket.set_recv_buffer_size(n).unwrap();
    }
    socket.bind("127.0.0.1:0".parse().unwrap()).unwrap();
    let listener = socket.listen(8).unwrap();
    let port = listener.local_addr().unwrap().port();
    let reads = Rc::new(std::cell::Cell::new(0));
    let server = fake_server(listener, reads.clone());
    let connect = Pipe::connect(("127.0.0.1", port), None, None, 0, Duration::from_secs(5), limit);
    (connect.await.unwrap(), server, reads)
}

async fn get(p: &Pipe, key: &str) -> Result<Reply, Broken> {
    p.call(&[b"GET", key.as_bytes()]).await
}

/// A GET of one of `sharers` sessions, started now.
async fn get_of(p: &Pipe, key: &str, sharers: usize) -> Result<Reply, Failed> {
    p.send(&args(&[b"GET", key.as_bytes()]), sharers, CallTimer::now()).unwrap().await
}

#[test]
fn calls_in_flight_together_go_out_in_one_write_and_get_their_own_replies() {
    run(async {
        let (p, server, reads) = pipe_and_server().await;
        let client = async {
            let keys: Vec<String> = (0..16).map(|i| format!("key{i}")).collect();
            let replies = futures_util::future::join_all(keys.iter().map(|k| get(&p, k))).await;
            for (k, r) in keys.iter().zip(replies) {
                let want: String = k.chars().rev().collect();
                assert_eq!(r, Ok(Reply::Bulk(want.into_bytes())));
            }
            assert!(reads.get() < 16, "{} reads for 16 commands", reads.get());
            drop(p);
        };
        tokio::join!(server, client);
    });
}

#[test]
fn the_command_that_makes_a_batch_whole_writes_it_without_waiting_for_the_first() {
    run(async {
        let (p, server, reads) = pipe_and_server().await;
        let client = async {
            let wakes = std::sync::Arc::new(Wakes::default());
            let waker = futures_util::task::waker(wakes.clone());
            let mut cx = std::task::Context::from_waker(&waker);
            // three sessions share the pipe: the third command makes the batch
            let mut calls: Vec<_> = ["one", "two", "six"]
                .iter()
                .map(|k| Box::pin(p.send(&args(&[b"GET", k.as_bytes()]), 3, CallTimer::now()).unwrap()))
                .collect();
            assert!(calls[0].as_mut().poll(&mut cx).is_pending());
            assert_eq!(wakes.0.load(Ordering::SeqCst), 1, "the first yields to write later");
            assert!(calls[1].as_mut().poll(&mut cx).is_pending());
            assert!(!p.st.borrow().out.is_empty() || collects(&p), "not written yet");
            assert!(calls[2].as_mut().poll(&mut cx).is_pending());
            assert!(p.st.borrow().out.is_empty() && !collects(&p), "all three written");
            assert!(p.st.borrow().flusher.is_none(), "the first has nothing left to write");
            // the server gets them without the first polled again
            for _ in 0..100 {
                if reads.get() > 0 {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            assert!(reads.get() > 0, "the server read the batch");
            let all = futures_util::future::join_all(calls);
            let replies = tokio::time::timeout(Duration::from_secs(5), all).await.unwrap();
            let want: Vec<_> = ["eno", "owt", "xis"]
                .iter()
                .map(|v| Ok(Reply::Bulk(v.as_bytes().to_vec())))
                .collect();
            assert_eq!(replies, want);
            drop(p);
        };
        tokio::join!(server, client);
    });
}

#[test]
fn an_abandoned_call_keeps_its_place_and_the_next_gets_its_own_reply() {
    run(async {
        let (p, server, _) = pipe_and_server().await;
        let client = async {
            let late = tokio::time::timeout(Duration::from_millis(50), get(&p, "slow1")).await;
            assert!(late.is_err(), "the slow call timed out");
            // its reply is still coming; this one must not get it
            assert_eq!(get(&p, "abc").await, Ok(Reply::Bulk(b"cba".to_vec())));
            let (a, b) = tokio::join!(
                tokio::time::timeout(Duration::from_millis(50), get(&p, "slow2")),
                get(&p, "xy")
            );
            assert!(a.is_err());
            assert_eq!(b, Ok(Reply::Bulk(b"yx".to_vec())));
            drop(p);
        };
        tokio::join!(server, client);
    });
}

#[test]
fn calls_past_the_pipes_limit_are_late_and_the_replies_after_theirs_reach_their_owners() {
    run(async {
        // the server answers a "slow" key after 300 ms
        let limit = Duration::from_millis(150);
        let (p, server, _) = pipe_and_server_receiving(None, limit).await;
        let client = async {
            // in one batch: one of them reads for both, and tells the other it is late
            let (a, b) = tokio::join!(get_of(&p, "slow1", 2), get_of(&p, "abc", 2));
            assert_eq!((a, b), (Err(Failed::Late(limit)), Err(Failed::Late(limit))));
            assert!(p.st.borrow().broken.is_none(), "the connection stays");
            // their replies come at 300 ms, and are dropped when read: the
            // next calls (sent after them, each well within its limit) get their own
            tokio::time::sleep(Duration::from_millis(250)).await;
            assert_eq!(get_of(&p, "xy", 1).await, Ok(Reply::Bulk(b"yx".to_vec())));
            assert_eq!(get_of(&p, "zw", 1).await, Ok(Reply::Bulk(b"wz".to_vec())));
            let st = p.st.borrow();
            assert!(st.slots.is_empty(), "no call's place is left behind");
            drop(st);
            drop(p);
        };
        tokio::join!(server, client);
    });
}

#[test]
fn each_call_is_late_at_its_own_deadline_not_at_an_earlier_calls() {
    run(async {
        let limit = Duration::from_millis(150);
        let (p, server, _) = pipe_and_server_receiving(None, limit).await;
        let client = async {
            // "slow1" (answered at 300 ms) is late at 150; "abc", sent at 270
            // behind it, is answered right after it, before its own deadline (420)
            let later = async {
                tokio::time::sleep(Duration::from_millis(270)).await;
                get_of(&p, "abc", 2).await
            };
            let (slow, abc) = tokio::join!(get_of(&p, "slow1", 2), later);
            assert_eq!(slow, Err(Failed::Late(limit)));
            assert_eq!(abc, Ok(Reply::Bulk(b"cba".to_vec())));
            drop(p);
        };
        tokio::join!(server, client);
    });
}

/// Counts its wakes.
#[derive(Default)]
struct Wakes(std::sync::atomic::AtomicUsize);

impl futures_util::task::ArcWake for Wakes {
    fn wake_by_ref(this: &std::sync::Arc<Self>) {
        this.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    }
}

#[test]
fn a_call_gone_before_its_write_leaves_the_write_to_one_still_waiting() {
    run(async {
        let (p, server, _) = pipe_and_server().await;
        let client = async {
            // the first appends and yields to write later; the second waits for that write
            let mut first = Box::pin(get(&p, "one"));
            let mut second = Box::pin(get(&p, "two"));
            let wakes = std::sync::Arc::new(Wakes::default());
            let waker = futures_util::task::waker(wakes.clone());
            let mut cx = std::task::Context::from_waker(&waker);
            assert!(first.as_mut().poll(&mut cx).is_pending());
            let before = wakes.0.load(std::sync::atomic::Ordering::SeqCst);
            assert!(second.as_mut().poll(&mut cx).is_pending());
            assert_eq!(
                wakes.0.load(std::sync::atomic::Ordering::SeqCst),
                before,
                "the second waits"
            );
            drop(first);
            // the second is woken to write in its place
            assert_eq!(
                wakes.0.load(std::sync::atomic::Ordering::SeqCst),
                before + 1
            );
            let r = tokio::time::timeout(Duration::from_secs(5), second).await;
            assert_eq!(
                r.expect("the second wrote both"),
                Ok(Reply::Bulk(b"owt".to_vec()))
            );
            // the first's reply went nowhere: the next call gets its own
            assert_eq!(get(&p, "abc").await, Ok(Reply::Bulk(b"cba".to_vec())));
            drop(p);
        };
        tokio::join!(server, client);
    });
}

#[test]
fn a_closed_connection_fails_every_waiting_call_and_the_next() {
    run(async {
        let (p, server, _) = pipe_and_server().await;
        let client = async {
            let (a, b) = tokio::join!(get(&p, "close"), get(&p, "after"));
            assert!(a.is_err() && b.is_err(), "{a:?} {b:?}");
            assert!(get(&p, "again").await.is_err());
        };
        tokio::join!(server, client);
    });
}

#[test]
fn a_thread_shares_a_pipe_among_at_most_pipeline_sessions() {
    run(async {
        let (p, server, _) = pipe_and_server().await;
        offer(7, &p);
        let a = shared(7, 3).expect("room for a second session");
        let b = shared(7, 3).expect("and a third");
        assert!(Rc::ptr_eq(&a, &b));
        assert!(shared(7, 3).is_none(), "three sessions fill it");
        assert!(
            shared(8, 3).is_none(),
            "another binding's pipe is not shared"
        );
        drop((a, b, p));
        assert!(shared(7, 3).is_none(), "a pipe nobody holds is forgotten");
        server.await;
    });
}

#[test]
fn the_pipes_of_a_thread_share_their_input_and_reply_buffers() {
    run(async {
        let (a, server_a, _) = pipe_and_server().await;
        let (b, server_b, _) = pipe_and_server().await;
        let client = async {
            let Ok(Reply::Bulk(v)) = get(&a, "first").await else {
                panic!("a bulk reply")
            };
            assert_eq!(v, b"tsrif");
            let at = v.as_ptr();
            a.recycle(v);
            // replies come a byte per write: most reads end inside a reply,
            // whose start the pipe keeps until the rest arrives
            let Ok(Reply::Bulk(w)) = get(&b, "other").await else {
                panic!("a bulk reply")
            };
            assert_eq!(w, b"rehto");
            assert_eq!(w.as_ptr(), at, "b's reply landed in the buffer a gave back");
            assert_eq!(get(&a, "again").await, Ok(Reply::Bulk(b"niaga".to_vec())));
            drop((a, b));
        };
        tokio::join!(server_a, server_b, client);
    });
}

/// This thread's output holds the commands of `pipe` now.
fn collects(pipe: &Pipe) -> bool {
    let id = pipe.st.borrow().id;
    with_scratch(|s| s.owner == Some(id)).unwrap()
}

#[test]
fn a_pipe_collects_in_the_thread_output_until_it_writes_and_keeps_its_order() {
    run(async {
        // the server reads a few KB at a time, and nothing while it sleeps
        let (a, server_a, _) = pipe_and_server_receiving(Some(4096), Duration::from_secs(5)).await;
        let (b, server_b, _) = pipe_and_server().await;
        let client = async {
            let waker = futures_util::task::noop_waker();
            let mut cx = std::task::Context::from_waker(&waker);
            let mut slow = Box::pin(get(&a, "slow0"));
            assert!(slow.as_mut().poll(&mut cx).is_pending());
            assert!(collects(&a), "a's first command went to the thread's output");
            assert!(slow.as_mut().poll(&mut cx).is_pending(), "written, waiting");
            assert!(!collects(&a), "the write freed the thread's output");
            tokio::time::sleep(Duration::from_millis(50)).await;
            // the server sleeps on slow0: 8 MB cannot all go out now
            let key = "k".repeat(8 << 20);
            let mut big = Box::pin(get(&a, &key));
            assert!(big.as_mut().poll(&mut cx).is_pending());
            assert!(big.as_mut().poll(&mut cx).is_pending());
            assert!(!collects(&a), "a partial write frees the thread's output");
            assert!(!a.st.borrow().out.is_empty(), "the rest waits in a's own");
            // the server wakes and drains its socket: the next write takes
            // the rest and a's newer command together, the rest first
            tokio::time::sleep(Duration::from_millis(400)).await;
            // b's command while a collects goes to b's own
            let mut after = Box::pin(get(&a, "after"));
            assert!(after.as_mut().poll(&mut cx).is_pending());
            assert!(collects(&a));
            let mut other = Box::pin(get(&b, "other"));
            assert!(other.as_mut().poll(&mut cx).is_pending());
            assert!(collects(&a) && !b.st.borrow().out.is_empty());
            let all = async { tokio::join!(slow, big, after, other) };
            let (r1, r2, r3, r4) = tokio::time::timeout(Duration::from_secs(20), all)
                .await
                .expect("every reply within 20 s");
            assert_eq!(r1, Ok(Reply::Bulk(b"0wols".to_vec())));
            assert_eq!(r2, Ok(Reply::Bulk((8 << 20).to_string().into_bytes())));
            assert_eq!(r3, Ok(Reply::Bulk(b"retfa".to_vec())));
            assert_eq!(r4, Ok(Reply::Bulk(b"rehto".to_vec())));
            assert!(!collects(&a) && !collects(&b));
            drop((a, b));
        };
        tokio::join!(server_a, server_b, client);
    });
}
